package io.yarpc.examples.keyvalue;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * The keyvalue example, implemented as a plain grpc-java service ({@code KeyValueGrpc.KeyValueImplBase}).
 * Nothing in it knows about YARPC: the protobuf encoding serves it over every transport of a dispatcher.
 *
 * <ul>
 *   <li>{@code GetValue} of a missing key fails with {@code NOT_FOUND} carrying a {@code google.rpc.Status}
 *       with an {@code ErrorInfo} detail;
 *   <li>{@code Watch} sends the current value (empty when unset), then every change, until the client
 *       cancels.
 * </ul>
 */
public final class KeyValueService extends KeyValueGrpc.KeyValueImplBase {
  private final Map<String, String> values = new ConcurrentHashMap<>();
  private final Map<String, Set<StreamObserver<GetValueResponse>>> watchers =
      new ConcurrentHashMap<>();

  @Override
  public void getValue(GetValueRequest request, StreamObserver<GetValueResponse> response) {
    String value = values.get(request.getKey());
    if (value == null) {
      response.onError(
          StatusProto.toStatusRuntimeException(
              com.google.rpc.Status.newBuilder()
                  .setCode(io.grpc.Status.Code.NOT_FOUND.value())
                  .setMessage("no value for key \"" + request.getKey() + "\"")
                  .addDetails(
                      Any.pack(
                          ErrorInfo.newBuilder()
                              .setReason("KEY_NOT_FOUND")
                              .setDomain("keyvalue.examples.yarpc")
                              .putMetadata("key", request.getKey())
                              .build()))
                  .build()));
      return;
    }
    response.onNext(GetValueResponse.newBuilder().setValue(value).build());
    response.onCompleted();
  }

  @Override
  public void setValue(SetValueRequest request, StreamObserver<SetValueResponse> response) {
    values.put(request.getKey(), request.getValue());
    GetValueResponse change = GetValueResponse.newBuilder().setValue(request.getValue()).build();
    for (StreamObserver<GetValueResponse> watcher :
        watchers.getOrDefault(request.getKey(), Set.of())) {
      try {
        synchronized (watcher) {
          watcher.onNext(change);
        }
      } catch (RuntimeException e) {
        unwatch(request.getKey(), watcher); // the watcher went away
      }
    }
    response.onNext(SetValueResponse.getDefaultInstance());
    response.onCompleted();
  }

  @Override
  public void watch(WatchRequest request, StreamObserver<GetValueResponse> response) {
    String key = request.getKey();
    if (response instanceof ServerCallStreamObserver) {
      ((ServerCallStreamObserver<GetValueResponse>) response)
          .setOnCancelHandler(() -> unwatch(key, response));
    }
    watchers.computeIfAbsent(key, k -> new CopyOnWriteArraySet<>()).add(response);
    synchronized (response) {
      response.onNext(GetValueResponse.newBuilder().setValue(values.getOrDefault(key, "")).build());
    }
  }

  private void unwatch(String key, StreamObserver<GetValueResponse> watcher) {
    Set<StreamObserver<GetValueResponse>> set = watchers.get(key);
    if (set != null) {
      set.remove(watcher);
    }
  }
}

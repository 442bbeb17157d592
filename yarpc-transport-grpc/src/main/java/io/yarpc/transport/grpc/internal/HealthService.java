package io.yarpc.transport.grpc.internal;

import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * {@code grpc.health.v1.Health} for one gRPC inbound, following the gRPC health checking protocol.
 *
 * <p>One status for everything: {@code SERVING} while {@link #setServing serving}, else {@code
 * NOT_SERVING}. It answers for the empty name (the whole server) and for every name the supplier gives
 * (the router's services, see {@link RegisteredServices}); {@code Check} of any other name fails with
 * {@code NOT_FOUND}, {@code Watch} of it sends {@code SERVICE_UNKNOWN} and keeps watching.
 *
 * <p>{@code Watch} sends the current status at once and then every change. Changes are pushed when the
 * serving state flips ({@link #setServing}); the set of names is read again at each push, so a name
 * registered after the watch began is reported (instead of {@code SERVICE_UNKNOWN}) with the next flip —
 * or on a new {@code Watch} or {@code Check}, which read the names afresh. A watcher never gets the same
 * status twice in a row. {@link #closeWatches} ends every watch (the inbound does it when it stops, so open
 * watches do not hold up its graceful shutdown).
 *
 * <p>Why not grpc-java's {@code HealthStatusManager}: it stores a status per name that someone must set
 * and clear; here both the status and the names are derived (from the inbound's state and the router,
 * which has no change events), so computing them at each call keeps {@code Check} exact without keeping a
 * copy of the router's names in step.
 *
 * <p>Thread-safe: calls arrive on grpc-java's threads, {@link #setServing} and {@link #closeWatches} on the
 * lifecycle's; each watcher's sends are serialised by its own lock.
 */
public final class HealthService extends HealthGrpc.HealthImplBase {
  private final Supplier<Set<String>> names;
  private final Set<Watcher> watchers = ConcurrentHashMap.newKeySet();
  private volatile boolean serving;
  private volatile Status closedWith; // set by closeWatches: watches that begin later end at once

  /** A health service answering for the empty name and the names {@code names} gives. */
  public HealthService(Supplier<Set<String>> names) {
    this.names = names;
  }

  /** Sets the status of every name, and tells every watcher whose status changed. */
  public void setServing(boolean serving) {
    this.serving = serving;
    for (Watcher w : watchers) {
      w.update();
    }
  }

  /** Whether the service reports {@code SERVING}. */
  public boolean isServing() {
    return serving;
  }

  /**
   * Ends every open watch with {@code status} (e.g. {@code UNAVAILABLE} when the server stops), and every
   * watch that begins from now on, after its first status.
   */
  public void closeWatches(Status status) {
    closedWith = status;
    for (Watcher w : watchers) {
      w.close(status);
    }
  }

  /** The status of {@code service}, or null when it is not a known name. */
  private ServingStatus statusOf(String service) {
    ServingStatus status = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    return service.isEmpty() || names.get().contains(service) ? status : null;
  }

  @Override
  public void check(HealthCheckRequest request, StreamObserver<HealthCheckResponse> response) {
    ServingStatus status = statusOf(request.getService());
    if (status == null) {
      response.onError(
          Status.NOT_FOUND
              .withDescription("unknown service " + request.getService())
              .asRuntimeException());
      return;
    }
    response.onNext(HealthCheckResponse.newBuilder().setStatus(status).build());
    response.onCompleted();
  }

  @Override
  public void watch(HealthCheckRequest request, StreamObserver<HealthCheckResponse> response) {
    ServerCallStreamObserver<HealthCheckResponse> call =
        (ServerCallStreamObserver<HealthCheckResponse>) response;
    Watcher w = new Watcher(request.getService(), call);
    call.setOnCancelHandler(
        () -> {
          w.cancelled();
          watchers.remove(w);
        });
    watchers.add(w);
    w.update();
    Status closing = closedWith;
    if (closing != null) {
      w.close(closing); // it began while the watches were being closed
    }
  }

  /** One open {@code Watch} call. */
  private final class Watcher {
    private final String service;
    private final ServerCallStreamObserver<HealthCheckResponse> call;
    private ServingStatus sent; // guarded by this
    private boolean closed; // guarded by this

    Watcher(String service, ServerCallStreamObserver<HealthCheckResponse> call) {
      this.service = service;
      this.call = call;
    }

    /** Sends the current status if it is not the last one sent. */
    synchronized void update() {
      if (closed) {
        return;
      }
      ServingStatus status = statusOf(service);
      if (status == null) {
        status = ServingStatus.SERVICE_UNKNOWN;
      }
      if (status != sent) {
        sent = status;
        call.onNext(HealthCheckResponse.newBuilder().setStatus(status).build());
      }
    }

    synchronized void cancelled() {
      closed = true;
    }

    void close(Status status) {
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        call.onError(status.asRuntimeException());
      }
      watchers.remove(this);
    }
  }
}

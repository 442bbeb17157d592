package io.yarpc.examples.gateway;

import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A gateway whose handler calls a downstream service, showing the deadline travel with the call:
 *
 * <pre>
 *   client --HTTP, timeout T--> gateway "profile" --gRPC, no timeout given--> users "lookup"
 * </pre>
 *
 * The gateway's handler calls {@code users} with {@link CallOptions#DEFAULT}: the outbound call inherits
 * what is left of the gateway's own deadline (from {@link Call#current()}), and is cancelled with it. Each
 * service reports the time it had left; when {@code users} is too slow, the client's deadline passes, the
 * gateway's call and with it the downstream call are cancelled, and {@code users} sees its call end.
 *
 * <p>Run: {@code java -cp examples/target/yarpc-examples.jar io.yarpc.examples.gateway.GatewayExample}
 */
public final class GatewayExample {
  private GatewayExample() {}

  /** The request of both procedures. */
  public static final class ProfileRequest {
    /** The user to look up. */
    public String user;

    /** When true, {@code users} waits until its call is cancelled. */
    public boolean slow;

    ProfileRequest(String user, boolean slow) {
      this.user = user;
      this.slow = slow;
    }
  }

  /** The response of both procedures: what each hop had left of the deadline when its handler began. */
  public static final class ProfileResponse {
    /** The user's display name. */
    public String name;

    /** Milliseconds the gateway had left. */
    public long gatewayRemainingMillis;

    /** Milliseconds {@code users} had left. */
    public long usersRemainingMillis;
  }

  /** What the example observed. */
  public record Observed(
      long clientTimeoutMillis,
      ProfileResponse fast,
      YarpcException slowError,
      String usersSawOnSlowCall) {}

  /** Starts both services, calls the gateway twice, prints what each hop saw. */
  public static void main(String[] args) throws InterruptedException {
    Observed o = run();
    System.out.printf(
        "client timeout %d ms -> gateway had %d ms left -> users had %d ms left: %s%n",
        o.clientTimeoutMillis(),
        o.fast().gatewayRemainingMillis,
        o.fast().usersRemainingMillis,
        o.fast().name);
    System.out.println(
        "slow users, client sees -> " + o.slowError().code() + ": " + o.slowError().getMessage());
    System.out.println("slow users, users saw   -> " + o.usersSawOnSlowCall());
  }

  /** The example; returns what it observed (for tests). */
  public static Observed run() throws InterruptedException {
    CountDownLatch slowCallEnded = new CountDownLatch(1);
    String[] usersSaw = {"nothing"};

    // users: the downstream service, over gRPC.
    GrpcTransport usersTransport = GrpcTransport.create();
    GrpcInbound usersInbound = usersTransport.inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher users = Dispatcher.builder("users").inbound(usersInbound).build();
    users.register(
        Json.procedure(
            "lookup",
            ProfileRequest.class,
            request -> {
              Call call = Call.current();
              ProfileResponse response = new ProfileResponse();
              response.usersRemainingMillis = call.deadline().remainingMillis();
              if (request
                  .slow) { // wait until the call is cancelled (its deadline passes, or the caller
                // gives up)
                CompletableFuture<Void> cancelled = new CompletableFuture<>();
                call.onCancel(() -> cancelled.complete(null));
                cancelled.completeOnTimeout(null, 10, TimeUnit.SECONDS).join();
                usersSaw[0] =
                    call.isCancelled()
                        ? "its call ended: " + call.cancellation().code()
                        : "no cancellation";
                slowCallEnded.countDown();
              }
              response.name = "Ada Lovelace (" + request.user + ")";
              return response;
            }));
    users.start();

    // gateway: serves HTTP, calls users over gRPC.
    HttpTransport gatewayHttp = HttpTransport.create();
    HttpInbound gatewayInbound = gatewayHttp.inbound();
    GrpcTransport gatewayGrpc = GrpcTransport.create();
    GrpcOutbound toUsers = gatewayGrpc.singleOutbound("127.0.0.1:" + usersInbound.port());
    Dispatcher gateway =
        Dispatcher.builder("gateway")
            .inbound(gatewayInbound)
            .outbound("users", Outbounds.unary(toUsers))
            .build();
    JsonClient usersClient = JsonClient.of(gateway.clientConfig("users"));
    gateway.register(
        Json.procedure(
            "profile",
            ProfileRequest.class,
            request -> {
              long left = Call.current().deadline().remainingMillis();
              // No timeout here: the call inherits the rest of this call's deadline.
              ProfileResponse response =
                  usersClient
                      .call("lookup", request, ProfileResponse.class, CallOptions.DEFAULT)
                      .join();
              response.gatewayRemainingMillis = left;
              return response;
            }));
    gateway.start();

    HttpTransport clientHttp = HttpTransport.create();
    Dispatcher client =
        Dispatcher.builder("profile-client")
            .outbound(
                "gateway", Outbounds.unary(clientHttp.singleOutbound(gatewayInbound.hostPort())))
            .build();
    client.start();
    try {
      JsonClient gatewayClient = JsonClient.of(client.clientConfig("gateway"));
      Duration timeout = Duration.ofMillis(800);
      ProfileResponse fast = null;
      for (int i = 0; i < 2; i++) { // the first call also connects every hop: report the second
        fast =
            gatewayClient
                .call(
                    "profile",
                    new ProfileRequest("ada", false),
                    ProfileResponse.class,
                    CallOptions.timeout(timeout))
                .join();
      }

      YarpcException slowError = null;
      CompletableFuture<ProfileResponse> slow =
          gatewayClient.call(
              "profile",
              new ProfileRequest("ada", true),
              ProfileResponse.class,
              CallOptions.timeout(Duration.ofMillis(300)));
      try {
        slow.join();
      } catch (CompletionException e) {
        slowError = YarpcException.from(e);
      }
      slowCallEnded.await(10, TimeUnit.SECONDS);
      return new Observed(timeout.toMillis(), fast, slowError, usersSaw[0]);
    } finally {
      client.stop();
      gateway.stop();
      users.stop();
    }
  }
}

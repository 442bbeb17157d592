package io.yarpc.transport;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbound call path every transport takes once it has decoded a call's metadata, so that no transport
 * repeats it: routing (validation and {@code unimplemented} for unknown services and procedures, from the
 * {@link Router}), the call-type check, the inbound's {@link DeadlinePolicy}, and a guarded handler call.
 * What the dispatcher's handlers do next (draining, {@code missing TTL}, the deadline timer, executors,
 * errors) is the dispatcher's. For transport authors: see {@link Inbound}.
 *
 * <p>Stateless and thread-safe; called on the transport's I/O threads.
 */
public final class InboundCalls {
  private static final Logger log = LoggerFactory.getLogger(InboundCalls.class);

  private InboundCalls() {}

  /** A routed call: its handler and its metadata with the deadline the policy gave it. */
  public record Routed(HandlerSpec spec, RequestMeta meta) {}

  /**
   * Routes a call that arrived over {@code transport}, which serves the handler types in {@code handled}
   * (the wire does not say which type the call is: the handler decides, as on HTTP and gRPC).
   *
   * @throws YarpcException {@code invalid-argument} for missing metadata, {@code unimplemented} for an
   *     unknown service or procedure, or {@code transport T does not handle X handlers}
   */
  public static Routed route(
      Router router,
      RequestMeta meta,
      String transport,
      Set<RpcType> handled,
      DeadlinePolicy policy) {
    return route(router, meta, transport, handled, policy, null);
  }

  /**
   * As {@link #route(Router, RequestMeta, String, Set, DeadlinePolicy)}, with an error the transport found
   * while decoding the metadata that yarpc-go reports after routing and before the call-type check
   * ({@code decodeError}, null for none; HTTP's unparsable {@code Context-TTL-MS}).
   */
  public static Routed route(
      Router router,
      RequestMeta meta,
      String transport,
      Set<RpcType> handled,
      DeadlinePolicy policy,
      YarpcException decodeError) {
    HandlerSpec spec = choose(router, meta);
    if (decodeError != null) {
      throw decodeError;
    }
    if (!handled.contains(spec.type())) {
      throw YarpcException.of(
          Code.UNIMPLEMENTED, "transport %s does not handle %s handlers", transport, spec.type());
    }
    return new Routed(spec, policy.apply(meta, spec.type()));
  }

  /**
   * Routes a call whose type the wire says ({@code callType}): the procedure must be of that type.
   *
   * @throws YarpcException as {@link #route(Router, RequestMeta, String, Set, DeadlinePolicy)}, or {@code
   *     unimplemented} {@code procedure "P" of service "S" is a X procedure and cannot serve a Y call}
   */
  public static Routed route(
      Router router, RequestMeta meta, RpcType callType, DeadlinePolicy policy) {
    HandlerSpec spec = choose(router, meta);
    if (spec.type() != callType) {
      throw YarpcException.of(
          Code.UNIMPLEMENTED,
          "procedure \"%s\" of service \"%s\" is a %s procedure and cannot serve a %s call",
          meta.procedure(),
          meta.service(),
          spec.type(),
          callType);
    }
    return new Routed(spec, policy.apply(meta, spec.type()));
  }

  /**
   * {@code handler}'s future for {@code input}. A handler that throws or returns no future gives a failed
   * one ({@code internal} {@code handler returned no future} for the latter), and then — only then —
   * {@code notHandedOn} runs (release the request body there): the handler never took the input. A
   * handler that returned a future owns the input until that future completes, even when it completes at
   * once. The dispatcher's handlers never throw or return null; this guards routers of others.
   */
  public static <I, O> CompletableFuture<O> handle(
      Handler<I, O> handler, I input, Runnable notHandedOn) {
    CompletableFuture<O> f;
    try {
      f = handler.handle(input);
    } catch (RuntimeException | Error e) {
      notHandedOn.run();
      return CompletableFuture.failedFuture(e);
    }
    if (f == null) {
      notHandedOn.run();
      return CompletableFuture.failedFuture(
          YarpcException.of(Code.INTERNAL, "handler returned no future"));
    }
    return f;
  }

  /**
   * The error of a unary or oneway call that has no deadline once its inbound's policy was applied:
   * {@code invalid-argument} {@code missing TTL}, as yarpc-go answers it; null when the call may go on.
   * The dispatcher's handlers apply it; an inbound that must answer before the handler runs (HTTP
   * acknowledges a oneway call at once) asks it first.
   */
  public static YarpcException missingDeadline(RequestMeta meta, RpcType type) {
    return type != RpcType.STREAMING && meta.deadline() == null
        ? YarpcException.of(Code.INVALID_ARGUMENT, "missing TTL")
        : null;
  }

  /**
   * {@code router.choose(meta)}; a router's unexpected exception (not a {@link YarpcException}) is logged
   * and becomes {@code unknown}, as a handler's does, without its text, which stays on the server.
   */
  private static HandlerSpec choose(Router router, RequestMeta meta) {
    try {
      return router.choose(meta);
    } catch (YarpcException e) {
      throw e;
    } catch (RuntimeException e) {
      log.warn(
          "router {} failed to route procedure \"{}\" of service \"{}\"",
          router,
          meta.procedure(),
          meta.service(),
          e);
      throw YarpcException.withCause(
          Code.UNKNOWN,
          String.format(
              "failed to route procedure \"%s\" of service \"%s\" (the server logged why)",
              meta.procedure(), meta.service()),
          e);
    }
  }

  /**
   * For an inbound that acknowledges oneway calls: whether the dispatcher refused the call before its
   * handler ran, so the caller must get the error instead of an acknowledgement. The dispatcher answers a
   * call it will not run with an already failed future carrying {@code unavailable} (it is stopping) or
   * {@code resource-exhausted} (the procedure is at its concurrency limit, or the handler executor is
   * full); that error is returned. Any other outcome, including a handler that failed at once, is the
   * handler's business: the call was accepted, and null is returned.
   */
  public static YarpcException onewayRefusal(CompletableFuture<Void> handled) {
    if (handled == null || !handled.isCompletedExceptionally()) {
      return null;
    }
    try {
      handled.join();
      return null;
    } catch (RuntimeException e) {
      YarpcException error = YarpcException.from(e);
      return error.code() == Code.UNAVAILABLE || error.code() == Code.RESOURCE_EXHAUSTED
          ? error
          : null;
    }
  }
}

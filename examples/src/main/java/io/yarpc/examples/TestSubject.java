package io.yarpc.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.JsonElement;
import io.yarpc.Call;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The crossdock-style procedures of the {@code yarpc-test} interop subject (besides the protobuf
 * services): json {@code echo}, raw {@code echo/raw}, raw {@code sleep/raw}, raw {@code
 * waitfortimeout/raw} and json {@code unexpected-error}.
 */
final class TestSubject {
  private TestSubject() {}

  /** The procedures, ready to register. */
  static List<Procedure> procedures() {
    return List.of(
        // json echo: returns the request body; response headers = the request's application headers
        Json.procedure(
            "echo",
            JsonElement.class,
            body -> {
              echoHeaders();
              return body;
            }),
        Raw.procedure(
            "echo/raw",
            body -> {
              echoHeaders();
              return body;
            }),
        // sleeps the number of milliseconds in the body (ASCII), then returns it
        Raw.procedure(
            "sleep/raw",
            body -> {
              long millis;
              try {
                millis = Long.parseLong(new String(body, UTF_8).trim());
              } catch (NumberFormatException e) {
                throw YarpcException.of(
                    Code.INVALID_ARGUMENT,
                    "sleep/raw wants a number of milliseconds, got %s",
                    new String(body, UTF_8));
              }
              awaitCancellation(millis);
              return body;
            }),
        // waits until its deadline passes, then fails
        Raw.procedure(
            "waitfortimeout/raw",
            body -> {
              Deadline deadline = Call.current().deadline();
              awaitCancellation(deadline == null ? 0 : deadline.remainingMillis() + 1);
              Call call = Call.current();
              throw call.isCancelled()
                  ? call.cancellation()
                  : YarpcException.of(
                      Code.DEADLINE_EXCEEDED, "call to procedure \"waitfortimeout/raw\" timed out");
            }),
        Json.procedure(
            "unexpected-error",
            JsonElement.class,
            body -> {
              throw new IllegalStateException("error");
            }));
  }

  private static void echoHeaders() {
    Call call = Call.current();
    call.meta().headers().forEachOriginal(call::setResponseHeader);
  }

  /** Sleeps up to {@code millis}, waking early when the call is cancelled or times out. */
  @SuppressWarnings("try") // the registration is only closed
  private static void awaitCancellation(long millis) throws InterruptedException {
    CountDownLatch cancelled = new CountDownLatch(1);
    try (AutoCloseable registration = Call.current().onCancel(cancelled::countDown)) {
      cancelled.await(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}

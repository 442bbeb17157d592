package io.yarpc.examples;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.ErrorDetailsProto;
import io.yarpc.config.ConfigException;
import io.yarpc.encoding.protobuf.ProtobufErrors;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The {@code call} command, a small yab: one unary call to a YARPC service over any transport, in any
 * encoding ({@link CallRequest}), through one peer, a peer list over static peers, a file or DNS, or an
 * outbound of a configuration file ({@link CallClient}); with {@code --requests} or {@code --duration},
 * a benchmark of many such calls ({@link Benchmark}, {@link BenchmarkReport}).
 *
 * <p>One call's success prints {@code {"body": ..., "headers": {...}}} on standard output and returns 0.
 * A failed call prints {@code Error: code:<code> [name:<name>] message:<message>} and any {@code
 * google.rpc.Status} details on standard error and returns 1. A benchmark prints its report on standard
 * output and returns 0 when every call succeeded, else 1. A bad command line returns 2.
 */
final class CallCommand implements Command {
  static final FlagSet FLAGS =
      new FlagSet(
              "call",
              "[flags] [BODY]",
              String.join(
                  "\n",
                  "Makes one unary call and prints the response body and headers as JSON, or the error",
                  "(exit status 1). With --requests or --duration, makes the call again and again and",
                  "prints calls/s, errors by code, latency percentiles and calls per peer (yab's",
                  "benchmark mode). BODY is raw text, JSON, or for --encoding proto the request in proto3",
                  "JSON (the keyvalue and echo services' messages are known)."))
          .group("the call", CallRequest.FLAGS)
          .group("where it goes (or --config)", ClientDocument.FLAGS)
          .group(ClientDocument.PEERS_GROUP, ClientDocument.PEER_FLAGS)
          .group(TlsFlags.GROUP + " (any of them turns it on)", TlsFlags.CALL)
          .group(CallClient.CONFIG_GROUP, CallClient.CONFIG_FLAGS)
          .group("benchmark", Benchmark.FLAGS);

  private static final JsonFormat.TypeRegistry ERROR_DETAIL_TYPES =
      JsonFormat.TypeRegistry.newBuilder()
          .add(ErrorDetailsProto.getDescriptor().getMessageTypes())
          .build();

  private final Function<String, String> environment;

  private CallCommand(Function<String, String> environment) {
    this.environment = environment;
  }

  /** The command, {@code ${VAR}} in a {@code --config} file looked up in the environment. */
  static Command command() {
    return new CallCommand(System::getenv);
  }

  /** Runs the command; returns the exit status. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    return run(args, out, err, System::getenv);
  }

  /** Runs the command, {@code ${VAR}} in a {@code --config} file looked up with {@code environment}. */
  static int run(
      String[] args, PrintStream out, PrintStream err, Function<String, String> environment) {
    try {
      return Command.execute(new CallCommand(environment), args, out, err);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("call: interrupted");
      return 1;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public FlagSet flags() {
    return FLAGS;
  }

  @Override
  public int run(Flags flags, PrintStream out, PrintStream err)
      throws Flags.UsageException, InterruptedException {
    CallRequest request = CallRequest.parse(flags);
    Benchmark.Plan plan = Benchmark.Plan.parse(flags);
    CallClient client;
    try {
      client = CallClient.create(flags, environment);
    } catch (ConfigException | UncheckedIOException e) {
      err.println("call: " + e.getMessage());
      return 2;
    }
    try {
      client.start();
      if (plan == null) {
        return call(client, request, out, err);
      }
      Benchmark.Result result =
          Benchmark.run(client.clientConfig(), request, plan, client.counts()::reset);
      new BenchmarkReport(plan, result, client.counts(), client.chooser()).print(out);
      return result.errorCount() == 0 ? 0 : 1;
    } catch (RuntimeException e) {
      err.println("Error: " + YarpcException.describe(e));
      return 1;
    } finally {
      client.close();
    }
  }

  private static int call(
      CallClient client, CallRequest request, PrintStream out, PrintStream err) {
    Response response;
    try {
      response = client.clientConfig().call(request.newRequest()).join();
    } catch (CompletionException | CancellationException e) {
      printError(YarpcException.from(e), err);
      return 1;
    }
    try {
      if (response.isApplicationError()) {
        ApplicationErrorMeta meta = response.applicationErrorMeta();
        Code code = meta.code() == null ? Code.UNKNOWN : meta.code();
        String message = meta.details() == null ? "application error" : meta.details();
        printError(
            YarpcException.of(code, "%s", message).withName(meta.name()).withResponse(response),
            err);
        return 1;
      }
      JsonObject result = new JsonObject();
      result.add("body", request.responseBody(response.body()));
      if (!response.headers().isEmpty()) {
        JsonObject headers = new JsonObject();
        response.headers().forEach(headers::addProperty);
        result.add("headers", headers);
      }
      out.println(
          new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(result));
      return 0;
    } catch (IOException | RuntimeException e) {
      err.println("Error: cannot read the response body: " + YarpcException.describe(e));
      return 1;
    } finally {
      response.body().release();
    }
  }

  /** Prints the error and its status details; releases the response it carries. */
  private static void printError(YarpcException e, PrintStream err) {
    try {
      err.println("Error: " + e);
      Optional<com.google.rpc.Status> status = ProtobufErrors.status(e);
      if (status.isPresent() && status.get().getDetailsCount() > 0) {
        err.println("Details:");
        for (Any detail : status.get().getDetailsList()) {
          err.println("  " + printDetail(detail));
        }
      }
    } finally {
      if (e.response() != null) {
        e.response().body().release();
      }
    }
  }

  private static String printDetail(Any detail) {
    try {
      return JsonFormat.printer()
          .usingTypeRegistry(ERROR_DETAIL_TYPES)
          .omittingInsignificantWhitespace()
          .print(detail);
    } catch (InvalidProtocolBufferException e) {
      return detail.getTypeUrl() + " (" + detail.getValue().size() + " bytes)";
    }
  }
}

package io.yarpc.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.ErrorDetailsProto;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.config.ConfigException;
import io.yarpc.config.YarpcConfig;
import io.yarpc.encoding.protobuf.Protobuf;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.encoding.protobuf.ProtobufErrors;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.examples.echo.EchoOuterClass;
import io.yarpc.examples.keyvalue.Keyvalue;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import io.yarpc.transport.UnaryOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code call} command, a small yab: one unary call to a YARPC service over any transport, in any
 * encoding.
 *
 * <pre>
 * call --peer 127.0.0.1:8080 --transport http|grpc|tchannel --service S --procedure P
 *      --encoding raw|json|proto [--header k=v]... [--timeout 1s]
 *      [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-server-name NAME] BODY
 * call --config FILE --outbound NAME --procedure P --encoding raw|json|proto [--header k=v]...
 *      [--timeout 1s] BODY
 * </pre>
 *
 * Any {@code --tls-*} flag calls over TLS (HTTP: {@code https}); see {@link TlsFlags}. With {@code
 * --config}, the call goes through the outbound {@code NAME} of a yarpc configuration file ({@link
 * YarpcConfig}): its transport, peers, service name and the file's {@code transports} settings (TLS
 * included); the file's inbounds and other outbounds are left out. The timeout then also covers
 * connecting to the peer.
 *
 * <ul>
 *   <li>{@code raw}: BODY is sent as its UTF-8 bytes; the response body is printed as a string.
 *   <li>{@code json}: BODY is JSON text (default {@code {}}), sent as is; the response is printed as JSON.
 *   <li>{@code proto}: BODY is the request message in proto3 JSON (default {@code {}}); the procedure must
 *       be a unary method of a service the examples know ({@code yarpc.examples.keyvalue.KeyValue::...},
 *       {@code yarpc.examples.echo.Echo::Echo}). The message is sent in the binary encoding and the response
 *       printed as proto3 JSON.
 * </ul>
 *
 * Success prints {@code {"body": ..., "headers": {...}}} on standard output and returns 0. A failed call
 * prints {@code Error: code:<code> [name:<name>] message:<message>} and any {@code google.rpc.Status}
 * details on standard error and returns 1; a bad command line returns 2.
 */
final class CallCommand {
  private static final Set<String> FLAGS = flags();
  static final String USAGE =
      "usage: call --peer host:port --transport http|grpc|tchannel --service S"
          + " --procedure P --encoding raw|json|proto [--header k=v]... [--timeout 1s]"
          + " [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-server-name NAME] BODY\n"
          + "       call --config FILE --outbound NAME --procedure P --encoding raw|json|proto"
          + " [--header k=v]... [--timeout 1s] BODY";
  private static final String CALLER = "yarpc-call";
  private static final Duration CONNECT_WAIT = Duration.ofSeconds(5);

  /** The services whose messages {@code --encoding proto} can write and read. */
  private static final List<FileDescriptor> KNOWN_PROTOS =
      List.of(Keyvalue.getDescriptor(), EchoOuterClass.getDescriptor());

  private static final JsonFormat.TypeRegistry ERROR_DETAIL_TYPES =
      JsonFormat.TypeRegistry.newBuilder()
          .add(ErrorDetailsProto.getDescriptor().getMessageTypes())
          .build();

  private CallCommand() {}

  private static Set<String> flags() {
    Set<String> all =
        new java.util.HashSet<>(
            Set.of(
                "peer",
                "transport",
                "service",
                "procedure",
                "encoding",
                "header",
                "timeout",
                "config",
                "outbound"));
    all.addAll(TlsFlags.CALL);
    return Set.copyOf(all);
  }

  /** Runs the command; returns the exit status. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    return run(args, out, err, System::getenv);
  }

  /** Runs the command, {@code ${VAR}} in a {@code --config} file looked up with {@code environment}. */
  static int run(
      String[] args, PrintStream out, PrintStream err, Function<String, String> environment) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (Flags.UsageException e) {
      err.println("call: " + e.getMessage());
      err.println(USAGE);
      return 2;
    }
    if (options.config != null) {
      return runFromConfig(options, out, err, environment);
    }
    PeerTransport transport = transport(options.transport, options.tls);
    Dispatcher client =
        Dispatcher.builder(CALLER)
            .outbound(options.service, Outbounds.unary(outbound(transport, options.peerAddress())))
            .shutdownGracePeriod(Duration.ZERO)
            .build();
    try {
      client.start();
      awaitConnected(transport, options.peerAddress());
      return call(client.clientConfig(options.service), options, out, err);
    } catch (RuntimeException e) {
      err.println("Error: " + YarpcException.describe(e));
      return 1;
    } finally {
      client.stop();
    }
  }

  /**
   * The call through the outbound {@code --outbound} of the {@code --config} file: a client dispatcher
   * built from the file's {@code transports} and that one outbound.
   */
  private static int runFromConfig(
      Options o, PrintStream out, PrintStream err, Function<String, String> environment) {
    Dispatcher client;
    try {
      Map<String, Object> document = YarpcConfig.parse(o.config);
      Object outbounds = document.get("outbounds");
      if (!(outbounds instanceof Map) || !((Map<?, ?>) outbounds).containsKey(o.outbound)) {
        err.println(
            "call: "
                + o.config
                + " has no outbound \""
                + o.outbound
                + "\"; its outbounds: "
                + (outbounds instanceof Map ? ((Map<?, ?>) outbounds).keySet() : "none"));
        return 2;
      }
      Map<String, Object> only = new LinkedHashMap<>();
      only.put(o.outbound, ((Map<?, ?>) outbounds).get(o.outbound));
      Map<String, Object> clientDocument = new LinkedHashMap<>(); // not the server's metrics, logs
      if (document.containsKey("transports")) {
        clientDocument.put("transports", document.get("transports"));
      }
      clientDocument.put("outbounds", only);
      client =
          YarpcConfig.loader()
              .environment(environment)
              .load(CALLER, clientDocument)
              .shutdownGracePeriod(Duration.ZERO)
              .build();
    } catch (ConfigException e) {
      err.println("call: " + e.getMessage());
      return 2;
    } catch (UncheckedIOException e) {
      err.println("call: " + e.getMessage());
      return 2;
    }
    try {
      client.start();
      return call(client.clientConfig(o.outbound), o, out, err);
    } catch (RuntimeException e) {
      err.println("Error: " + YarpcException.describe(e));
      return 1;
    } finally {
      client.stop();
    }
  }

  private static PeerTransport transport(String name, TlsConfig tls) {
    switch (name) {
      case "http":
        HttpTransport.Builder http = HttpTransport.builder().eventLoopThreads(1);
        return (tls == null ? http : http.tls(tls)).build();
      case "grpc":
        GrpcTransport.Builder grpc = GrpcTransport.builder();
        return (tls == null ? grpc : grpc.tls(tls)).build();
      default:
        TChannelTransport.Builder tchannel =
            TChannelTransport.builder().serviceName(CALLER).eventLoopThreads(1);
        return (tls == null ? tchannel : tchannel.tls(tls)).build();
    }
  }

  private static UnaryOutbound outbound(PeerTransport transport, String peer) {
    if (transport instanceof HttpTransport) {
      return ((HttpTransport) transport).singleOutbound(peer);
    }
    if (transport instanceof GrpcTransport) {
      return ((GrpcTransport) transport).singleOutbound(peer);
    }
    return ((TChannelTransport) transport).singleOutbound(peer);
  }

  /**
   * Waits until the peer is connected, or a connection attempt failed (at most {@link #CONNECT_WAIT}), so
   * that {@code --timeout} measures the call rather than the JVM warming up and connecting. A peer that
   * cannot be reached is left for the call to report.
   */
  private static void awaitConnected(PeerTransport transport, String peer) {
    CountDownLatch settled = new CountDownLatch(1);
    AtomicBoolean attempting = new AtomicBoolean();
    PeerSubscriber watcher =
        p -> {
          ConnectionStatus status = p.status();
          if (status == ConnectionStatus.CONNECTING) {
            attempting.set(true);
          } else if (status == ConnectionStatus.AVAILABLE || attempting.get()) {
            settled.countDown(); // connected, or an attempt ended unavailable
          }
        };
    Peer retained = transport.retainPeer(peer, watcher);
    try {
      watcher.onStatusChanged(retained);
      settled.await(CONNECT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      transport.releasePeer(peer, watcher);
    }
  }

  private static int call(ClientConfig config, Options o, PrintStream out, PrintStream err) {
    CallOptions.Builder callOptions = CallOptions.builder().timeout(o.timeout);
    o.headers.forEach(callOptions::header);
    Body body = o.requestBody.length == 0 ? Body.empty() : Body.of(o.requestBody);
    Request request = Request.of(callOptions.build().toMeta(o.procedure, o.wireEncoding()), body);
    Response response;
    try {
      response = config.call(request).join();
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      YarpcException error = YarpcException.from(e);
      printError(error, err);
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
      result.add("body", o.responseBody(response.body()));
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

  /** The parsed command line. */
  private static final class Options {
    private static final Pattern DURATION =
        Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");

    String peer;
    String transport;
    String service;
    String procedure;
    String encoding;
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    Duration timeout;
    byte[] requestBody;
    Descriptor requestType;
    Descriptor responseType;
    TlsConfig tls;
    Path config;
    String outbound;

    /** The peer as the transport names it: an {@code https://} URL for HTTP over TLS. */
    String peerAddress() {
      return tls != null && transport.equals("http") && !peer.contains("://")
          ? "https://" + peer
          : peer;
    }

    static Options parse(String[] args) throws Flags.UsageException {
      Flags flags = Flags.parse(args, FLAGS);
      Options o = new Options();
      String config = flags.get("config", null);
      if (config != null) {
        o.config = Path.of(config);
        o.outbound = flags.required("outbound");
        List<String> fromFile = new ArrayList<>(List.of("peer", "transport", "service"));
        fromFile.addAll(TlsFlags.CALL);
        for (String flag : fromFile) {
          if (flags.get(flag, null) != null) {
            throw new Flags.UsageException(
                "--" + flag + " cannot be used with --config (the outbound comes from the file)");
          }
        }
      } else {
        if (flags.get("outbound", null) != null) {
          throw new Flags.UsageException("--outbound needs --config");
        }
        o.peer = flags.required("peer");
        o.transport = flags.required("transport");
        if (!List.of("http", "grpc", "tchannel").contains(o.transport)) {
          throw new Flags.UsageException(
              "--transport must be http, grpc or tchannel, got \"" + o.transport + "\"");
        }
        o.service = flags.required("service");
      }
      o.procedure = flags.required("procedure");
      o.encoding = flags.required("encoding");
      if (!List.of("raw", "json", "proto").contains(o.encoding)) {
        throw new Flags.UsageException(
            "--encoding must be raw, json or proto, got \"" + o.encoding + "\"");
      }
      for (String header : flags.all("header")) {
        int eq = header.indexOf('=');
        if (eq <= 0) {
          throw new Flags.UsageException("--header wants key=value, got \"" + header + "\"");
        }
        o.headers.put(header.substring(0, eq), header.substring(eq + 1));
      }
      o.timeout = parseDuration(flags.get("timeout", "1s"));
      o.tls = TlsFlags.client(flags);
      if (flags.positional().size() > 1) {
        throw new Flags.UsageException(
            "one BODY argument expected, got " + flags.positional().size() + " (quote the body)");
      }
      if (o.encoding.equals("proto")) {
        MethodDescriptor method = findMethod(o.procedure);
        o.requestType = method.getInputType();
        o.responseType = method.getOutputType();
      }
      o.requestBody = o.encodeBody(flags.positional().isEmpty() ? "" : flags.positional().get(0));
      return o;
    }

    /** A Go-style duration ({@code 1s}, {@code 500ms}, {@code 1m30s}), or a number of milliseconds. */
    static Duration parseDuration(String text) throws Flags.UsageException {
      if (text.matches("\\d+")) {
        return positive(Duration.ofMillis(Long.parseLong(text)), text);
      }
      Matcher m = DURATION.matcher(text);
      int end = 0;
      double nanos = 0;
      while (m.find() && m.start() == end) {
        double n = Double.parseDouble(m.group(1));
        switch (m.group(2)) {
          case "ns":
            nanos += n;
            break;
          case "us":
          case "µs":
            nanos += n * 1e3;
            break;
          case "ms":
            nanos += n * 1e6;
            break;
          case "s":
            nanos += n * 1e9;
            break;
          case "m":
            nanos += n * 60e9;
            break;
          default:
            nanos += n * 3600e9;
            break;
        }
        end = m.end();
      }
      if (end == 0 || end != text.length()) {
        throw new Flags.UsageException(
            "--timeout wants a duration such as 1s or 500ms, got \"" + text + "\"");
      }
      return positive(Duration.ofNanos((long) nanos), text);
    }

    private static Duration positive(Duration d, String text) throws Flags.UsageException {
      if (d.isZero()) {
        throw new Flags.UsageException("--timeout must be positive, got \"" + text + "\"");
      }
      return d;
    }

    /** The unary method {@code pkg.Service::Method} among the known protos. */
    static MethodDescriptor findMethod(String procedure) throws Flags.UsageException {
      int sep = procedure.indexOf("::");
      List<String> known = new ArrayList<>();
      for (FileDescriptor file : KNOWN_PROTOS) {
        for (ServiceDescriptor s : file.getServices()) {
          for (MethodDescriptor m : s.getMethods()) {
            String name = s.getFullName() + "::" + m.getName();
            if (m.isClientStreaming() || m.isServerStreaming()) {
              if (name.equals(procedure)) {
                throw new Flags.UsageException(
                    procedure + " is a streaming method; call makes unary calls");
              }
              continue;
            }
            if (sep > 0 && name.equals(procedure)) {
              return m;
            }
            known.add(name);
          }
        }
      }
      throw new Flags.UsageException(
          "--encoding proto needs a unary method of a known service; \""
              + procedure
              + "\" is none of "
              + known);
    }

    String wireEncoding() {
      return encoding.equals("proto") ? Protobuf.ENCODING : encoding;
    }

    /** BODY as the bytes to send: raw as UTF-8, JSON checked and sent as is, proto3 JSON as binary. */
    byte[] encodeBody(String body) throws Flags.UsageException {
      switch (encoding) {
        case "raw":
          return body.getBytes(UTF_8);
        case "json":
          String json = body.isBlank() ? "{}" : body;
          try {
            JsonParser.parseString(json);
          } catch (JsonParseException e) {
            throw new Flags.UsageException("BODY is not valid JSON: " + e.getMessage());
          }
          return json.getBytes(UTF_8);
        default:
          DynamicMessage.Builder message = DynamicMessage.newBuilder(requestType);
          try {
            JsonFormat.parser().merge(body.isBlank() ? "{}" : body, message);
          } catch (InvalidProtocolBufferException e) {
            throw new Flags.UsageException(
                "BODY is not a "
                    + requestType.getFullName()
                    + " in proto3 JSON: "
                    + e.getMessage());
          }
          return message.build().toByteArray();
      }
    }

    JsonElement responseBody(Body responseBody) throws IOException {
      switch (encoding) {
        case "raw":
          return new JsonPrimitive(new String(responseBody.toByteArray(), UTF_8));
        case "json":
          String text = new String(responseBody.toByteArray(), UTF_8);
          try {
            return text.isBlank() ? new JsonPrimitive("") : JsonParser.parseString(text);
          } catch (JsonParseException e) {
            return new JsonPrimitive(text);
          }
        default:
          DynamicMessage message =
              ProtobufCodec.of(DynamicMessage.getDefaultInstance(responseType))
                  .decode(responseBody, Protobuf.ENCODING);
          return JsonParser.parseString(JsonFormat.printer().print(message));
      }
    }
  }
}

package io.yarpc.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.JsonElement;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.yarpc.CallOptions;
import io.yarpc.encoding.protobuf.Protobuf;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.examples.FlagSet.Flag;
import io.yarpc.examples.echo.EchoOuterClass;
import io.yarpc.examples.keyvalue.Keyvalue;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code call} sends: the procedure, encoding, headers, timeout, shard key and body of its flags,
 * checked and encoded once; {@link #newRequest()} makes a request of them for each call.
 *
 * <ul>
 *   <li>{@code raw}: BODY is sent as its UTF-8 bytes; the response body is read as a string.
 *   <li>{@code json}: BODY is JSON text (default {@code {}}), sent as is; the response is read as JSON.
 *   <li>{@code proto}: BODY is the request message in proto3 JSON (default {@code {}}); the procedure must
 *       be a unary method of a service the examples know ({@code yarpc.examples.keyvalue.KeyValue::...},
 *       {@code yarpc.examples.echo.Echo::Echo}). The message is sent in the binary encoding and the
 *       response read back as proto3 JSON.
 * </ul>
 */
final class CallRequest {
  static final List<Flag> FLAGS =
      List.of(
          new Flag("procedure", "NAME", null, "the procedure to call (required)"),
          new Flag(
              "encoding",
              "ENC",
              null,
              "raw, json or proto: how BODY is sent and the response read (required)"),
          new Flag("header", "K=V", null, "an application header; repeat for more"),
          new Flag("timeout", "DURATION", "1s", "each call's timeout"),
          new Flag(
              "shard-key", "KEY", null, "the calls' shard key (hashring32 places calls by it)"));

  /** The services whose messages {@code --encoding proto} can write and read. */
  private static final List<FileDescriptor> KNOWN_PROTOS =
      List.of(Keyvalue.getDescriptor(), EchoOuterClass.getDescriptor());

  private final String procedure;
  private final String encoding;
  private final CallOptions options;
  private final byte[] body;
  private final Descriptor responseType; // with proto only

  private CallRequest(
      String procedure,
      String encoding,
      CallOptions options,
      byte[] body,
      Descriptor responseType) {
    this.procedure = procedure;
    this.encoding = encoding;
    this.options = options;
    this.body = body;
    this.responseType = responseType;
  }

  /** The request of the flags and the positional BODY (at most one). */
  static CallRequest parse(Flags flags) throws Flags.UsageException {
    String procedure = flags.required("procedure");
    String encoding = flags.required("encoding");
    if (!List.of("raw", "json", "proto").contains(encoding)) {
      throw new Flags.UsageException(
          "--encoding must be raw, json or proto, got \"" + encoding + "\"");
    }
    Duration timeout = Durations.parse("timeout", flags.get("timeout", "1s"));
    CallOptions.Builder options = CallOptions.builder().timeout(timeout);
    for (String header : flags.all("header")) {
      int eq = header.indexOf('=');
      if (eq <= 0) {
        throw new Flags.UsageException("--header wants key=value, got \"" + header + "\"");
      }
      options.header(header.substring(0, eq), header.substring(eq + 1));
    }
    if (flags.has("shard-key")) {
      options.shardKey(flags.get("shard-key", ""));
    }
    if (flags.positional().size() > 1) {
      throw new Flags.UsageException(
          "one BODY argument expected, got " + flags.positional().size() + " (quote the body)");
    }
    String text = flags.positional().isEmpty() ? "" : flags.positional().get(0);
    Descriptor requestType = null;
    Descriptor responseType = null;
    if (encoding.equals("proto")) {
      MethodDescriptor method = findMethod(procedure);
      requestType = method.getInputType();
      responseType = method.getOutputType();
    }
    return new CallRequest(
        procedure,
        encoding,
        options.build(),
        encodeBody(encoding, text, requestType),
        responseType);
  }

  /** A new request: these options, a deadline from now, and the body. */
  Request newRequest() {
    String wireEncoding = encoding.equals("proto") ? Protobuf.ENCODING : encoding;
    return Request.of(
        options.toMeta(procedure, wireEncoding), body.length == 0 ? Body.empty() : Body.of(body));
  }

  /** The response body as JSON: a string for raw, the JSON for json, proto3 JSON for proto. */
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

  /** The unary method {@code pkg.Service::Method} among the known protos. */
  private static MethodDescriptor findMethod(String procedure) throws Flags.UsageException {
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

  /** BODY as the bytes to send: raw as UTF-8, JSON checked and sent as is, proto3 JSON as binary. */
  private static byte[] encodeBody(String encoding, String body, Descriptor requestType)
      throws Flags.UsageException {
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
              "BODY is not a " + requestType.getFullName() + " in proto3 JSON: " + e.getMessage());
        }
        return message.build().toByteArray();
    }
  }
}

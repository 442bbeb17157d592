package io.yarpc.transport.grpc.internal;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.WireText;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.PropagationHeaders;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Request and response metadata on the gRPC wire (docs/spec/wire-grpc.md §4.2 and §4.4), both directions.
 *
 * <p>Values sent must be printable ASCII (gRPC's rule: grpc-java drops other values, grpc-go fails the
 * call); the outbound refuses others with {@code invalid-argument}. Values received are decoded as UTF-8
 * from the raw bytes ({@link InternalMetadata#serialize(Metadata)}), so a peer that sends UTF-8 anyway is
 * read faithfully rather than through grpc-java's ASCII decoder. Values of {@code -bin} keys are bytes;
 * as application headers they are the base64 of those bytes (what gRPC puts on the wire, without padding
 * when received; padding optional when sent), so a binary header crosses HTTP and TChannel as text and
 * comes back to gRPC as the same bytes. A {@code -bin} header whose value is not base64 cannot be sent.
 * Free text of our own response keys (error and application-error names and details) is percent-encoded
 * instead ({@link #encodeText}), so any character survives.
 */
final class Metadatas {
  /** Request: calling service (required). */
  public static final String CALLER = "rpc-caller";

  /** Request: destination service (required); response: echo of the service that answered. */
  public static final String SERVICE = "rpc-service";

  /** Request: shard key. */
  public static final String SHARD_KEY = "rpc-shard-key";

  /** Request: routing key. */
  public static final String ROUTING_KEY = "rpc-routing-key";

  /** Request: routing delegate. */
  public static final String ROUTING_DELEGATE = "rpc-routing-delegate";

  /** Request: encoding (else from the content-type subtype). */
  public static final String ENCODING = "rpc-encoding";

  /** Request: the caller's own procedure. */
  public static final String CALLER_PROCEDURE = "rpc-caller-procedure";

  /** Response: the (deprecated) error name. */
  public static final String ERROR_NAME = "rpc-error-name";

  /** Response: non-empty when the body is an application error. */
  public static final String APPLICATION_ERROR = "rpc-application-error";

  /** Response: the application error's name. */
  public static final String APPLICATION_ERROR_NAME = "rpc-application-error-name";

  /** Response: the application error's details. */
  public static final String APPLICATION_ERROR_DETAILS = "rpc-application-error-details";

  /** The value yarpc-go sends in {@link #APPLICATION_ERROR}. */
  public static final String APPLICATION_ERROR_VALUE = "error";

  /** The binary trailer that carries a serialised {@code google.rpc.Status}. */
  public static final String STATUS_DETAILS = "grpc-status-details-bin";

  /** Cross-zone routing keys: sent as ordinary metadata, never reserved, dropped by the inbound. */
  static final String ROUTING_ZONE = "x-uber-rpc-routing-zone";

  static final String ROUTING_REGION = "x-uber-rpc-routing-region";

  private static final String CONTENT_TYPE = "content-type";
  private static final String USER_AGENT = "user-agent";
  private static final String PROTO_ENCODING = "proto";
  private static final String BASE_CONTENT_TYPE = "application/grpc";

  /**
   * The most bytes an error name or application-error name takes in trailers once percent-encoded. With
   * {@link GrpcErrors#MAX_MESSAGE_WIRE_BYTES} for {@code grpc-message} and 256 bytes of details (at most
   * 768 encoded), our texts stay under 6 KiB: the trailers fit the 8 KiB of metadata grpc-java accepts by
   * default ({@code maxInboundMetadataSize}), with room for application headers.
   */
  static final int MAX_NAME_WIRE_BYTES = 512;

  private static final int KEY_CACHE_LIMIT = 4096;

  private static final InternalMetadata.TrustedAsciiMarshaller<String> UTF8 =
      new InternalMetadata.TrustedAsciiMarshaller<>() {
        @Override
        public byte[] toAsciiString(String value) {
          return value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String parseAsciiString(byte[] serialized) {
          return new String(serialized, StandardCharsets.UTF_8);
        }
      };

  /**
   * Binary ({@code -bin}) keys: the application header's value is the base64 of the bytes, as gRPC writes
   * them on the wire (and as HTTP and TChannel carry them); on gRPC metadata they are the bytes.
   */
  private static final Metadata.BinaryMarshaller<String> BASE64_BINARY =
      new Metadata.BinaryMarshaller<>() {
        @Override
        public byte[] toBytes(String value) {
          return Base64.getDecoder().decode(value);
        }

        @Override
        public String parseBytes(byte[] serialized) {
          return base64(serialized);
        }
      };

  /** Keys most requests or responses carry, matched by their bytes in {@link #name}. */
  private static final String[] KNOWN_NAMES = {
    CONTENT_TYPE,
    "te",
    USER_AGENT,
    "grpc-accept-encoding",
    "grpc-timeout",
    "grpc-encoding",
    "grpc-status",
    "grpc-message",
    CALLER,
    SERVICE,
    ENCODING,
    CALLER_PROCEDURE,
    SHARD_KEY,
    ROUTING_KEY,
    ROUTING_DELEGATE,
    ROUTING_ZONE,
    ROUTING_REGION,
    APPLICATION_ERROR,
    APPLICATION_ERROR_NAME,
    APPLICATION_ERROR_DETAILS,
    ERROR_NAME
  };

  private static final byte[][] KNOWN_NAME_BYTES = new byte[KNOWN_NAMES.length][];

  static {
    for (int k = 0; k < KNOWN_NAMES.length; k++) {
      KNOWN_NAME_BYTES[k] = KNOWN_NAMES[k].getBytes(StandardCharsets.US_ASCII);
    }
  }

  private static final Map<String, Metadata.Key<String>> KEYS = new ConcurrentHashMap<>();

  /** The binary key of {@link #STATUS_DETAILS}. */
  public static final Metadata.Key<byte[]> STATUS_DETAILS_KEY =
      Metadata.Key.of(STATUS_DETAILS, Metadata.BINARY_BYTE_MARSHALLER);

  private Metadatas() {}

  /**
   * The key for a (lower-case) name.
   *
   * @throws IllegalArgumentException when grpc-java does not accept the name
   */
  public static Metadata.Key<String> key(String name) {
    Metadata.Key<String> key = KEYS.get(name);
    if (key == null) {
      key =
          name.endsWith(Metadata.BINARY_HEADER_SUFFIX)
              ? Metadata.Key.of(name, BASE64_BINARY)
              : InternalMetadata.keyOf(name, UTF8);
      if (KEYS.size() < KEY_CACHE_LIMIT) {
        KEYS.put(name, key);
      }
    }
    return key;
  }

  /** Whether an application header key is reserved for YARPC ({@code rpc-}, except cross-zone keys). */
  public static boolean isReserved(String canonicalKey) {
    return canonicalKey.startsWith("rpc-");
  }

  // ---------------------------------------------------------------------------------------------------
  // Requests

  /**
   * The metadata an outbound sends for {@code meta}: the {@code rpc-*} fields that are set, then the
   * application headers (empty values are not sent), then the propagation headers ({@link
   * #putPropagationHeaders}).
   *
   * @throws YarpcException {@code invalid-argument} for a header value with CR, LF or NUL, a reserved
   *     application header, or a header name gRPC cannot carry
   */
  public static Metadata requestMetadata(RequestMeta meta) {
    Headers headers = meta.headers();
    headers.forEach(
        (k, v) -> {
          for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c == '\r' || c == '\n' || c == 0) {
              throw YarpcException.of(
                  Code.INVALID_ARGUMENT,
                  "grpc request header value contains invalid characters including ASCII 0xd, 0xa, or 0x0");
            }
          }
        });
    Metadata md = new Metadata();
    put(md, CALLER, meta.caller());
    put(md, SERVICE, meta.service());
    put(md, SHARD_KEY, meta.shardKey());
    put(md, ROUTING_KEY, meta.routingKey());
    put(md, ROUTING_DELEGATE, meta.routingDelegate());
    put(md, ENCODING, meta.encoding());
    put(md, CALLER_PROCEDURE, meta.callerProcedure());
    headers.forEach(
        (k, v) -> {
          if (isReserved(k)) {
            throw YarpcException.of(
                Code.INVALID_ARGUMENT, "cannot use reserved header in application headers: %s", k);
          }
          putHeader(md, k, v);
        });
    putPropagationHeaders(md, meta.propagationHeaders());
    return md;
  }

  /**
   * Writes propagation headers as metadata, lower-case keys, where yarpc-go's tracer writes them
   * (docs/spec/model.md §8.3); each replaces an application header of the same key. A key gRPC or YARPC
   * owns ({@code rpc-*}, {@code grpc-*}, {@code content-type}, {@code te}, {@code user-agent}), or a key or
   * value gRPC cannot carry, is skipped: propagation never fails a call.
   */
  static void putPropagationHeaders(Metadata md, Headers propagation) {
    propagation.forEach(
        (k, v) -> {
          if (isReserved(k)
              || k.startsWith("grpc-")
              || k.equals(CONTENT_TYPE)
              || k.equals("te")
              || k.equals(USER_AGENT)
              || v.isEmpty()) {
            return;
          }
          try {
            Metadata.Key<String> key = key(k);
            checkValue(k, v);
            md.removeAll(key);
            md.put(key, v);
          } catch (IllegalArgumentException | YarpcException skipped) {
            // not carried: a bad trace header must not fail the call
          }
        });
  }

  private static void put(Metadata md, String key, String value) {
    if (!value.isEmpty()) {
      checkValue(key, value);
      md.put(key(key), value);
    }
  }

  /**
   * Adds an application header, skipping empty values.
   *
   * @throws YarpcException {@code invalid-argument} when gRPC cannot carry the name or the value
   */
  public static void putHeader(Metadata md, String canonicalKey, String value) {
    if (value.isEmpty()) {
      return;
    }
    Metadata.Key<String> key;
    try {
      key = key(canonicalKey);
    } catch (IllegalArgumentException e) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "invalid header name \"%s\" for grpc: %s",
          canonicalKey,
          e.getMessage());
    }
    checkValue(canonicalKey, value);
    md.put(key, value);
  }

  /**
   * gRPC metadata values of keys not ending in {@code -bin} are printable ASCII: grpc-java drops other
   * values with a warning and grpc-go fails the call, so they are refused up front. Values of {@code -bin}
   * keys must be base64.
   */
  private static void checkValue(String key, String value) {
    if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
      try {
        Base64.getDecoder().decode(value);
      } catch (IllegalArgumentException e) {
        throw YarpcException.of(
            Code.INVALID_ARGUMENT,
            "grpc binary header \"%s\" must hold base64, as gRPC writes binary values",
            key);
      }
      return;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        throw YarpcException.of(
            Code.INVALID_ARGUMENT,
            "grpc header value for key \"%s\" contains characters other than printable ASCII",
            key);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Free text in metadata

  /**
   * Free text in our own response metadata (error name, application-error name and details) as it goes
   * on the wire. Metadata values hold printable ASCII only (gRPC PROTOCOL-HTTP2, {@code ASCII-Value}), so
   * the text is percent-encoded the way gRPC encodes {@code grpc-message} ({@code Percent-Encoded}, as in
   * grpc-go's {@code encodeGrpcMessage}, grpc/grpc-go#5654): every byte of its UTF-8 form outside
   * {@code 0x20..0x7D}, and {@code %}, becomes {@code %XX}; the rest stays as it is. The escaped set is
   * grpc-java's ({@code Status}'s message marshaller, which also escapes {@code ~}), so our trailers and
   * grpc-java's {@code grpc-message} read alike. A peer that does not decode sees the escapes, never a
   * lost character. Text that is printable ASCII already ({@code 0x20..0x7E}, {@code %} and {@code ~}
   * included) is sent as it is, as yarpc-go sends these keys (it writes and reads them raw): only text
   * that could not be carried otherwise is encoded, so ASCII names and details mean the same to both.
   */
  static String encodeText(String text) {
    if (printableAscii(text)) {
      return text; // as yarpc-go writes it: "disk 95% full" stays so, for peers that do not decode
    }
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(utf8.length + 16);
    for (byte b : utf8) {
      int c = b & 0xff;
      if (isEscaped(c)) {
        sb.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
      } else {
        sb.append((char) c);
      }
    }
    return sb.toString();
  }

  /**
   * The text {@link #encodeText} encoded: every {@code %XX} with two hex digits becomes its byte, anything
   * else stays (a stray {@code %} too, as grpc-go's {@code decodeGrpcMessage} leaves it), and the bytes are
   * read as UTF-8. Values from peers that send the text's bytes as they are (yarpc-go does) come through
   * unchanged, unless they hold a {@code %} followed by two hex digits.
   */
  static String decodeText(String wire) {
    if (wire == null || wire.indexOf('%') < 0) {
      return wire;
    }
    byte[] in = wire.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[in.length];
    int n = 0;
    for (int i = 0; i < in.length; i++) {
      int hi = i + 2 < in.length && in[i] == '%' ? Character.digit(in[i + 1], 16) : -1;
      int lo = hi >= 0 ? Character.digit(in[i + 2], 16) : -1;
      if (lo >= 0) {
        out[n++] = (byte) (hi << 4 | lo);
        i += 2;
      } else {
        out[n++] = in[i];
      }
    }
    return new String(out, 0, n, StandardCharsets.UTF_8);
  }

  /** How many bytes a code point takes once percent-encoded ({@link #encodeText}). */
  static int encodedLength(int codePoint) {
    return codePoint < 0x80 && !isEscaped(codePoint) ? 1 : 3 * WireText.utf8Length(codePoint);
  }

  /**
   * {@code text} cut by core's rule ({@link WireText#truncate}) so that it takes at most {@code budget}
   * bytes once percent-encoded.
   */
  static String fitText(String text, int budget) {
    return WireText.truncate(text, budget, Metadatas::encodedLength);
  }

  private static boolean printableAscii(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  private static boolean isEscaped(int c) {
    return c < 0x20 || c >= 0x7e || c == '%';
  }

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /**
   * The request metadata of an inbound call: {@code rpc-*} fields, the encoding ({@code rpc-encoding}, or
   * the {@code application/grpc+X} subtype when absent), the propagation headers (the keys for which
   * {@link PropagationHeaders#isPropagationKey} holds: {@code traceparent}, {@code uber-trace-id}...,
   * docs/spec/model.md §8.3), and every other key as an application header — except gRPC's own ({@code
   * grpc-*}, {@code te}, {@code content-type}, {@code user-agent}) and the cross-zone routing keys.
   *
   * <p>A plain gRPC client sends none of the {@code rpc-*} keys; its call is served anyway, with: the
   * service {@code defaultService}; the caller named by the product of its {@code user-agent} (the text
   * before the first {@code /} or space: {@code grpc-java-netty}, {@code grpc-python}, {@code grpc-go}),
   * else {@value #UNKNOWN_CALLER}; the encoding of its content-type ({@code application/grpc} is gRPC's
   * default codec, protobuf: {@code proto}).
   *
   * @throws YarpcException {@code invalid-argument} {@code header has more than one value: ...}
   */
  public static RequestMeta toRequestMeta(
      Metadata md, String procedure, Deadline deadline, String defaultService) {
    return toRequestMeta(md, procedure, deadline, defaultService, null);
  }

  /**
   * {@link #toRequestMeta(Metadata, String, Deadline, String)} for a call that arrived on {@code
   * connection} (null: unknown).
   */
  public static RequestMeta toRequestMeta(
      Metadata md,
      String procedure,
      Deadline deadline,
      String defaultService,
      ConnectionInfo connection) {
    RequestMeta.Builder b =
        RequestMeta.builder()
            .procedure(procedure)
            .transport("grpc")
            .deadline(deadline)
            .connection(connection);
    Headers.Builder headers = null;
    Headers.Builder propagation = null;
    String encoding = null;
    byte[] contentType = null; // decoded only when needed: without rpc-encoding
    String caller = null;
    String service = null;
    byte[] userAgent = null; // decoded only when needed: without rpc-caller
    byte[][] raw = InternalMetadata.serialize(md);
    int count = InternalMetadata.headerCount(md);
    Map<String, Integer> seen = count > 8 ? new HashMap<>(count * 2) : null;
    for (int i = 0; i < count; i++) {
      String name = name(raw[2 * i]);
      checkSingle(name, seen, raw, i);
      byte[] value = raw[2 * i + 1];
      // Values that repeat from call to call come from WireStrings; keys that vary (shard and
      // routing keys, application headers) are decoded.
      switch (name) {
        case CALLER -> caller = WireStrings.VALUES.decode(value);
        case SERVICE -> service = WireStrings.VALUES.decode(value);
        case SHARD_KEY -> b.shardKey(decode(name, value));
        case ROUTING_KEY -> b.routingKey(decode(name, value));
        case ROUTING_DELEGATE -> b.routingDelegate(WireStrings.VALUES.decode(value));
        case ENCODING -> encoding = WireStrings.VALUES.decode(value);
        case CALLER_PROCEDURE -> b.callerProcedure(WireStrings.VALUES.decode(value));
        case CONTENT_TYPE -> contentType = value;
        case USER_AGENT -> userAgent = value;
        case ROUTING_ZONE, ROUTING_REGION, "te" -> {}
        default -> {
          if (PropagationHeaders.isPropagationKey(name)) {
            if (propagation == null) {
              propagation = Headers.builder();
            }
            propagation.add(name, decode(name, value));
          } else if (!name.startsWith("grpc-")) {
            if (headers == null) {
              headers = Headers.builder();
            }
            headers.add(name, decode(name, value));
          }
        }
      }
    }
    if ((encoding == null || encoding.isEmpty()) && contentType != null) {
      String type = WireStrings.VALUES.decode(contentType);
      encoding = contentSubtype(type);
      if (encoding.isEmpty() && type.equals(BASE_CONTENT_TYPE)) {
        encoding = PROTO_ENCODING; // plain application/grpc: the protobuf codec
      }
    }
    b.encoding(encoding);
    b.service(service == null || service.isEmpty() ? defaultService : service);
    if (caller == null || caller.isEmpty()) {
      caller = userAgent == null ? UNKNOWN_CALLER : callerOfAgent(userAgent);
    }
    b.caller(caller);
    if (headers != null) {
      b.headers(headers.build());
    }
    if (propagation != null) {
      b.propagationHeaders(propagation.build());
    }
    return b.build();
  }

  /**
   * The name of a key on the wire: one of {@link #KNOWN_NAMES} without allocating (every request and
   * response carries several of them), else decoded through {@link WireStrings} (a client sends the
   * same names with every call).
   */
  private static String name(byte[] raw) {
    for (int k = 0; k < KNOWN_NAMES.length; k++) {
      if (Arrays.equals(KNOWN_NAME_BYTES[k], raw)) {
        return KNOWN_NAMES[k];
      }
    }
    return WireStrings.NAMES.decode(raw);
  }

  /**
   * Fails when key {@code i} was already seen: small metadata is scanned, large metadata uses {@code
   * seen} (name to index). Values are decoded only for the message.
   */
  private static void checkSingle(String name, Map<String, Integer> seen, byte[][] raw, int i) {
    if (seen != null) {
      Integer previous = seen.putIfAbsent(name, i);
      if (previous != null) {
        throw moreThanOneValue(name, raw, previous, i);
      }
      return;
    }
    for (int j = 0; j < i; j++) {
      if (Arrays.equals(raw[2 * j], raw[2 * i])) {
        throw moreThanOneValue(name, raw, j, i);
      }
    }
  }

  private static YarpcException moreThanOneValue(String name, byte[][] raw, int first, int second) {
    return moreThanOneValue(
        name, decode(name, raw[2 * first + 1]), decode(name, raw[2 * second + 1]));
  }

  private static YarpcException moreThanOneValue(String name, String first, String second) {
    return YarpcException.of(
        Code.INVALID_ARGUMENT, "header has more than one value: %s:[%s %s]", name, first, second);
  }

  private static String decode(String name, byte[] value) {
    return name.endsWith(Metadata.BINARY_HEADER_SUFFIX)
        ? base64(value)
        : new String(value, StandardCharsets.UTF_8);
  }

  /** Base64 without padding, as grpc-java writes binary values on the wire. */
  private static String base64(byte[] bytes) {
    return Base64.getEncoder().withoutPadding().encodeToString(bytes);
  }

  /** The caller a call without {@code rpc-caller} gets: the product of its user agent, else this. */
  public static final String UNKNOWN_CALLER = "unknown";

  /** The last user agent a caller was named after, and that caller: a client sends the same one. */
  private record AgentCaller(String userAgent, String caller) {}

  private static volatile AgentCaller lastAgentCaller = new AgentCaller("", UNKNOWN_CALLER);

  /** {@link #callerOf} the user agent in {@code raw}, without allocating for the last one seen. */
  private static String callerOfAgent(byte[] raw) {
    String userAgent = WireStrings.VALUES.decode(raw);
    AgentCaller last = lastAgentCaller;
    if (last.userAgent() == userAgent) { // WireStrings gives the same String for the same bytes
      return last.caller();
    }
    String caller = callerOf(userAgent);
    lastAgentCaller = new AgentCaller(userAgent, caller);
    return caller;
  }

  /** The product token of a user agent ({@code grpc-java-netty/1.85.1} gives {@code grpc-java-netty}). */
  static String callerOf(String userAgent) {
    if (userAgent == null) {
      return UNKNOWN_CALLER;
    }
    int end = 0;
    while (end < userAgent.length()
        && userAgent.charAt(end) != '/'
        && userAgent.charAt(end) > ' '
        && userAgent.charAt(end) < 0x7f) {
      end++;
    }
    return end == 0 ? UNKNOWN_CALLER : userAgent.substring(0, end);
  }

  /** {@code X} of {@code application/grpc+X} or {@code application/grpc;X}; empty otherwise. */
  static String contentSubtype(String contentType) {
    if (!contentType.startsWith(BASE_CONTENT_TYPE)
        || contentType.length() == BASE_CONTENT_TYPE.length()) {
      return "";
    }
    char c = contentType.charAt(BASE_CONTENT_TYPE.length());
    return c == '+' || c == ';' ? contentType.substring(BASE_CONTENT_TYPE.length() + 1) : "";
  }

  // ---------------------------------------------------------------------------------------------------
  // Responses

  /**
   * Writes a unary response's metadata into {@code trailers}: its application headers that are not
   * {@linkplain Response#initialHeaders() initial headers} — and, when {@code initialToo}, the initial ones
   * as well (those the trailers do not set): a YARPC peer reads a unary response's headers from the
   * trailers only, as yarpc-go's gRPC outbound does — (reserved names and
   * headers gRPC cannot carry are skipped: a response has no way to report them) and the application-error
   * flag, name and details, percent-encoded ({@link #encodeText}); details cut by core's rule
   * ({@link WireText#details}), a name to {@value #MAX_NAME_WIRE_BYTES} bytes on the wire.
   */
  public static void putResponse(Metadata trailers, Response response, boolean initialToo) {
    // headers() is the initial headers and then the trailers, the trailers winning a shared key
    putResponseHeaders(trailers, initialToo ? response.headers() : response.trailers());
    if (response.isApplicationError()) {
      trailers.put(key(APPLICATION_ERROR), APPLICATION_ERROR_VALUE);
      ApplicationErrorMeta meta = response.applicationErrorMeta();
      if (meta.name() != null && !meta.name().isEmpty()) {
        trailers.put(
            key(APPLICATION_ERROR_NAME), encodeText(fitText(meta.name(), MAX_NAME_WIRE_BYTES)));
      }
      if (meta.details() != null && !meta.details().isEmpty()) {
        trailers.put(key(APPLICATION_ERROR_DETAILS), encodeText(WireText.details(meta.details())));
      }
    }
  }

  /**
   * The initial metadata of a unary response: its {@linkplain Response#initialHeaders() initial headers},
   * skipping those gRPC cannot carry.
   */
  public static Metadata initialMetadata(Response response) {
    Metadata md = new Metadata();
    putResponseHeaders(md, response.initialHeaders());
    return md;
  }

  /** The bytes of {@link #SERVICE}, as {@link #key} writes the name. */
  private static final byte[] SERVICE_NAME_BYTES = SERVICE.getBytes(StandardCharsets.US_ASCII);

  /** The service a server last answered for, with its bytes on the wire: a server answers for one. */
  private record ServiceBytes(String service, byte[] bytes) {}

  private static volatile ServiceBytes lastService = new ServiceBytes("", new byte[0]);

  /**
   * New trailers of a unary response: {@code rpc-service: service} unless {@code service} is empty, with
   * room for the status grpc-java adds ({@code grpc-status}, {@code grpc-message}) and a few more
   * entries, so that none of these grows the metadata; the service's bytes are shared between calls.
   */
  static Metadata responseTrailers(String service) {
    if (service.isEmpty()) {
      return new Metadata();
    }
    ServiceBytes last = lastService;
    if (!last.service().equals(service)) {
      last = new ServiceBytes(service, service.getBytes(StandardCharsets.UTF_8));
      lastService = last;
    }
    // An Object[], not a byte[][]: grpc-java replaces a byte[][] with an Object[] the first time it
    // moves an entry (discardAll, as when it adds the status), which would make the array twice.
    Object[] namesAndValues = new Object[8]; // 4 entries
    namesAndValues[0] = SERVICE_NAME_BYTES;
    namesAndValues[1] = last.bytes();
    return InternalMetadata.newMetadataWithParsedValues(1, namesAndValues);
  }

  /**
   * Fields that HTTP/2 or gRPC own, which a response's application headers cannot carry: HTTP/2's
   * connection-specific fields, which make a message malformed (RFC 9113 section 8.2.2), {@code te},
   * {@code host}, and the framing and content fields {@code content-length} and {@code content-type},
   * which gRPC sets itself and which are not allowed in trailers (RFC 9110 section 6.5.1: a client such as
   * nghttp2 resets the stream). {@code grpc-*} names are gRPC's too ({@link #isHttpOwned}).
   */
  private static final java.util.Set<String> HTTP_OWNED =
      java.util.Set.of(
          "connection",
          "keep-alive",
          "proxy-connection",
          "transfer-encoding",
          "upgrade",
          "te",
          "host",
          "content-length",
          "content-type");

  /**
   * Whether {@code canonicalKey} names a field HTTP/2 or gRPC own: a response header by that name is
   * dropped (a request that echoes its {@code content-length} back must not send it as a trailer).
   */
  static boolean isHttpOwned(String canonicalKey) {
    return HTTP_OWNED.contains(canonicalKey) || canonicalKey.startsWith("grpc-");
  }

  /**
   * Adds response headers to {@code md}, skipping reserved ones, those HTTP/2 or gRPC own ({@link
   * #isHttpOwned}) and those gRPC cannot carry.
   */
  public static void putResponseHeaders(Metadata md, Headers headers) {
    if (headers.isEmpty()) {
      return;
    }
    headers.forEach(
        (k, v) -> {
          if (!isReserved(k) && !isHttpOwned(k)) {
            try {
              putHeader(md, k, v);
            } catch (YarpcException skipped) {
              // a header gRPC cannot carry is dropped, as yarpc-go drops reserved response headers
            }
          }
        });
  }

  /**
   * Stream headers a server sends: application headers, keys as given (lower-cased), empty values
   * skipped.
   *
   * @throws YarpcException {@code invalid-argument} for a name or value gRPC cannot carry
   */
  public static Metadata streamHeaders(Headers headers) {
    Metadata md = new Metadata();
    headers.forEach((k, v) -> putHeader(md, k, v));
    return md;
  }

  /**
   * The application headers in response metadata ({@code first}, then {@code second} which may be
   * null): everything except reserved {@code rpc-*} keys and gRPC's own keys.
   *
   * @throws YarpcException {@code invalid-argument} {@code header has more than one value: ...}
   */
  public static Headers responseHeaders(Metadata first, Metadata second) {
    Headers.Builder headers = null;
    for (Metadata md : new Metadata[] {first, second}) {
      if (md == null) {
        continue;
      }
      byte[][] raw = InternalMetadata.serialize(md);
      int count = InternalMetadata.headerCount(md);
      Map<String, Integer> seen = count > 8 ? new HashMap<>(count * 2) : null;
      for (int i = 0; i < count; i++) {
        String name = name(raw[2 * i]);
        if (isReserved(name) || name.startsWith("grpc-") || name.equals(CONTENT_TYPE)) {
          continue;
        }
        checkSingle(name, seen, raw, i);
        if (headers == null) {
          headers = Headers.builder();
        }
        headers.add(name, decode(name, raw[2 * i + 1]));
      }
    }
    return headers == null ? Headers.empty() : headers.build();
  }

  /**
   * The single value of {@code name} in {@code md}, or null when absent.
   *
   * @throws YarpcException {@code invalid-argument} when it has more than one value
   */
  public static String single(Metadata md, String name) {
    if (md == null) {
      return null;
    }
    Metadata.Key<String> key = key(name);
    if (!md.containsKey(key)) {
      return null;
    }
    String value = null;
    for (String v : md.getAll(key)) {
      if (value != null) {
        throw moreThanOneValue(name, value, v);
      }
      value = v;
    }
    return value;
  }

  /** Whether the response trailers flag an application error (any non-empty value). */
  public static boolean isApplicationError(Metadata trailers) {
    String v = single(trailers, APPLICATION_ERROR);
    return v != null && !v.isEmpty();
  }

  /**
   * The application-error meta in the trailers (name and details, percent-decoded by {@link #decodeText};
   * the code travels as the status).
   */
  public static ApplicationErrorMeta applicationErrorMeta(Metadata trailers) {
    String name = decodeText(single(trailers, APPLICATION_ERROR_NAME));
    String details = decodeText(single(trailers, APPLICATION_ERROR_DETAILS));
    if (name == null && details == null) {
      return ApplicationErrorMeta.EMPTY;
    }
    return new ApplicationErrorMeta(null, name, details);
  }
}

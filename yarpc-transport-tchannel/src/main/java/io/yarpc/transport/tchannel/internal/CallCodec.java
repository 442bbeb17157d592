package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.WireText;
import io.yarpc.transport.Body;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The YARPC mapping onto TChannel call messages, as yarpc-go's {@code transport/tchannel} does it
 * (docs/spec/wire-tchannel.md §12): service in the frame, {@code as}/{@code cn}/{@code sk}/{@code rk}/{@code rd}
 * transport headers, the deadline as ttl, arg1 = procedure, arg2 = application headers (JSON for {@code
 * json}, the binary map otherwise) with {@code $rpc$-caller-procedure}, arg3 = body; responses with
 * {@code as} as the only transport header, an empty arg1, {@code $rpc$-service} and, for application
 * errors (code byte 0x01), the {@code $rpc$-error-*} and {@code $rpc$-application-error-*} keys.
 */
public final class CallCodec {
  /** The transport's name in {@link RequestMeta#transport()}. */
  public static final String TRANSPORT_NAME = "tchannel";

  /** Reserved arg2 keys start with this. */
  public static final String RESERVED_PREFIX = "$rpc$-";

  /** Echo of the service the server accepted. */
  public static final String SERVICE = "$rpc$-service";

  /** The caller's procedure (requests). */
  public static final String CALLER_PROCEDURE = "$rpc$-caller-procedure";

  /** YARPC code name of an error sent as an application error. */
  public static final String ERROR_CODE = "$rpc$-error-code";

  /** Error name. */
  public static final String ERROR_NAME = "$rpc$-error-name";

  /** Error message. */
  public static final String ERROR_MESSAGE = "$rpc$-error-message";

  /** Decimal YARPC code of the application error meta. */
  public static final String APPLICATION_ERROR_CODE = "$rpc$-application-error-code";

  /** Name of the application error meta. */
  public static final String APPLICATION_ERROR_NAME = "$rpc$-application-error-name";

  /** Details of the application error meta, cut to 256 bytes (core's {@link WireText#details}). */
  public static final String APPLICATION_ERROR_DETAILS = "$rpc$-application-error-details";

  /**
   * Propagation headers travel in arg2 with this prefix ({@code $tracing$uber-trace-id}); the server moves
   * them from the application headers to the propagation headers.
   */
  public static final String TRACING_PREFIX = "$tracing$";

  /**
   * The most UTF-8 bytes a text in arg2 can hold: the binary header map gives each key and value a
   * two-byte length (docs/spec/wire-tchannel.md §10). Error texts longer than that are cut to it by core's rule; application
   * headers are refused instead (they are data, not text for people).
   */
  static final int MAX_TEXT_BYTES = 0xFFFF;

  private CallCodec() {}

  // ---------------------------------------------------------------------------------------------------
  // Bodies

  /**
   * arg3 for writing: for a body with byte access a buffer wrapping its views (no copy; the body must
   * stay unreleased until the frames are written), otherwise the body written into a pooled buffer (the
   * body may be released at once). The caller releases the returned buffer after building the frames.
   */
  public static ByteBuf bodyBuffer(Body body, ByteBufAllocator alloc) throws IOException {
    if (body.hasByteAccess()) {
      List<ByteBuffer> views = body.byteBuffers();
      if (views.isEmpty()) {
        return Unpooled.EMPTY_BUFFER;
      }
      return Unpooled.wrappedBuffer(views.toArray(new ByteBuffer[0]));
    }
    long length = body.length();
    ByteBuf buf =
        length >= 0
            ? alloc.directBuffer((int) Math.min(length, Integer.MAX_VALUE - 8))
            : alloc.directBuffer();
    try (ByteBufOutputStream out = new ByteBufOutputStream(buf)) {
      body.writeTo(out);
      return buf;
    } catch (IOException | RuntimeException | Error e) {
      buf.release();
      throw e;
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Requests

  /**
   * The frames of a call req for {@code meta} and {@code body}. The body is not released.
   *
   * @throws YarpcException {@code invalid-argument} for what cannot go on the wire (a service, caller or
   *     routing value over 255 bytes, a procedure over 16 KiB, headers too long)
   * @throws IOException when the body fails to write itself
   */
  public static List<ByteBuf> encodeRequest(
      ByteBufAllocator alloc,
      int id,
      RequestMeta meta,
      Body body,
      long ttlMillis,
      byte[] tracing,
      ChecksumType checksumType,
      int maxFrameSize)
      throws IOException {
    return requestMessage(id, meta, ttlMillis, tracing, checksumType, maxFrameSize)
        .frames(alloc, body);
  }

  /**
   * A call req for {@code meta} with everything but its body encoded: {@link Message#frames} cuts it into
   * frames around the body.
   *
   * @throws YarpcException {@code invalid-argument} for what cannot go on the wire (a service, caller or
   *     routing value over 255 bytes, a procedure over 16 KiB or too long for the first frame, headers
   *     too long)
   */
  public static Message requestMessage(
      int id,
      RequestMeta meta,
      long ttlMillis,
      byte[] tracing,
      ChecksumType checksumType,
      int maxFrameSize) {
    Map<String, String> transportHeaders = new LinkedHashMap<>();
    transportHeaders.put(TransportHeaders.ARG_SCHEME, meta.encoding());
    transportHeaders.put(TransportHeaders.CALLER, meta.caller());
    putIfSet(transportHeaders, TransportHeaders.SHARD_KEY, meta.shardKey());
    putIfSet(transportHeaders, TransportHeaders.ROUTING_KEY, meta.routingKey());
    putIfSet(transportHeaders, TransportHeaders.ROUTING_DELEGATE, meta.routingDelegate());
    byte[] headerBytes = TransportHeaders.encode(transportHeaders);
    byte[] service = meta.service().getBytes(UTF_8);
    if (service.length > 0xFF) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "service name is %d bytes long, longer than the 255 " + "bytes tchannel allows",
          service.length);
    }
    byte[] procedure = meta.procedure().getBytes(UTF_8);
    if (procedure.length > Frames.MAX_ARG1_SIZE) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "procedure name is %d bytes long, longer than the %d " + "bytes tchannel allows",
          procedure.length,
          Frames.MAX_ARG1_SIZE);
    }
    ByteBuf fields =
        Unpooled.buffer(4 + Frames.TRACING_SIZE + 1 + service.length + headerBytes.length);
    fields.writeInt((int) Math.max(1, Math.min(ttlMillis, Integer.MAX_VALUE)));
    fields.writeBytes(tracing);
    fields.writeByte(service.length);
    fields.writeBytes(service);
    fields.writeBytes(headerBytes);

    Map<String, String> appHeaders = new LinkedHashMap<>();
    meta.headers().forEach(appHeaders::put);
    if (!meta.callerProcedure().isEmpty()) {
      appHeaders.put(CALLER_PROCEDURE, meta.callerProcedure());
    }
    // propagation headers as tchannel-go's InjectOutboundSpan writes them: $tracing$-prefixed,
    // merged
    // with the application headers, winning a clash (docs/spec/wire-tchannel.md §12.1)
    meta.propagationHeaders().forEach((k, v) -> appHeaders.put(TRACING_PREFIX + k, v));
    byte[] arg2;
    try {
      arg2 = ApplicationHeaders.encode(appHeaders, meta.encoding());
    } catch (IllegalArgumentException e) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT, "cannot encode the request headers: %s", e.getMessage());
    }
    return new Message(
        Frames.CALL_REQ, id, fields.array(), checksumType, procedure, arg2, maxFrameSize);
  }

  private static void putIfSet(Map<String, String> headers, String key, String value) {
    if (!value.isEmpty()) {
      headers.put(key, value);
    }
  }

  /**
   * The request metadata a server builds from a complete call req (docs/spec/wire-tchannel.md §12.2): caller =
   * {@code cn}, encoding = {@code as}, shard key, routing key and routing delegate from their headers,
   * procedure = arg1, headers = arg2 without {@code $rpc$-caller-procedure} (moved to the caller
   * procedure) and the {@code $tracing$} keys (the propagation headers, prefix removed), deadline = now +
   * ttl.
   *
   * @throws YarpcException {@code invalid-argument} when arg2 cannot be decoded, with yarpc-go's message
   */
  public static RequestMeta decodeRequestMeta(
      String service,
      Map<String, String> transportHeaders,
      long ttlMillis,
      byte[] arg1,
      byte[] arg2) {
    return decodeRequestMeta(
        service,
        transportHeaders,
        Deadline.after(ttlMillis, TimeUnit.MILLISECONDS),
        arg1,
        arg2,
        Integer.MAX_VALUE,
        null);
  }

  /**
   * As {@link #decodeRequestMeta(String, Map, long, byte[], byte[])}, with the deadline the call was
   * given on receipt ({@code null} for a ttl of 0) and a limit on the headers: more than {@code
   * maxHeaderCount} transport and application headers together are refused before the rest of arg2 is
   * decoded, and the connection the call arrived on ({@code null}: unknown).
   *
   * @throws YarpcException {@code invalid-argument} when arg2 cannot be decoded or holds too many headers
   */
  public static RequestMeta decodeRequestMeta(
      String service,
      Map<String, String> transportHeaders,
      Deadline deadline,
      byte[] arg1,
      byte[] arg2,
      int maxHeaderCount,
      ConnectionInfo connection) {
    String encoding = orEmpty(transportHeaders.get(TransportHeaders.ARG_SCHEME));
    String caller = orEmpty(transportHeaders.get(TransportHeaders.CALLER));
    String procedure = new String(arg1, UTF_8);
    Map<String, String> raw;
    try {
      int left = maxHeaderCount - transportHeaders.size();
      if (left < 0) {
        throw new ApplicationHeaders.TooManyHeadersException(maxHeaderCount);
      }
      raw = ApplicationHeaders.decode(arg2, encoding, left);
    } catch (ApplicationHeaders.TooManyHeadersException e) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "request for procedure \"%s\" of service \"%s\" from caller \"%s\" has more than %d"
              + " headers (transport and application headers together)",
          procedure,
          service,
          caller,
          maxHeaderCount);
    } catch (IllegalArgumentException e) {
      throw YarpcException.of(
          Code.INVALID_ARGUMENT,
          "failed to decode \"%s\" request headers for procedure "
              + "\"%s\" of service \"%s\" from caller \"%s\": %s",
          encoding,
          procedure,
          service,
          caller,
          e.getMessage());
    }
    Headers.Builder headers = raw.isEmpty() ? null : Headers.builder();
    Headers.Builder propagation = null;
    String callerProcedure = "";
    for (Map.Entry<String, String> e : raw.entrySet()) {
      String canonical = Headers.canonicalize(e.getKey());
      if (canonical.equals(CALLER_PROCEDURE)) {
        callerProcedure = e.getValue();
      } else if (canonical.startsWith(TRACING_PREFIX)) {
        if (canonical.length() > TRACING_PREFIX.length()) {
          if (propagation == null) {
            propagation = Headers.builder();
          }
          propagation.add(e.getKey().substring(TRACING_PREFIX.length()), e.getValue());
        }
      } else {
        headers.add(e.getKey(), e.getValue());
      }
    }
    return RequestMeta.builder()
        .caller(caller)
        .service(service)
        .procedure(procedure)
        .encoding(encoding)
        .transport(TRANSPORT_NAME)
        .headers(headers == null ? Headers.empty() : headers.build())
        .propagationHeaders(propagation == null ? Headers.empty() : propagation.build())
        .shardKey(transportHeaders.get(TransportHeaders.SHARD_KEY))
        .routingKey(transportHeaders.get(TransportHeaders.ROUTING_KEY))
        .routingDelegate(transportHeaders.get(TransportHeaders.ROUTING_DELEGATE))
        .callerProcedure(callerProcedure)
        .deadline(deadline)
        .connection(connection)
        .build();
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  // ---------------------------------------------------------------------------------------------------
  // Responses

  /**
   * The frames of a call res. The body is not released.
   *
   * @param code 0x00 OK or 0x01 application error
   * @param arg2Headers the application headers including the reserved keys
   */
  public static List<ByteBuf> encodeResponse(
      ByteBufAllocator alloc,
      int id,
      byte[] tracing,
      String argScheme,
      ChecksumType checksumType,
      int code,
      Map<String, String> arg2Headers,
      Body body,
      int maxFrameSize)
      throws IOException {
    return responseMessage(id, tracing, argScheme, checksumType, code, arg2Headers, maxFrameSize)
        .frames(alloc, body);
  }

  /**
   * A call res with everything but its body encoded: {@link Message#frames} cuts it into frames around
   * the body.
   *
   * @param code 0x00 OK or 0x01 application error
   * @param arg2Headers the application headers including the reserved keys
   * @throws YarpcException {@code internal} when the headers cannot be encoded
   */
  public static Message responseMessage(
      int id,
      byte[] tracing,
      String argScheme,
      ChecksumType checksumType,
      int code,
      Map<String, String> arg2Headers,
      int maxFrameSize) {
    byte[] headerBytes = TransportHeaders.encodeArgScheme(argScheme);
    byte[] fields = new byte[1 + Frames.TRACING_SIZE + headerBytes.length];
    fields[0] = (byte) code;
    if (tracing != null) {
      System.arraycopy(tracing, 0, fields, 1, Frames.TRACING_SIZE);
    }
    System.arraycopy(headerBytes, 0, fields, 1 + Frames.TRACING_SIZE, headerBytes.length);
    byte[] arg2;
    try {
      arg2 = ApplicationHeaders.encode(arg2Headers, argScheme);
    } catch (IllegalArgumentException e) {
      throw YarpcException.of(
          Code.INTERNAL, "cannot encode the response headers: %s", e.getMessage());
    }
    return new Message(Frames.CALL_RES, id, fields, checksumType, new byte[0], arg2, maxFrameSize);
  }

  /**
   * A call message whose fields, arg1 and arg2 are encoded, waiting for its body: {@link #frames} cuts it
   * into frames. Everything that can refuse the message was checked when it was made, so a caller can
   * encode it on its own thread and cut the frames where they are written (the event loop, whose pooled
   * allocator has a cache for its thread: other threads' allocations would contend for the pool's
   * arenas). Immutable.
   */
  public static final class Message {
    private final int type;
    private final int id;
    private final byte[] fields;
    private final ChecksumType checksumType;
    private final byte[] arg1;
    private final byte[] arg2;
    private final int maxFrameSize;

    Message(
        int type,
        int id,
        byte[] fields,
        ChecksumType checksumType,
        byte[] arg1,
        byte[] arg2,
        int maxFrameSize) {
      MessageWriter.checkFirstFrame(fields.length, checksumType, arg1.length, maxFrameSize);
      this.type = type;
      this.id = id;
      this.fields = fields;
      this.checksumType = checksumType;
      this.arg1 = arg1;
      this.arg2 = arg2;
      this.maxFrameSize = maxFrameSize;
    }

    /**
     * The frames of the message with {@code body} as arg3 (see {@link MessageWriter} for which frames
     * refer to the body rather than hold a copy). The body is not released.
     *
     * @throws IOException when the body fails to write itself
     */
    public List<ByteBuf> frames(ByteBufAllocator alloc, Body body) throws IOException {
      ByteBuf arg3 = bodyBuffer(body, alloc);
      try {
        return MessageWriter.write(
            alloc,
            type,
            id,
            fields,
            checksumType,
            Unpooled.wrappedBuffer(arg1),
            Unpooled.wrappedBuffer(arg2),
            arg3,
            maxFrameSize);
      } finally {
        arg3.release();
      }
    }
  }

  /**
   * The arg2 headers of a server's response: the response's headers (canonical keys), {@code
   * $rpc$-service}, and for an application error the {@code $rpc$-error-*} keys of {@code error} (when the
   * error came as an exception) and the {@code $rpc$-application-error-*} keys of the response's meta.
   *
   * @throws YarpcException {@code internal} when the handler set a reserved key itself
   */
  public static Map<String, String> responseHeaders(
      String service, Response response, YarpcException error) {
    Map<String, String> out = new LinkedHashMap<>();
    response
        .headers()
        .forEach(
            (k, v) -> {
              if (k.startsWith(RESERVED_PREFIX)) {
                throw YarpcException.of(Code.INTERNAL, "cannot use reserved header key: %s", k);
              }
              out.put(k, v);
            });
    out.put(SERVICE, service);
    if (error != null) {
      out.put(ERROR_CODE, error.code().wireName());
      if (error.name() != null) {
        out.put(ERROR_NAME, fit(error.name()));
      }
      if (!error.getMessage().isEmpty()) {
        out.put(ERROR_MESSAGE, fit(error.getMessage()));
      }
    }
    if (response.isApplicationError()) {
      ApplicationErrorMeta meta = response.applicationErrorMeta();
      if (meta.code() != null) {
        out.put(APPLICATION_ERROR_CODE, Integer.toString(meta.code().value()));
      }
      if (meta.name() != null && !meta.name().isEmpty()) {
        out.put(APPLICATION_ERROR_NAME, fit(meta.name()));
      }
      if (meta.details() != null && !meta.details().isEmpty()) {
        out.put(APPLICATION_ERROR_DETAILS, WireText.details(meta.details()));
      }
    }
    return out;
  }

  /**
   * An error text as arg2 carries it: whole, or cut to {@link #MAX_TEXT_BYTES}. Strings are UTF-8 with a
   * length in front, so any character travels as it is (tab, CR, LF, NUL, non-ASCII).
   */
  private static String fit(String text) {
    return WireText.truncate(text, MAX_TEXT_BYTES, WireText::utf8Length);
  }

  /**
   * The client's view of a complete call res (docs/spec/wire-tchannel.md §12.3, §12.5 item 4): the response, or,
   * when arg2 holds {@code $rpc$-error-code}, a {@link YarpcException} with that code, name and message
   * carrying the response. Reserved keys are removed from the headers; a {@code $rpc$-service} that differs
   * from the request's service is an {@code internal} error (the body is then released).
   *
   * @throws YarpcException the error described above (it owns {@code body} through its response) or an
   *     {@code internal} error (the body was released)
   */
  public static Response decodeResponse(RequestMeta meta, int code, byte[] arg2, Body body) {
    Map<String, String> raw;
    try {
      raw = ApplicationHeaders.decode(arg2, meta.encoding());
    } catch (IllegalArgumentException e) {
      body.release();
      throw YarpcException.of(
          Code.INTERNAL,
          "failed to decode \"%s\" response headers for procedure \"%s\" "
              + "of service \"%s\": %s",
          meta.encoding(),
          meta.procedure(),
          meta.service(),
          e.getMessage());
    }
    Headers.Builder headers = null;
    Map<String, String> reserved = null; // the reserved keys but $rpc$-service, rare
    String service = null;
    for (Map.Entry<String, String> e : raw.entrySet()) {
      String key = e.getKey();
      if (key.regionMatches(true, 0, RESERVED_PREFIX, 0, RESERVED_PREFIX.length())) {
        String lower = key.toLowerCase(Locale.ROOT);
        if (lower.equals(SERVICE)) {
          service = e.getValue(); // the last one wins, as in the map
        } else {
          if (reserved == null) {
            reserved = new LinkedHashMap<>();
          }
          reserved.put(lower, e.getValue());
        }
      } else {
        if (headers == null) {
          headers = Headers.builder();
        }
        headers.add(key, e.getValue());
      }
    }
    if (reserved == null) {
      reserved = Map.of();
    }
    try {
      Checks.responseService(meta, service);
    } catch (YarpcException e) {
      body.release();
      throw e;
    }
    Response.Builder response =
        Response.builder().headers(headers == null ? Headers.empty() : headers.build()).body(body);
    if (code != 0) {
      Code metaCode = null;
      String codeText = reserved.get(APPLICATION_ERROR_CODE);
      if (codeText != null) {
        try {
          metaCode = Code.fromValue(Integer.parseInt(codeText.trim()));
        } catch (NumberFormatException ignored) {
          // not a number: no code in the meta
        }
      }
      String name = reserved.get(APPLICATION_ERROR_NAME);
      String details = reserved.get(APPLICATION_ERROR_DETAILS);
      if (metaCode == null && name == null && details == null) {
        response.applicationError(true);
      } else {
        response.applicationError(new ApplicationErrorMeta(metaCode, name, details));
      }
    }
    Response built = response.build();
    String errorCode = reserved.get(ERROR_CODE);
    if (errorCode == null) {
      return built;
    }
    Code c = Code.fromWireName(errorCode.trim());
    String message = orEmpty(reserved.get(ERROR_MESSAGE));
    YarpcException e;
    if (c == Code.OK) {
      e = YarpcException.of(Code.INTERNAL, "got CodeOK from error header");
    } else if (c == null) {
      e =
          YarpcException.of(
              Code.INTERNAL, "unknown error code \"%s\" in the response: %s", errorCode, message);
    } else {
      e = YarpcException.of(c, message).withName(reserved.get(ERROR_NAME));
    }
    throw e.withResponse(built);
  }
}

package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.util.JsonFormat;
import io.yarpc.encoding.protobuf.Protobuf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * {@code google.rpc.Status} as YARPC error details, as yarpc-go's protobuf encoding carries them: the
 * details bytes of an error are the status serialised in the request's encoding (binary for {@code
 * proto}, proto3 JSON for {@code json}); the application-error name is the first detail's message name
 * without its package; the application-error details text lists every detail as {@code Name{text}}.
 * Details stay {@code Any}s (never unpacked into classes), so unknown types pass through intact.
 */
public final class StatusDetails {
  private StatusDetails() {}

  /**
   * The {@code google.rpc.Status} in {@code bytes} (details of an error received or thrown in {@code
   * encoding}), or {@code null} when they are not one: empty, unparsable, code 0, or unknown fields (a
   * sign that the bytes are something else that happened to parse). JSON details are also tried as
   * binary: a transport or a peer may have re-encoded them.
   */
  public static com.google.rpc.Status parse(byte[] bytes, String encoding, TypeRegistry types) {
    if (bytes == null || bytes.length == 0) {
      return null;
    }
    if (Protobuf.JSON_ENCODING.equals(encoding) && looksLikeJson(bytes)) {
      try {
        com.google.rpc.Status.Builder b = com.google.rpc.Status.newBuilder();
        JsonFormat.parser()
            .ignoringUnknownFields()
            .usingTypeRegistry(types)
            .merge(new String(bytes, StandardCharsets.UTF_8), b);
        return b.getCode() == 0 ? null : b.build();
      } catch (InvalidProtocolBufferException | RuntimeException notJson) {
        // fall through to binary
      }
    }
    try {
      com.google.rpc.Status st = com.google.rpc.Status.parseFrom(bytes);
      if (st.getCode() == 0 || !st.getUnknownFields().asMap().isEmpty()) {
        return null;
      }
      return st;
    } catch (InvalidProtocolBufferException e) {
      return null;
    }
  }

  private static boolean looksLikeJson(byte[] bytes) {
    for (byte b : bytes) {
      if (b == ' ' || b == '\t' || b == '\r' || b == '\n') {
        continue;
      }
      return b == '{';
    }
    return false;
  }

  /**
   * {@code status} in {@code encoding}: binary, or proto3 JSON when that is the encoding and every detail's
   * type is known to {@code types} (else binary, which loses nothing).
   */
  public static byte[] serialize(
      com.google.rpc.Status status, String encoding, TypeRegistry types) {
    if (Protobuf.JSON_ENCODING.equals(encoding)) {
      try {
        StringBuilder json = new StringBuilder();
        JsonFormat.printer()
            .omittingInsignificantWhitespace()
            .usingTypeRegistry(types)
            .appendTo(status, json);
        return json.toString().getBytes(StandardCharsets.UTF_8);
      } catch (IOException | RuntimeException unknownDetailType) {
        // binary below
      }
    }
    return status.toByteArray();
  }

  /** The first detail's message name without package (e.g. {@code BadRequest}), or {@code null}. */
  public static String firstDetailName(com.google.rpc.Status status) {
    return status.getDetailsCount() == 0 ? null : shortName(status.getDetails(0).getTypeUrl());
  }

  /** The message name in an {@code Any} type URL, without package: {@code .../google.rpc.ErrorInfo} is {@code ErrorInfo}. */
  public static String shortName(String typeUrl) {
    String full = typeUrl.substring(typeUrl.lastIndexOf('/') + 1);
    return full.substring(full.lastIndexOf('.') + 1);
  }

  /**
   * The details as yarpc-go describes them in the application-error meta: {@code [Name{text} Name{text}]}
   * with each known detail in one-line text format, unknown ones as {@code Name{}}; {@code null} without
   * details.
   */
  public static String describe(com.google.rpc.Status status, TypeRegistry types) {
    if (status.getDetailsCount() == 0) {
      return null;
    }
    StringBuilder sb = new StringBuilder("[");
    for (Any detail : status.getDetailsList()) {
      if (sb.length() > 1) {
        sb.append(' ');
      }
      sb.append(shortName(detail.getTypeUrl())).append('{');
      try {
        Descriptor type = types.getDescriptorForTypeUrl(detail.getTypeUrl());
        if (type != null) {
          sb.append(
              TextFormat.printer()
                  .emittingSingleLine(true)
                  .printToString(DynamicMessage.parseFrom(type, detail.getValue()))
                  .trim());
        }
      } catch (InvalidProtocolBufferException | RuntimeException unreadable) {
        // described by name only
      }
      sb.append('}');
    }
    return sb.append(']').toString();
  }
}

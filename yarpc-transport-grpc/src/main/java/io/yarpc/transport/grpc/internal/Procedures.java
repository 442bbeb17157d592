package io.yarpc.transport.grpc.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Maps YARPC procedure names to gRPC paths and back, as yarpc-go does (docs/spec/wire-grpc.md §4.1).
 *
 * <ul>
 *   <li>Outbound: split at the first {@code ::}; no {@code ::} means the whole name is the method of the
 *       placeholder service {@code __default__}; both parts are URL-query-escaped: {@code Svc::M} becomes
 *       {@code /Svc/M}, {@code echo/raw} becomes {@code /__default__/echo%2Fraw}.
 *   <li>Inbound: strip the leading {@code /}, split at the <b>last</b> {@code /}, unescape both parts and
 *       rebuild {@code service::method}, or just {@code method} for {@code __default__}.
 * </ul>
 *
 * Escaping follows Go's {@code url.QueryEscape} exactly (unreserved: {@code A-Z a-z 0-9 - _ . ~}; space
 * becomes {@code +}), which differs from {@link java.net.URLEncoder} on {@code ~} and {@code *}.
 */
final class Procedures {
  /** The service part of the path for procedures without {@code ::}. */
  public static final String DEFAULT_SERVICE = "__default__";

  private static final String SEPARATOR = "::";
  private static final int CACHE_LIMIT = 4096;
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private static final Map<String, String> TO_METHOD = new ConcurrentHashMap<>();
  private static final Map<String, String> TO_PROCEDURE = new ConcurrentHashMap<>();

  private Procedures() {}

  /**
   * The gRPC full method name (without the leading {@code /}, as grpc-java spells it) for a procedure.
   *
   * @throws YarpcException {@code invalid-argument} {@code invalid procedure name: ...} when the service
   *     part is empty
   */
  public static String toFullMethodName(String procedure) {
    String cached = TO_METHOD.get(procedure);
    if (cached != null) {
      return cached;
    }
    int sep = procedure.indexOf(SEPARATOR);
    String service = sep < 0 ? procedure : procedure.substring(0, sep);
    String method = sep < 0 ? "" : procedure.substring(sep + SEPARATOR.length());
    if (service.isEmpty()) {
      throw YarpcException.of(Code.INVALID_ARGUMENT, "invalid procedure name: %s", procedure);
    }
    if (method.isEmpty()) {
      method = service;
      service = DEFAULT_SERVICE;
    }
    String full = queryEscape(service) + "/" + queryEscape(method);
    if (TO_METHOD.size() < CACHE_LIMIT) {
      TO_METHOD.put(procedure, full);
    }
    return full;
  }

  /**
   * The procedure name for a gRPC full method name (with or without the leading {@code /}).
   *
   * @throws YarpcException {@code invalid-argument} when there is no {@code /} or an escape is invalid
   */
  public static String toProcedure(String fullMethodName) {
    String cached = TO_PROCEDURE.get(fullMethodName);
    if (cached != null) {
      return cached;
    }
    String path = fullMethodName.startsWith("/") ? fullMethodName.substring(1) : fullMethodName;
    int slash = path.lastIndexOf('/');
    if (slash < 0) {
      throw YarpcException.of(Code.INVALID_ARGUMENT, "invalid stream method name for request");
    }
    String service = queryUnescape(path.substring(0, slash));
    String method = queryUnescape(path.substring(slash + 1));
    String procedure = DEFAULT_SERVICE.equals(service) ? method : service + SEPARATOR + method;
    if (TO_PROCEDURE.size() < CACHE_LIMIT) {
      TO_PROCEDURE.put(fullMethodName, procedure);
    }
    return procedure;
  }

  /** Go's {@code url.QueryEscape}. */
  static String queryEscape(String s) {
    int i = 0;
    while (i < s.length() && unreserved(s.charAt(i))) {
      i++;
    }
    if (i == s.length()) {
      return s;
    }
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(bytes.length + 16);
    for (byte b : bytes) {
      char c = (char) (b & 0xff);
      if (c < 0x80 && unreserved(c)) {
        sb.append(c);
      } else if (c == ' ') {
        sb.append('+');
      } else {
        sb.append('%').append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
      }
    }
    return sb.toString();
  }

  /**
   * Go's {@code url.QueryUnescape}: {@code +} is a space, {@code %XX} a byte.
   *
   * @throws YarpcException {@code invalid-argument} on a malformed escape
   */
  static String queryUnescape(String s) {
    if (s.indexOf('%') < 0 && s.indexOf('+') < 0) {
      return s;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length() || hex(s.charAt(i + 1)) < 0 || hex(s.charAt(i + 2)) < 0) {
          String bad = s.substring(i, Math.min(s.length(), i + 3));
          throw YarpcException.of(Code.INVALID_ARGUMENT, "invalid URL escape \"%s\"", bad);
        }
        out.write(hex(s.charAt(i + 1)) << 4 | hex(s.charAt(i + 2)));
        i += 2;
      } else if (c == '+') {
        out.write(' ');
      } else if (c < 0x80) {
        out.write(c);
      } else {
        int cp = s.codePointAt(i);
        byte[] encoded = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        out.write(encoded, 0, encoded.length);
        i += Character.charCount(cp) - 1;
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static boolean unreserved(char c) {
    return c >= 'a' && c <= 'z'
        || c >= 'A' && c <= 'Z'
        || c >= '0' && c <= '9'
        || c == '-'
        || c == '_'
        || c == '.'
        || c == '~';
  }

  private static int hex(char c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }
}

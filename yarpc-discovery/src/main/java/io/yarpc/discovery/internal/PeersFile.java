package io.yarpc.discovery.internal;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.yarpc.discovery.FilePeerListUpdater.Format;
import io.yarpc.internal.HostPorts;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The peers file: a JSON or YAML list whose items are {@code host:port} strings or target groups {@code
 * {targets: [host:port, ...], labels: {...}}} (the file format of Prometheus's file-based discovery; the
 * labels are ignored).
 *
 * <pre>
 * - 10.0.0.1:8080
 * - 10.0.0.2:8080
 * </pre>
 */
public final class PeersFile {
  private static final Gson GSON = new Gson();
  private static final String LENIENT_ADVICE =
      "Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON";

  private PeersFile() {}

  /**
   * The {@code host:port} entries of a file's content, in order (duplicates kept).
   *
   * @throws IllegalArgumentException what is wrong, with the place: {@code not valid YAML: ...}, {@code
   *     is empty}, {@code [2]: not host:port: "localhost" (no port)}; several problems are joined by
   *     {@code ; }
   */
  public static List<String> parse(byte[] content, Format format) {
    String text = decode(content);
    if (text.isBlank()) {
      throw new IllegalArgumentException("is empty");
    }
    Object root = format == Format.JSON ? json(text) : yaml(text);
    if (root == null) {
      throw new IllegalArgumentException("is empty");
    }
    if (!(root instanceof List)) {
      throw new IllegalArgumentException(
          "expected a list of host:port or target groups, got " + typeName(root));
    }
    List<String> peers = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    List<?> items = (List<?>) root;
    for (int i = 0; i < items.size(); i++) {
      Object item = items.get(i);
      String at = "[" + i + "]";
      if (item instanceof String) {
        add((String) item, at, peers, problems);
      } else if (item instanceof Map) {
        group((Map<?, ?>) item, at, peers, problems);
      } else {
        problems.add(
            at + ": expected host:port or a target group {targets: [...]}, got " + typeName(item));
      }
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("; ", problems));
    }
    return peers;
  }

  private static void group(Map<?, ?> group, String at, List<String> peers, List<String> problems) {
    for (Object key : group.keySet()) {
      if (!"targets".equals(key) && !"labels".equals(key)) {
        problems.add(at + "." + key + ": unknown key (a target group has targets and labels)");
      }
    }
    Object targets = group.get("targets");
    if (targets == null) {
      problems.add(at + ": a target group needs targets: [host:port, ...]");
      return;
    }
    if (!(targets instanceof List)) {
      problems.add(at + ".targets: expected a list of host:port, got " + typeName(targets));
      return;
    }
    List<?> list = (List<?>) targets;
    for (int j = 0; j < list.size(); j++) {
      Object target = list.get(j);
      String where = at + ".targets[" + j + "]";
      if (target instanceof String) {
        add((String) target, where, peers, problems);
      } else {
        problems.add(where + ": expected host:port, got " + typeName(target));
      }
    }
  }

  private static void add(String entry, String at, List<String> peers, List<String> problems) {
    try {
      peers.add(HostPorts.checkPeer(entry));
    } catch (IllegalArgumentException e) {
      problems.add(at + ": " + e.getMessage());
    }
  }

  private static String decode(byte[] content) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(content))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("is not UTF-8 text");
    }
  }

  private static Object json(String text) {
    JsonReader reader = new JsonReader(new StringReader(text));
    reader.setStrictness(Strictness.STRICT);
    try {
      JsonElement root = GSON.getAdapter(JsonElement.class).read(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new IllegalArgumentException("not valid JSON: more than one value");
      }
      return plain(root);
    } catch (IOException | IllegalStateException e) {
      String m = String.valueOf(e.getMessage());
      int see = m.indexOf("\nSee ");
      m = see < 0 ? m : m.substring(0, see);
      // gson's advice is for programmers: what the file's author needs is where
      m = m.replace(LENIENT_ADVICE, "syntax error").trim();
      throw new IllegalArgumentException("not valid JSON: " + m);
    }
  }

  /** A JSON tree as lists, maps, strings, numbers, booleans and nulls. */
  private static Object plain(JsonElement e) {
    if (e == null || e.isJsonNull()) {
      return null;
    }
    if (e.isJsonArray()) {
      List<Object> out = new ArrayList<>();
      for (JsonElement item : (JsonArray) e) {
        out.add(plain(item));
      }
      return out;
    }
    if (e.isJsonObject()) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<String, JsonElement> entry : ((JsonObject) e).entrySet()) {
        out.put(entry.getKey(), plain(entry.getValue()));
      }
      return out;
    }
    JsonPrimitive p = (JsonPrimitive) e;
    return p.isString() ? p.getAsString() : p.isBoolean() ? p.getAsBoolean() : p.getAsNumber();
  }

  private static Object yaml(String text) {
    LoadSettings settings =
        LoadSettings.builder()
            .setSchema(new CoreSchema())
            .setAllowDuplicateKeys(false)
            .setAllowRecursiveKeys(false)
            .setMaxAliasesForCollections(50)
            .build();
    try {
      return new Load(settings).loadFromString(text);
    } catch (YamlEngineException e) {
      throw new IllegalArgumentException(
          "not valid YAML: " + e.getMessage().replaceAll("\\s*\\n\\s*", " ").trim());
    }
  }

  private static String typeName(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof Map) {
      return "a mapping";
    }
    if (value instanceof List) {
      return "a list";
    }
    if (value instanceof Boolean) {
      return "a boolean";
    }
    if (value instanceof Number) {
      return "a number";
    }
    return "a string";
  }
}

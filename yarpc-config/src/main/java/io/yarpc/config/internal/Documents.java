package io.yarpc.config.internal;

import io.yarpc.config.ConfigException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/** YAML 1.2 (and so JSON) into plain maps, lists and scalars, with SnakeYAML Engine. */
public final class Documents {
  private Documents() {}

  /**
   * Parses one document. Keys become strings (a number or boolean key its text); a duplicate key, a
   * mapping or list used as a key, several documents, or a root that is not a mapping fail with a {@link
   * ConfigException} naming {@code source}.
   */
  public static Map<String, Object> parse(Reader reader, String source) {
    LoadSettings settings =
        LoadSettings.builder()
            .setLabel(source)
            .setSchema(new CoreSchema())
            .setAllowDuplicateKeys(false)
            .setAllowRecursiveKeys(false)
            .setMaxAliasesForCollections(50)
            .build();
    Object root;
    try {
      root = new Load(settings).loadFromReader(reader);
    } catch (YamlEngineException e) {
      throw new ConfigException(
          source, List.of(new ConfigException.Problem("", "not valid YAML: " + e.getMessage())));
    }
    if (root == null) {
      return new LinkedHashMap<>();
    }
    List<ConfigException.Problem> problems = new ArrayList<>();
    Object normalized = normalize(root, "", problems);
    if (!(normalized instanceof Map)) {
      problems.add(
          new ConfigException.Problem(
              "", "the document must be a mapping, not " + Sections.typeName(root)));
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(source, problems);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) normalized;
    return map;
  }

  static Object normalize(Object value, String path, List<ConfigException.Problem> problems) {
    if (value instanceof Map) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        Object key = e.getKey();
        if (key instanceof Map || key instanceof List || key == null) {
          problems.add(
              new ConfigException.Problem(
                  path, "keys must be strings, not " + Sections.typeName(key)));
          continue;
        }
        String k = String.valueOf(key);
        out.put(k, normalize(e.getValue(), Sections.join(path, k), problems));
      }
      return out;
    }
    if (value instanceof List) {
      List<Object> out = new ArrayList<>();
      List<?> in = (List<?>) value;
      for (int i = 0; i < in.size(); i++) {
        out.add(normalize(in.get(i), path + "[" + i + "]", problems));
      }
      return out;
    }
    return value;
  }
}

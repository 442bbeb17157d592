package io.yarpc.config;

import io.yarpc.Dispatcher;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Test helpers: the yarpc-go fixtures, wrapped where they are fragments. */
final class Fixtures {
  private Fixtures() {}

  static Path path(String resource) {
    URL url = Fixtures.class.getResource("/" + resource);
    if (url == null) {
      throw new IllegalArgumentException("no test resource " + resource);
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The yarpc-go fixture {@code name}, parsed, and put under the dotted {@code under} (e.g. {@code
   * outbounds}) when it is a fragment of that section.
   */
  static Map<String, Object> yarpcGo(String name, String under) {
    Map<String, Object> doc = YarpcConfig.parse(path("yarpc-go/" + name));
    if (under == null || under.isEmpty()) {
      return doc;
    }
    List<String> keys = List.of(under.split("\\."));
    Map<String, Object> wrapped = doc;
    for (int i = keys.size() - 1; i >= 0; i--) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put(keys.get(i), wrapped);
      wrapped = m;
    }
    return wrapped;
  }

  /** The problems of loading {@code document} as "path: message" lines; empty when it loads. */
  static List<String> problems(YarpcConfig.Loader loader, Map<String, Object> document) {
    try {
      Dispatcher.Builder unused = loader.load("myservice", document);
      return List.of();
    } catch (ConfigException e) {
      return e.problems().stream().map(ConfigException.Problem::toString).toList();
    }
  }
}

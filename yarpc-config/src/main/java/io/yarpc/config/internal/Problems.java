package io.yarpc.config.internal;

import io.yarpc.config.ConfigException;
import java.util.ArrayList;
import java.util.List;

/** The problems of one load, in the order they were found. */
final class Problems {
  private final List<ConfigException.Problem> list = new ArrayList<>();

  void add(String path, String message) {
    ConfigException.Problem p = new ConfigException.Problem(path, message);
    if (!list.contains(p)) {
      list.add(p);
    }
  }

  int size() {
    return list.size();
  }

  /** Whether a problem was recorded at {@code path} or below it. */
  boolean any(String path) {
    for (ConfigException.Problem p : list) {
      if (path.isEmpty()
          || p.path().equals(path)
          || p.path().startsWith(path + ".")
          || p.path().startsWith(path + "[")) {
        return true;
      }
    }
    return false;
  }

  List<ConfigException.Problem> list() {
    return list;
  }
}

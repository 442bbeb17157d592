package io.yarpc.observability.metrics;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/** A Prometheus text scrape, parsed into samples: what the tests assert on is what Prometheus reads. */
public final class Scrape {
  /** One line of the scrape: a name, its labels (sorted) and a value. */
  public record Sample(String name, Map<String, String> labels, double value) {
    /** The label's value, or null. */
    public String label(String key) {
      return labels.get(key);
    }

    @Override
    public String toString() {
      return name + labels + " " + value;
    }
  }

  public final String text;
  public final List<Sample> samples;

  private Scrape(String text) {
    this.text = text;
    List<Sample> list = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      list.add(parse(line));
    }
    this.samples = Collections.unmodifiableList(list);
  }

  /** Scrapes {@code registry} as Prometheus would. */
  public static Scrape of(PrometheusMeterRegistry registry) {
    return new Scrape(registry.scrape());
  }

  private static Sample parse(String line) {
    int brace = line.indexOf('{');
    int space = line.lastIndexOf(' ');
    Map<String, String> labels = new TreeMap<>();
    String name;
    if (brace < 0 || brace > space) {
      name = line.substring(0, space);
    } else {
      name = line.substring(0, brace);
      int end = line.lastIndexOf('}');
      String body = line.substring(brace + 1, end);
      int i = 0;
      while (i < body.length()) {
        int eq = body.indexOf('=', i);
        String key = body.substring(i, eq);
        StringBuilder value = new StringBuilder();
        int j = eq + 2; // past ="
        while (body.charAt(j) != '"') {
          char c = body.charAt(j);
          if (c == '\\') {
            j++;
            c = body.charAt(j) == 'n' ? '\n' : body.charAt(j);
          }
          value.append(c);
          j++;
        }
        labels.put(key, value.toString());
        i = j + 1;
        if (i < body.length() && body.charAt(i) == ',') {
          i++;
        }
      }
    }
    return new Sample(name, labels, Double.parseDouble(line.substring(space + 1)));
  }

  /** The samples matching {@code filter}. */
  public List<Sample> where(Predicate<Sample> filter) {
    return samples.stream().filter(filter).toList();
  }

  /**
   * The value of the one sample named {@code name} whose labels include {@code labels} (pairs), or 0
   * when there is none.
   *
   * @throws AssertionError when several samples match
   */
  public double value(String name, String... labels) {
    Map<String, String> want = pairs(labels);
    List<Sample> found =
        where(s -> s.name.equals(name) && s.labels.entrySet().containsAll(want.entrySet()));
    if (found.size() > 1) {
      throw new AssertionError("several samples match " + name + want + ": " + found);
    }
    return found.isEmpty() ? 0 : found.get(0).value;
  }

  /**
   * Every counter sample ({@code _total}) with a value other than zero, as {@code name{key=value...}}
   * with only the labels in {@code keys}, mapped to its value: the exact view of what was counted.
   */
  public Map<String, Double> counters(String... keys) {
    Map<String, Double> out = new TreeMap<>();
    for (Sample s : samples) {
      if (!s.name.endsWith("_total") || s.value == 0) {
        continue;
      }
      StringBuilder sb = new StringBuilder(s.name).append('{');
      boolean first = true;
      for (String k : keys) {
        String v = s.labels.get(k);
        if (v == null) {
          continue;
        }
        sb.append(first ? "" : ",").append(k).append('=').append(v);
        first = false;
      }
      out.merge(sb.append('}').toString(), s.value, Double::sum);
    }
    return out;
  }

  static Map<String, String> pairs(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  @Override
  public String toString() {
    return text;
  }
}

package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HeadersTest {

  private static List<String> originals(Headers headers) {
    List<String> out = new ArrayList<>();
    headers.forEachOriginal((k, v) -> out.add(k + "=" + v));
    return out;
  }

  private static List<String> canonicals(Headers headers) {
    List<String> out = new ArrayList<>();
    headers.forEach((k, v) -> out.add(k + "=" + v));
    return out;
  }

  @Test
  void getIgnoresCase() {
    Headers h = Headers.of("Content-Type", "text/plain");

    assertThat(h.get("Content-Type")).isEqualTo("text/plain");
    assertThat(h.get("content-type")).isEqualTo("text/plain");
    assertThat(h.get("CONTENT-TYPE")).isEqualTo("text/plain");
    assertThat(h.get("cOnTeNt-TyPe")).isEqualTo("text/plain");
    assertThat(h.contains("CONTENT-type")).isTrue();
    assertThat(h.get("content")).isNull();
    assertThat(h.contains("content")).isFalse();
  }

  @Test
  void keysAreCanonicalLowerCase() {
    Headers h = Headers.of("X-Foo", "1", "BAR", "2", "baz", "3");

    assertThat(h.keys()).containsExactly("x-foo", "bar", "baz");
    assertThat(h.asMap())
        .containsExactly(entry("x-foo", "1"), entry("bar", "2"), entry("baz", "3"));
    assertThat(canonicals(h)).containsExactly("x-foo=1", "bar=2", "baz=3");
  }

  @Test
  void originalCasingIsKept() {
    Headers h = Headers.of("X-Foo", "1", "BAR", "2", "baz", "3");

    assertThat(originals(h)).containsExactly("X-Foo=1", "BAR=2", "baz=3");
  }

  @Test
  void lastValueWinsAndFirstCasingIsKept() {
    Headers h = Headers.builder().add("X-Id", "1").add("x-id", "2").add("X-ID", "3").build();

    assertThat(h.size()).isEqualTo(1);
    assertThat(h.get("x-id")).isEqualTo("3");
    assertThat(originals(h)).containsExactly("X-Id=3");
  }

  @Test
  void ofKeepsTheLastValueForRepeatedKeys() {
    Headers h = Headers.of("a", "1", "A", "2");

    assertThat(h.size()).isEqualTo(1);
    assertThat(h.get("a")).isEqualTo("2");
  }

  @Test
  void ofRejectsAnOddNumberOfArguments() {
    assertThatThrownBy(() -> Headers.of("a", "1", "b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pairs");
    assertThatThrownBy(() -> Headers.of("a")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void ofWithNoArgumentsIsEmpty() {
    assertThat(Headers.of()).isEqualTo(Headers.empty());
    assertThat(Headers.of().isEmpty()).isTrue();
  }

  @Test
  void nullKeysAndValuesAreRejected() {
    assertThatThrownBy(() -> Headers.builder().add(null, "v"))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> Headers.builder().add("k", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("value");
    assertThatThrownBy(() -> Headers.of("k", null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void emptyHeaders() {
    Headers empty = Headers.empty();

    assertThat(empty.isEmpty()).isTrue();
    assertThat(empty.size()).isZero();
    assertThat(empty.get("anything")).isNull();
    assertThat(empty.keys()).isEmpty();
    assertThat(empty.asMap()).isEmpty();
    assertThat(empty).isEqualTo(Headers.builder().build());
    assertThat(empty).isEqualTo(Headers.fromMap(Map.of()));
    assertThat(empty.hashCode()).isEqualTo(Headers.builder().build().hashCode());
    assertThat(empty.toBuilder().add("a", "1").build().get("a")).isEqualTo("1");
    assertThat(Headers.empty().isEmpty()).as("empty() is not mutated by a builder").isTrue();
  }

  @Test
  void builderCanKeepBeingUsedAfterBuildWithoutChangingWhatWasBuilt() {
    Headers.Builder b = Headers.builder().add("A", "1").add("B", "2");
    Headers first = b.build();

    b.add("a", "changed").add("C", "3").remove("b");
    Headers second = b.build();

    assertThat(first.asMap()).containsExactly(entry("a", "1"), entry("b", "2"));
    assertThat(originals(first)).containsExactly("A=1", "B=2");
    assertThat(second.asMap()).containsExactly(entry("a", "changed"), entry("c", "3"));
    assertThat(originals(second)).containsExactly("A=changed", "C=3");
  }

  @Test
  void builderOverwritingAfterBuildDoesNotLeakIntoBuiltHeaders() {
    Headers.Builder b = Headers.builder().add("Key", "1");
    Headers first = b.build();
    b.add("key", "2");
    Headers second = b.build();
    b.add("KEY", "3");
    Headers third = b.build();

    assertThat(first.get("key")).isEqualTo("1");
    assertThat(second.get("key")).isEqualTo("2");
    assertThat(third.get("key")).isEqualTo("3");
  }

  @Test
  void buildingTwiceWithoutChangesGivesEqualHeaders() {
    Headers.Builder b = Headers.builder().add("a", "1");
    Headers first = b.build();
    Headers second = b.build();

    assertThat(second).isEqualTo(first);
    assertThat(b.get("A")).isEqualTo("1");
  }

  @Test
  void builderGetSeesPendingValues() {
    Headers.Builder b = Headers.builder();
    assertThat(b.get("a")).isNull();
    b.add("A", "1");
    assertThat(b.get("a")).isEqualTo("1");
    b.build();
    assertThat(b.get("a")).as("after build").isEqualTo("1");
    b.add("a", "2");
    assertThat(b.get("A")).isEqualTo("2");
    b.remove("A");
    assertThat(b.get("a")).isNull();
  }

  @Test
  void removeIgnoresCase() {
    Headers h = Headers.of("X-Foo", "1", "bar", "2").toBuilder().remove("x-FOO").build();

    assertThat(h.keys()).containsExactly("bar");
  }

  @Test
  void removingEverythingGivesEmptyHeaders() {
    Headers h = Headers.of("a", "1").toBuilder().remove("A").build();

    assertThat(h.isEmpty()).isTrue();
    assertThat(h).isEqualTo(Headers.empty());
  }

  @Test
  void toBuilderDoesNotMutateTheOriginal() {
    Headers original = Headers.of("A", "1", "B", "2");

    Headers derived = original.toBuilder().add("a", "x").remove("b").add("C", "3").build();

    assertThat(original.asMap()).containsExactly(entry("a", "1"), entry("b", "2"));
    assertThat(originals(original)).containsExactly("A=1", "B=2");
    assertThat(derived.asMap()).containsExactly(entry("a", "x"), entry("c", "3"));
    assertThat(originals(derived)).containsExactly("A=x", "C=3");
  }

  @Test
  void addAllKeepsOriginalCasingAndOverrides() {
    Headers base = Headers.of("X-A", "1", "X-B", "2");

    Headers h = Headers.builder().add("x-b", "old").addAll(base).build();

    assertThat(h.asMap()).containsExactly(entry("x-b", "2"), entry("x-a", "1"));
    assertThat(originals(h)).containsExactly("x-b=2", "X-A=1");
  }

  @Test
  void fromMapKeepsIterationOrderAndCasing() {
    Map<String, String> map = new LinkedHashMap<>();
    map.put("Zeta", "z");
    map.put("alpha", "a");
    map.put("Mid", "m");

    Headers h = Headers.fromMap(map);

    assertThat(h.keys()).containsExactly("zeta", "alpha", "mid");
    assertThat(originals(h)).containsExactly("Zeta=z", "alpha=a", "Mid=m");
  }

  @Test
  void equalsAndHashCodeIgnoreKeyCasingAndOrder() {
    Headers a = Headers.of("X-Foo", "1", "Bar", "2");
    Headers b = Headers.of("bar", "2", "x-foo", "1");

    assertThat(a).isEqualTo(b);
    assertThat(b).isEqualTo(a);
    assertThat(a.hashCode()).isEqualTo(b.hashCode());
    assertThat(a).isEqualTo(a);
  }

  @Test
  void equalsComparesValuesCaseSensitively() {
    Headers a = Headers.of("k", "Value");

    assertThat(a).isNotEqualTo(Headers.of("k", "value"));
    assertThat(a).isNotEqualTo(Headers.of("k", "Value", "other", "x"));
    assertThat(a).isNotEqualTo(Headers.empty());
    assertThat(a).isNotEqualTo(null);
    assertThat(a).isNotEqualTo(Map.of("k", "Value"));
  }

  @Test
  void viewsAreUnmodifiable() {
    Headers h = Headers.of("a", "1");

    assertThatThrownBy(() -> h.keys().add("b")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> h.keys().remove("a"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> h.asMap().put("b", "2"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(h.get("a")).isEqualTo("1");
  }

  @Test
  void canonicalizeOnlyLowerCases() {
    assertThat(Headers.canonicalize("Content-Type")).isEqualTo("content-type");
    assertThat(Headers.canonicalize("X_Under Score!")).isEqualTo("x_under score!");
    assertThat(Headers.canonicalize("ÄÖÜ-Key")).isEqualTo("äöü-key");
    String lower = "already-lower";
    assertThat(Headers.canonicalize(lower)).isSameAs(lower);
    assertThat(Headers.canonicalize("")).isEmpty();
  }

  @Test
  void nonAsciiKeysAreCaseInsensitiveToo() {
    Headers h = Headers.of("Grüße", "1");

    assertThat(h.get("GRÜSSE")).as("no Unicode folding beyond lower-casing").isNull();
    assertThat(h.get("GRÜßE")).isEqualTo("1");
    assertThat(h.keys()).containsExactly("grüße");
  }

  @Test
  void emptyKeyAndValueAreAllowed() {
    Headers h = Headers.of("", "", "k", "");

    assertThat(h.size()).isEqualTo(2);
    assertThat(h.get("")).isEmpty();
    assertThat(h.get("K")).isEmpty();
    assertThat(h.contains("k")).isTrue();
  }

  @Test
  void toStringShowsKeysButNotValues() {
    String s = Headers.of("Authorization", "secret-token").toString();

    assertThat(s).contains("authorization").doesNotContain("secret-token");
  }

  @Test
  void manyHeadersAcrossTheIndexThresholdKeepOrderCasingAndLastValue() {
    int n = 3 * Headers.INDEXED_FROM;
    Headers.Builder b = Headers.builder();
    for (int i = 0; i < n; i++) {
      b.add("X-Key-" + i, "v" + i);
    }
    b.add("x-key-3", "again").add("X-KEY-" + (n - 1), "last");
    Headers h = b.build();

    assertThat(h.size()).isEqualTo(n);
    for (int i = 0; i < n; i++) {
      assertThat(h.get("x-KEY-" + i)).as("key %d", i).isNotNull();
    }
    assertThat(h.get("X-Key-3")).isEqualTo("again");
    assertThat(h.get("x-key-" + (n - 1))).isEqualTo("last");
    assertThat(h.get("x-key-" + n)).isNull();
    assertThat(originals(h).get(3)).isEqualTo("X-Key-3=again");
    assertThat(h.keys()).first().isEqualTo("x-key-0");
    assertThat(h.keys()).last().isEqualTo("x-key-" + (n - 1));
  }

  @Test
  void removingBelowTheIndexThresholdStillFindsEveryKey() {
    Headers.Builder b = Headers.builder();
    for (int i = 0; i < Headers.INDEXED_FROM + 2; i++) {
      b.add("k" + i, "v" + i);
    }
    Headers before = b.build();
    b.remove("K0").remove("k5").remove("K" + (Headers.INDEXED_FROM + 1)).remove("absent");
    Headers after = b.build();

    assertThat(after.size()).isEqualTo(Headers.INDEXED_FROM - 1);
    assertThat(after.get("k0")).isNull();
    assertThat(after.get("k5")).isNull();
    assertThat(after.get("k6")).isEqualTo("v6");
    assertThat(after.get("K" + Headers.INDEXED_FROM)).isEqualTo("v" + Headers.INDEXED_FROM);
    assertThat(after.keys()).first().isEqualTo("k1");
    assertThat(before.size()).as("headers built earlier are unchanged").isEqualTo(18);
    assertThat(before.get("k0")).isEqualTo("v0");
    assertThat(before.get("k5")).isEqualTo("v5");
  }

  @Test
  void aBuilderFromHeadersNeverChangesThem() {
    for (int n : new int[] {1, Headers.INDEXED_FROM + 1}) {
      Headers.Builder b = Headers.builder();
      for (int i = 0; i < n; i++) {
        b.add("K" + i, "v" + i);
      }
      Headers original = b.build();
      Map<String, String> snapshot = original.asMap();

      Headers derived =
          original.toBuilder().add("k0", "changed").add("new", "1").remove("K" + (n - 1)).build();
      assertThat(derived.size()).isEqualTo(n);
      b.add("K0", "builder changed").add("more", "2");
      Headers rebuilt = b.build();

      assertThat(original.asMap()).as("n=%d", n).isEqualTo(snapshot);
      assertThat(original.toBuilder().build()).isSameAs(original);
      assertThat(derived.get("K0")).isEqualTo(n == 1 ? null : "changed");
      assertThat(derived.get("K" + (n - 1))).isNull();
      assertThat(derived.get("new")).isEqualTo("1");
      assertThat(rebuilt.get("k0")).isEqualTo("builder changed");
      assertThat(rebuilt.get("more")).isEqualTo("2");
      assertThat(originals(derived).get(0))
          .as("the first casing is kept")
          .isEqualTo(n == 1 ? "new=1" : "K0=changed");
    }
  }

  @Test
  void removingEveryHeaderLeavesTheEmptyHeaders() {
    Headers h = Headers.of("a", "1", "B", "2").toBuilder().remove("A").remove("b").build();

    assertThat(h).isSameAs(Headers.empty());
    assertThat(h.isEmpty()).isTrue();
  }
}

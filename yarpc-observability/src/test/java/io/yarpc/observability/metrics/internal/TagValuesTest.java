package io.yarpc.observability.metrics.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Tag values scrubbed as yarpc-go's metrics library scrubs them ({@code scrubTagValue}). */
class TagValuesTest {
  @Test
  void scrubsAsYarpcGo() {
    // yarpc-go's own cases (go.uber.org/net/metrics tag_test.go)
    assertThat(TagValues.scrub("foo")).isEqualTo("foo");
    assertThat(TagValues.scrub("")).isEqualTo("default");
    assertThat(TagValues.scrub("foo!")).isEqualTo("foo_");
    assertThat(TagValues.scrub("!foo")).isEqualTo("_foo");
    assertThat(TagValues.scrub("fOo1.!FoO")).isEqualTo("fOo1._FoO");
    // what procedures and codes look like
    assertThat(TagValues.scrub("pkg.KeyValue::GetValue")).isEqualTo("pkg.KeyValue__GetValue");
    assertThat(TagValues.scrub("invalid-argument")).isEqualTo("invalid-argument");
    assertThat(TagValues.scrub("/grpc.health.v1.Health/Check"))
        .isEqualTo("_grpc.health.v1.Health_Check");
    // Go works on UTF-8 bytes: one underscore per byte
    assertThat(TagValues.scrub("é")).isEqualTo("__");
    assertThat(TagValues.scrub("€")).isEqualTo("___");
    assertThat(TagValues.scrub("a😀b")).isEqualTo("a____b");
  }
}

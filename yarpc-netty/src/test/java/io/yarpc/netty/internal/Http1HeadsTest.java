package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class Http1HeadsTest {
  @Test
  void theAbsoluteFormOfATargetReadsAsItsOriginForm() {
    assertThat(Http1Heads.originForm("/health")).isEqualTo("/health");
    assertThat(Http1Heads.originForm("/health?v=1")).isEqualTo("/health?v=1");
    assertThat(Http1Heads.originForm("http://example.com/health")).isEqualTo("/health");
    assertThat(Http1Heads.originForm("HTTP://example.com:8080/a/b?v=1")).isEqualTo("/a/b?v=1");
    assertThat(Http1Heads.originForm("https://[::1]:8443/x")).isEqualTo("/x");
    assertThat(Http1Heads.originForm("http://example.com")).isEqualTo("/");
    assertThat(Http1Heads.originForm("http://example.com?v=1")).isEqualTo("/?v=1");
    // not a URI of HTTP: left as it is
    assertThat(Http1Heads.originForm("*")).isEqualTo("*");
    assertThat(Http1Heads.originForm("ftp://example.com/x")).isEqualTo("ftp://example.com/x");
    assertThat(Http1Heads.originForm("/a://b")).isEqualTo("/a://b");
  }

  @Test
  void hostValuesAreWhatAUriHostAndPortMayHold() {
    assertThat(Http1Heads.isHostAndPort("")).isTrue();
    assertThat(Http1Heads.isHostAndPort("example.com:8080")).isTrue();
    assertThat(Http1Heads.isHostAndPort("[fe80::1%25eth0]:80")).isTrue();
    for (String bad : new String[] {"a b", "a/b", "a\"b", "a@b", "é", "a\tb"}) {
      assertThat(Http1Heads.isHostAndPort(bad)).as(bad).isFalse();
    }
  }
}

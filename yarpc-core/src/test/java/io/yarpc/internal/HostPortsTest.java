package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostPortsTest {
  @Test
  void peersAreTrimmedAndKept() {
    assertThat(HostPorts.checkPeer(" 10.0.0.1:8080 ")).isEqualTo("10.0.0.1:8080");
    assertThat(HostPorts.checkPeer("[::1]:80")).isEqualTo("[::1]:80");
    assertThat(HostPorts.checkPeer("users.svc:65535")).isEqualTo("users.svc:65535");
    assertThat(HostPorts.checkPeer(":8080", "127.0.0.1")).isEqualTo("127.0.0.1:8080");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "localhost|no port",
        ":80|no host",
        "10.0.0.2:0|the port must be 1 to 65535",
        "10.0.0.2:65536|the port must be 1 to 65535",
        "::1:80|an IPv6 host goes in brackets, [::1]:8080",
        "[::1:80|an IPv6 host needs its closing bracket",
        "b:http|the port is not a number",
        "b:|the port is not a number",
        "a b:80|the host has a space, '/' or '@'",
        "http://a:80|the host has a space, '/' or '@'",
      })
  void badPeersSayWhatIsWrong(String text, String why) {
    assertThatThrownBy(() -> HostPorts.checkPeer(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not host:port: " + GoStrings.quote(text) + " (" + why + ")");
  }

  @Test
  void aShortFormKeepsTheTextInItsError() {
    assertThatThrownBy(() -> HostPorts.checkPeer(":x", "127.0.0.1"))
        .hasMessage("not host:port: \":x\" (the port is not a number)");
  }

  @Test
  void controlCharactersAreQuotedAsGoDoes() {
    assertThatThrownBy(() -> HostPorts.checkPeer("a\tb:80"))
        .hasMessage("not host:port: \"a\\tb:80\" (the host has a space, '/' or '@')");
  }

  @Test
  void listenAddresses() {
    assertThat(HostPorts.parseListen(":0"))
        .isEqualTo(InetSocketAddress.createUnresolved("0.0.0.0", 0));
    assertThat(HostPorts.parseListen("127.0.0.1:8080"))
        .isEqualTo(InetSocketAddress.createUnresolved("127.0.0.1", 8080));
    assertThat(HostPorts.parseListen("[::1]:9"))
        .isEqualTo(InetSocketAddress.createUnresolved("::1", 9));
    assertThatThrownBy(() -> HostPorts.parseListen("localhost"))
        .hasMessage("not host:port: \"localhost\" (no port)");
    assertThatThrownBy(() -> HostPorts.parseListen("[::1]:99999"))
        .hasMessage("not host:port: \"[::1]:99999\" (the port must be 0 to 65535)");
  }
}

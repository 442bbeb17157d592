package io.yarpc.discovery.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.discovery.FilePeerListUpdater.Format;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The peers file's two shapes in JSON and YAML, and the exact error of each kind of bad file. */
class PeersFileTest {
  private static List<String> parse(String content, Format format) {
    return PeersFile.parse(content.getBytes(UTF_8), format);
  }

  @Test
  void aListOfHostPorts() {
    assertThat(
            parse("- 10.0.0.1:8080\n- users.internal:80\n- \"[2001:db8::1]:8080\"\n", Format.YAML))
        .containsExactly("10.0.0.1:8080", "users.internal:80", "[2001:db8::1]:8080");
    assertThat(parse("[\"10.0.0.1:8080\", \" 10.0.0.2:8080 \"]", Format.JSON))
        .containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
    assertThat(parse("[10.0.0.1:8080, 10.0.0.2:8080]  # flow style\n", Format.YAML))
        .containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
  }

  @Test
  void targetGroupsAsPrometheusWritesThem() {
    String json =
        "[{\"targets\": [\"10.0.0.1:8080\", \"10.0.0.2:8080\"], \"labels\": {\"zone\": \"a\"}},\n"
            + " {\"targets\": [\"10.0.0.3:8080\"]}, \"10.0.0.4:8080\"]";
    assertThat(parse(json, Format.JSON))
        .containsExactly("10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.4:8080");
    String yaml = "- targets:\n    - 10.0.0.1:8080\n  labels: {zone: a}\n";
    assertThat(parse(yaml, Format.YAML)).containsExactly("10.0.0.1:8080");
  }

  @Test
  void anEmptyListIsNoPeers() {
    assertThat(parse("[]", Format.JSON)).isEmpty();
    assertThat(parse("[]\n", Format.YAML)).isEmpty();
  }

  static Stream<Arguments> badFiles() {
    return Stream.of(
        Arguments.of("", Format.YAML, "is empty"),
        Arguments.of("  \n", Format.JSON, "is empty"),
        Arguments.of("# only a comment\n", Format.YAML, "is empty"),
        Arguments.of(
            "peers: [10.0.0.1:80]\n",
            Format.YAML,
            "expected a list of host:port or target groups, got a mapping"),
        Arguments.of(
            "\"10.0.0.1:80\"",
            Format.JSON,
            "expected a list of host:port or target groups, got a string"),
        Arguments.of(
            "- 10.0.0.1:80\n- localhost\n- 10.0.0.2:0\n- ::1:80\n- 8080\n",
            Format.YAML,
            "[1]: not host:port: \"localhost\" (no port); [2]: not host:port: \"10.0.0.2:0\" (the"
                + " port must be 1 to 65535); [3]: not host:port: \"::1:80\" (an IPv6 host goes in"
                + " brackets, [::1]:8080); [4]: expected host:port or a target group {targets:"
                + " [...]}, got a number"),
        Arguments.of(
            "[\"a:1\", \"b:http\", \"[::1:80\", \":80\", \"a b:80\"]",
            Format.JSON,
            "[1]: not host:port: \"b:http\" (the port is not a number); [2]: not host:port:"
                + " \"[::1:80\" (an IPv6 host needs its closing bracket); [3]: not host:port:"
                + " \":80\" (no host); [4]: not host:port: \"a b:80\" (the host has a space, '/' or"
                + " '@')"),
        Arguments.of(
            "[{\"labels\": {}}, {\"targets\": \"a:1\"}, {\"targets\": [1], \"zone\": \"a\"}, null]",
            Format.JSON,
            "[0]: a target group needs targets: [host:port, ...]; [1].targets: expected a list of"
                + " host:port, got a string; [2].zone: unknown key (a target group has targets and"
                + " labels); [2].targets[0]: expected host:port, got a number; [3]: expected"
                + " host:port or a target group {targets: [...]}, got null"),
        Arguments.of(
            "[\"10.0.0.1:80\",",
            Format.JSON,
            "not valid JSON: End of input at line 1 column 16 path $[1]"),
        Arguments.of(
            "['10.0.0.1:80']",
            Format.JSON,
            "not valid JSON: syntax error at line 1 column 3 path $[0]"),
        Arguments.of(
            "[] []", Format.JSON, "not valid JSON: syntax error at line 1 column 5 path $"));
  }

  @ParameterizedTest
  @MethodSource("badFiles")
  void badFilesSayWhatIsWrongAndWhere(String content, Format format, String message) {
    assertThatThrownBy(() -> parse(content, format))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void badYamlAndBadBytesSayWhatIsWrong() {
    assertThatThrownBy(() -> parse("- 10.0.0.1:80\n- [unclosed\n", Format.YAML))
        .hasMessageStartingWith("not valid YAML: while parsing a flow sequence")
        .hasMessageContaining("line 2, column 3");
    assertThatThrownBy(() -> parse("{a: 1, a: 2}", Format.YAML))
        .hasMessageContaining("found duplicate key a");
    assertThatThrownBy(() -> PeersFile.parse(new byte[] {'[', (byte) 0xff, ']'}, Format.JSON))
        .hasMessage("is not UTF-8 text");
  }
}

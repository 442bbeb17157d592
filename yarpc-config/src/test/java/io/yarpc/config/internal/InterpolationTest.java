package io.yarpc.config.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** yarpc-go's interpolation syntax, rule by rule. */
class InterpolationTest {
  private final Interpolation env =
      new Interpolation(Map.of("HOST", "10.0.0.1", "PORT", "8080", "EMPTY", "", "a.b-c", "x")::get);

  @Test
  void variablesAndDefaults() {
    assertThat(env.render("${HOST}:${PORT}")).isEqualTo("10.0.0.1:8080");
    assertThat(env.render("${UNSET:127.0.0.1}:${PORT:9}")).isEqualTo("127.0.0.1:8080");
    assertThat(env.render("${UNSET:}")).isEmpty();
    assertThat(env.render("${EMPTY:default}")).as("set to empty is set").isEmpty();
    assertThat(env.render("${UNSET:a:b}")).as("the default runs to the '}'").isEqualTo("a:b");
    assertThat(env.render("${a.b-c}")).isEqualTo("x");
    assertThat(env.render("1${PORT}")).isEqualTo("18080");
  }

  @Test
  void literalsAndEscapes() {
    assertThat(env.render("no variables")).isEqualTo("no variables");
    assertThat(env.render("$HOST and $")).isEqualTo("$HOST and $");
    assertThat(env.render("\\${HOST}")).isEqualTo("${HOST}");
    assertThat(env.render("C:\\\\certs")).isEqualTo("C:\\certs");
  }

  @Test
  void errors() {
    assertThatThrownBy(() -> env.render(":${HTTP_PORT}"))
        .hasMessage("variable \"HTTP_PORT\" is not set and \":${HTTP_PORT}\" gives no default");
    assertThatThrownBy(() -> env.render(":${HTTP_PORT"))
        .hasMessage("cannot interpolate \":${HTTP_PORT\": \"${\" without a closing '}'");
    assertThatThrownBy(() -> env.render("${1X}"))
        .hasMessage("cannot interpolate \"${1X}\": \"1X\" is not a variable name");
    assertThatThrownBy(() -> env.render("${a..b}"))
        .hasMessage("cannot interpolate \"${a..b}\": \"a..b\" is not a variable name");
    assertThatThrownBy(() -> env.render("trailing\\"))
        .hasMessage("cannot interpolate \"trailing\\\": it ends with a lone '\\'");
  }
}

package io.yarpc.encoding.json;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The JSON encoder's writer produces exactly the bytes {@code String.getBytes(UTF_8)} would. */
class Utf8BodyWriterTest {
  private static byte[] written(String... parts) {
    Utf8BodyWriter w = new Utf8BodyWriter();
    for (String p : parts) {
      if (p.length() == 1) {
        w.write(p.charAt(0));
      } else {
        w.write(p, 0, p.length());
      }
    }
    return w.toBody().toByteArray();
  }

  @Test
  void encodesEveryWidthLikeTheJdk() {
    String s = "ascii é ü ß 中文 € \uD83D\uDE00 end";
    assertThat(written(s)).isEqualTo(s.getBytes(UTF_8));
    Utf8BodyWriter w = new Utf8BodyWriter();
    w.write(s.toCharArray(), 2, 10);
    assertThat(w.toBody().toByteArray()).isEqualTo(s.substring(2, 12).getBytes(UTF_8));
  }

  @Test
  void aSurrogatePairSplitAcrossWritesStaysOneCharacter() {
    assertThat(written("a\uD83D", "\uDE00b")).isEqualTo("a\uD83D\uDE00b".getBytes(UTF_8));
    assertThat(written("\uD83D", "\uDE00")).isEqualTo("\uD83D\uDE00".getBytes(UTF_8));
  }

  @Test
  void malformedSurrogatesBecomeQuestionMarksAsInTheJdk() {
    for (String s : new String[] {"a\uDE00b", "a\uD83Db", "end\uD83D", "\uD83D\uD83D\uDE00"}) {
      assertThat(written(s)).as(s).isEqualTo(s.getBytes(UTF_8));
    }
  }

  @Test
  void growsForLargeValues() {
    StringBuilder sb = new StringBuilder();
    Random random = new Random(3);
    while (sb.length() < 300_000) {
      sb.appendCodePoint(
          random.nextInt(4) == 0 ? 0x1F600 + random.nextInt(50) : 0x20 + random.nextInt(0x3000));
    }
    String s = sb.toString();
    assertThat(written(s)).isEqualTo(s.getBytes(UTF_8));
  }
}

package io.yarpc.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WireTextTest {
  @Test
  void detailsUpTo256BytesTravelWhole() {
    String details = "é".repeat(128); // 256 bytes
    assertThat(WireText.details(details)).isSameAs(details);
  }

  @Test
  void longerDetailsAreCutTo256BytesEndingInTheMarker() {
    String cut = WireText.details("x".repeat(300));
    assertThat(cut).isEqualTo("x".repeat(244) + " (truncated)");
    assertThat(cut.getBytes(UTF_8)).hasSize(256);
  }

  @Test
  void theCutNeverSplitsACharacter() {
    // 61 four-byte characters are 244 bytes: the 62nd would not leave room for the marker
    String cut = WireText.details("😀".repeat(100));
    assertThat(cut).isEqualTo("😀".repeat(61) + " (truncated)");
    String shifted = WireText.details("a" + "😀".repeat(100));
    assertThat(shifted).isEqualTo("a" + "😀".repeat(60) + " (truncated)");
    assertThat(shifted.getBytes(UTF_8).length).isLessThanOrEqualTo(256);
    assertThat(new String(shifted.getBytes(UTF_8), UTF_8)).doesNotContain("\uFFFD");
  }

  @Test
  void truncateMeasuresWithTheWiresCost() {
    // a wire that spends three bytes on every non-ASCII byte (percent-encoding, say)
    String cut =
        WireText.truncate("ééééé", 12 + 12, cp -> cp < 0x80 ? 1 : 3 * WireText.utf8Length(cp));
    assertThat(cut).isEqualTo("éé (truncated)");
  }

  @Test
  void aTextThatFitsIsReturnedAsIs() {
    assertThat(WireText.truncate("", 12, WireText::utf8Length)).isEmpty();
    String twelve = "abcdefghijkl";
    assertThat(WireText.truncate(twelve, 12, WireText::utf8Length)).isSameAs(twelve);
  }

  @Test
  void aBudgetThatCannotHoldTheMarkerIsRefused() {
    assertThatThrownBy(() -> WireText.truncate("abc", 11, WireText::utf8Length))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void utf8Lengths() {
    assertThat(WireText.utf8Length('a')).isEqualTo(1);
    assertThat(WireText.utf8Length('é')).isEqualTo(2);
    assertThat(WireText.utf8Length('€')).isEqualTo(3);
    assertThat(WireText.utf8Length("😀".codePointAt(0))).isEqualTo(4);
  }
}

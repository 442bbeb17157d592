package io.yarpc.peer.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Farmhash#fingerprint32} against known fingerprints: go-farm's test vectors (the hash yarpc-go's
 * hashring32 uses; inputs of every length branch: 0-4, 5-12, 13-24, longer) and values printed by
 * Google's C++ FarmHash (the npm package {@code farmhash} 5.0.1) for non-ASCII inputs, whose bytes the
 * 0-4 branch reads as signed. (The Rust port in the npm package {@code farmhash-modern} reads them as
 * unsigned and differs there: {@code £} is 06a1b412 in it.)
 */
class FarmhashTest {
  @ParameterizedTest(name = "\"{0}\"")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        // go-farm farmhash_test.go, column oh32
        "``|dc56d17a",
        "a|3c973d4d",
        "ab|417330fd",
        "abc|2f635ec7",
        "abcd|98b51e95",
        "abcde|a3f366ac",
        "abcdefgh|fd7ec8b9",
        "0123456789|9741ca1a",
        "0123456789-0|f8cc7928",
        "0123456789~01|0d92cafb",
        "0123456789'01234|9cecd750",
        "0123456789$0123456789!0|fa88d020",
        "0123456789%0123456789£|1723dd7a",
        "size:  a.out:  bad magic|c6246b8d",
        "Nepal premier won't resign.|322984d9",
        "Discard medicine more than two years old.|e273108f",
        "He who has a shady past knows that nice guys finish last.|f585dfc4",
        // npm farmhash 5.0.1: fingerprint32(Buffer.from(s, 'utf8'))
        "£|05e85978",
        "é|75a86f6b",
        "ÿþ|0e34b136",
        "\uD83D\uDE00|633942f2",
        "été|1cf3ab7f",
        "日本|8f0a8853",
        "shard-1#0|0029d266",
        "\uD83D\uDE00key|b8024501",
      })
  void matchesKnownFingerprints(String input, String hex) {
    assertThat(Integer.toHexString(Farmhash.fingerprint32(input.getBytes(UTF_8))))
        .isEqualTo(hex.replaceFirst("^0+(?=.)", ""));
  }

  @Test
  void longInputsMatchToo() {
    String lorem =
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut"
            + " labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation"
            + " ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in"
            + " reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur"
            + " sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id"
            + " est laborum.";
    assertThat(Farmhash.fingerprint32(lorem.getBytes(UTF_8))).isEqualTo(0xd402abf8);
    assertThat(Farmhash.fingerprint32("x".repeat(100).getBytes(UTF_8))).isEqualTo(0x07f68798);
  }

  @Test
  void hashesARangeOfAnArray() {
    byte[] padded = "--0123456789--".getBytes(UTF_8);
    assertThat(Farmhash.fingerprint32(padded, 2, 10)).isEqualTo(0x9741ca1a);
  }

  @Test
  void theRingHashesAStringAsItsUtf8Bytes() {
    HashRing32 ring = new HashRing32(1, "");
    Random random = new Random(7);
    for (int i = 0; i < 5_000; i++) {
      char[] chars = new char[random.nextInt(40)];
      for (int j = 0; j < chars.length; j++) {
        // ASCII, two- and three-byte chars, and surrogates (paired or not)
        int kind = random.nextInt(4);
        chars[j] =
            (char)
                (kind == 0
                    ? random.nextInt(0x80)
                    : kind == 1
                        ? 0x80 + random.nextInt(0x780)
                        : kind == 2
                            ? 0x800 + random.nextInt(0xd000)
                            : 0xd800 + random.nextInt(0x800));
      }
      String s = new String(chars);
      assertThat(ring.fingerprint(s))
          .as("fingerprint of %s", s)
          .isEqualTo(Farmhash.fingerprint32(s.getBytes(UTF_8)));
    }
  }
}

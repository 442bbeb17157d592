package io.yarpc.errors;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class CodeTest {

  /** docs/spec/model.md §2.1: number, wire name and fault class of every code. */
  @ParameterizedTest
  @CsvSource({
    "0,  OK,                  ok,                  ",
    "1,  CANCELLED,           cancelled,           CLIENT",
    "2,  UNKNOWN,             unknown,             SERVER",
    "3,  INVALID_ARGUMENT,    invalid-argument,    CLIENT",
    "4,  DEADLINE_EXCEEDED,   deadline-exceeded,   SERVER",
    "5,  NOT_FOUND,           not-found,           CLIENT",
    "6,  ALREADY_EXISTS,      already-exists,      CLIENT",
    "7,  PERMISSION_DENIED,   permission-denied,   CLIENT",
    "8,  RESOURCE_EXHAUSTED,  resource-exhausted,  CLIENT",
    "9,  FAILED_PRECONDITION, failed-precondition, CLIENT",
    "10, ABORTED,             aborted,             CLIENT",
    "11, OUT_OF_RANGE,        out-of-range,        CLIENT",
    "12, UNIMPLEMENTED,       unimplemented,       CLIENT",
    "13, INTERNAL,            internal,            SERVER",
    "14, UNAVAILABLE,         unavailable,         SERVER",
    "15, DATA_LOSS,           data-loss,           SERVER",
    "16, UNAUTHENTICATED,     unauthenticated,     CLIENT",
  })
  void matchesTheSpec(int value, Code code, String wireName, FaultType faultType) {
    assertThat(code.value()).isEqualTo(value);
    assertThat(code.wireName()).isEqualTo(wireName);
    assertThat(code.toString()).isEqualTo(wireName);
    assertThat(code.faultType()).isEqualTo(faultType);
    assertThat(Code.fromValue(value)).isSameAs(code);
    assertThat(Code.fromWireName(wireName)).isSameAs(code);
  }

  @Test
  void thereAreExactlySeventeenCodesNumberedZeroToSixteen() {
    assertThat(Code.values()).hasSize(17);
    assertThat(Arrays.stream(Code.values()).mapToInt(Code::value))
        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    assertThat(Arrays.stream(Code.values()).map(Code::wireName).distinct()).hasSize(17);
  }

  @ParameterizedTest
  @EnumSource(Code.class)
  void fromWireNameIgnoresCase(Code code) {
    assertThat(Code.fromWireName(code.wireName().toUpperCase(Locale.ROOT))).isSameAs(code);
    String mixed = Character.toUpperCase(code.wireName().charAt(0)) + code.wireName().substring(1);
    assertThat(Code.fromWireName(mixed)).isSameAs(code);
  }

  @Test
  void fromWireNameExamples() {
    assertThat(Code.fromWireName("INVALID-ARGUMENT")).isSameAs(Code.INVALID_ARGUMENT);
    assertThat(Code.fromWireName("Deadline-Exceeded")).isSameAs(Code.DEADLINE_EXCEEDED);
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 17, 18, 100, Integer.MAX_VALUE, Integer.MIN_VALUE})
  void unknownNumbersGiveNull(int value) {
    assertThat(Code.fromValue(value)).isNull();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "invalid_argument",
        "INVALID_ARGUMENT",
        "invalidargument",
        " ok",
        "ok ",
        "timeout",
        "2"
      })
  void unknownNamesGiveNull(String name) {
    assertThat(Code.fromWireName(name)).isNull();
  }

  @Test
  void nullNameGivesNull() {
    assertThat(Code.fromWireName(null)).isNull();
  }
}

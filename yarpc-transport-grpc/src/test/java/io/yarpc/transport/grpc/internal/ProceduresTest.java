package io.yarpc.transport.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Procedure names to gRPC paths and back, as yarpc-go maps them (docs/spec/wire-grpc.md §4.1). */
class ProceduresTest {
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "uber.yarpc.internal.crossdock.Echo::Echo | uber.yarpc.internal.crossdock.Echo/Echo",
        "echo | __default__/echo",
        "echo/raw | __default__/echo%2Fraw",
        "KeyValue::getValue | KeyValue/getValue",
        "a::b::c | a/b%3A%3Ac",
        "svc:: | __default__/svc",
        "'sp ace~*' | __default__/sp+ace~%2A",
        "ünï | __default__/%C3%BCn%C3%AF",
      })
  void outbound(String procedure, String path) {
    assertThat(Procedures.toFullMethodName(procedure)).isEqualTo(path);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "uber.yarpc.internal.crossdock.Echo/Echo | uber.yarpc.internal.crossdock.Echo::Echo",
        "/uber.yarpc.internal.crossdock.Echo/Echo | uber.yarpc.internal.crossdock.Echo::Echo",
        "__default__/echo | echo",
        "__default__/echo%2Fraw | echo/raw",
        "a/b/c | a/b::c",
        "__default__/sp+ace~%2A | 'sp ace~*'",
        "__default__/%C3%BCn%C3%AF | ünï",
        "pkg.Svc/ | pkg.Svc::",
      })
  void inbound(String path, String procedure) {
    assertThat(Procedures.toProcedure(path)).isEqualTo(procedure);
  }

  @Test
  void roundTrips() {
    for (String p :
        new String[] {"echo", "echo/raw", "Svc::Method", "a b", "100%", "x+y", "ü::ö"}) {
      assertThat(Procedures.toProcedure(Procedures.toFullMethodName(p))).as(p).isEqualTo(p);
    }
  }

  @Test
  void emptyServiceIsInvalid() {
    YarpcException e =
        catchThrowableOfType(YarpcException.class, () -> Procedures.toFullMethodName("::m"));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).isEqualTo("invalid procedure name: ::m");
  }

  @Test
  void pathWithoutSlashIsInvalid() {
    YarpcException e =
        catchThrowableOfType(YarpcException.class, () -> Procedures.toProcedure("noslash"));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).isEqualTo("invalid stream method name for request");
  }

  @Test
  void badEscapeIsInvalid() {
    YarpcException e =
        catchThrowableOfType(YarpcException.class, () -> Procedures.toProcedure("s/%zz"));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).isEqualTo("invalid URL escape \"%zz\"");
  }
}

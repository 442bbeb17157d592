package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ProcedureTest {
  private static Procedure.Builder echo() {
    return Procedure.builder("echo")
        .unary(r -> CompletableFuture.completedFuture(Response.of(r.body())));
  }

  @Test
  void schemaIsNullByDefaultAndKeptByToBuilder() {
    assertThat(echo().build().schema()).isNull();
    Object schema = "a schema";
    Procedure p = echo().schema(schema).service("svc").build();
    assertThat(p.schema()).isSameAs(schema);
    Procedure copy = p.toBuilder().encoding("raw").build();
    assertThat(copy.schema()).isSameAs(schema);
    assertThat(copy.toBuilder().schema(null).build().schema()).isNull();
  }
}

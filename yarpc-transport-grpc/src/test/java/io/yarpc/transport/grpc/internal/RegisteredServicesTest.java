package io.yarpc.transport.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.MethodDescriptor.MethodType;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.yarpc.internal.MapRouter;
import io.yarpc.transport.Body;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.grpc.testing.echo.EchoGrpc;
import io.yarpc.transport.grpc.testing.echo.EchoProto;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** What the router's procedures look like to health checks (names) and to reflection (definitions). */
class RegisteredServicesTest {
  private static final Object ECHO_SCHEMA = EchoGrpc.getServiceDescriptor().getSchemaDescriptor();
  private static final HandlerSpec SPEC =
      HandlerSpec.unary(r -> CompletableFuture.failedFuture(new AssertionError()));
  private static final ServerCallHandler<Body, Body> HANDLER =
      (call, headers) -> {
        throw new AssertionError("not called");
      };

  private final BodyMarshaller marshaller = new BodyMarshaller(new ReceiveStats());
  private final RegisteredServices registered = new RegisteredServices(marshaller, HANDLER);
  private final MapRouter router = new MapRouter("svc");

  private void register(String name, String service, String encoding, Object schema) {
    router.register(
        Procedure.builder(name)
            .service(service)
            .encoding(encoding)
            .schema(schema)
            .handler(SPEC)
            .build(),
        SPEC);
  }

  @Test
  void namesAreTheYarpcServicesAndTheGrpcServicePartsOfProcedures() {
    assertThat(registered.names(null)).isEmpty();
    register("echo/raw", "", "raw", null);
    register("yarpc.test.echo.Echo::Unary", "other", "proto", null);
    register("a::b::c", "", "raw", null);
    register("empty::", "", "raw", null);
    assertThat(registered.names(router))
        .containsExactly("a", "other", "svc", "yarpc.test.echo.Echo");
  }

  @Test
  void definitionsAreOnePerProtobufServiceWithTheRegisteredMethodsTheFileDeclares() {
    assertThat(registered.definitions(null)).isEmpty();
    for (String service : new String[] {"", "other"}) {
      for (String encoding : new String[] {"proto", "json"}) {
        register("yarpc.test.echo.Echo::Unary", service, encoding, ECHO_SCHEMA);
      }
    }
    register("yarpc.test.echo.Echo::Bidi", "", "proto", ECHO_SCHEMA);
    register("yarpc.test.echo.Echo::NotInTheFile", "", "proto", ECHO_SCHEMA);
    register(
        "not.In.TheFile::Unary", "", "proto", ECHO_SCHEMA); // a schema that does not declare it
    register("no.Schema::M", "", "proto", null);
    register("other.Schema::M", "", "proto", "not a file descriptor supplier");

    assertThat(registered.definitions(router)).hasSize(1);
    ServerServiceDefinition d = registered.definitions(router).get(0);
    assertThat(d.getServiceDescriptor().getName()).isEqualTo("yarpc.test.echo.Echo");
    assertThat(
            ((ProtoFileDescriptorSupplier) d.getServiceDescriptor().getSchemaDescriptor())
                .getFileDescriptor())
        .isSameAs(EchoProto.getDescriptor());
    assertThat(d.getMethods())
        .extracting(m -> m.getMethodDescriptor().getFullMethodName())
        .containsExactlyInAnyOrder("yarpc.test.echo.Echo/Bidi", "yarpc.test.echo.Echo/Unary");
    assertThat(d.getMethod("yarpc.test.echo.Echo/Bidi").getMethodDescriptor().getType())
        .isEqualTo(MethodType.BIDI_STREAMING);
    assertThat(d.getMethod("yarpc.test.echo.Echo/Unary").getMethodDescriptor().getType())
        .isEqualTo(MethodType.UNARY);
    assertThat(
            d.getMethod("yarpc.test.echo.Echo/Unary").getMethodDescriptor().getRequestMarshaller())
        .isSameAs(marshaller);
    assertThat(d.getMethod("yarpc.test.echo.Echo/Unary").getServerCallHandler()).isSameAs(HANDLER);
  }

  @Test
  void derivedOnceUntilTheRouterChanges() {
    register("yarpc.test.echo.Echo::Unary", "", "proto", ECHO_SCHEMA);
    ServerServiceDefinition first = registered.definitions(router).get(0);
    assertThat(registered.definitions(router).get(0)).isSameAs(first);
    register("yarpc.test.echo.Echo::ServerStream", "", "proto", ECHO_SCHEMA);
    ServerServiceDefinition second = registered.definitions(router).get(0);
    assertThat(second).isNotSameAs(first);
    assertThat(second.getMethods()).hasSize(2);
  }
}

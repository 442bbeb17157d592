/**
 * The {@code yarpc.examples.echo} protobuf service of the {@code yarpc-test} interop subject: the messages
 * and grpc-java classes generated from {@code src/main/proto/yarpc/examples/echo.proto}, and {@link
 * io.yarpc.examples.echo.EchoService}.
 */
package io.yarpc.examples.echo;

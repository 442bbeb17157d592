/**
 * Example: a grpc-java generated service served over YARPC, and generated stubs calling it through YARPC
 * and through plain grpc-java ({@link io.yarpc.examples.protobuf.ProtobufExample}).
 */
package io.yarpc.examples.protobuf;

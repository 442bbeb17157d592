/**
 * JMH micro-benchmarks of the receive path: protobuf, JSON and raw decode from byte-access and stream
 * bodies (heap, direct, multi-buffer), plain grpc-java's marshaller for reference, HTTP and TChannel header
 * codecs, TChannel frame encode and decode. Run with {@code java -jar yarpc-benchmarks.jar -prof gc}.
 */
package io.yarpc.benchmarks.jmh;

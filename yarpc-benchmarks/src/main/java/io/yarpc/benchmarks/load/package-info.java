/**
 * The end-to-end load harness: plain grpc-java against YARPC over gRPC, HTTP/1.1, h2c and TChannel, in one
 * process, with per-side allocation and CPU accounting. Start with {@link
 * io.yarpc.benchmarks.load.LoadHarness}.
 */
package io.yarpc.benchmarks.load;

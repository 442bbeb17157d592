/**
 * The end-to-end load harness: plain grpc-java against YARPC over gRPC, HTTP/1.1, h2c and TChannel, in one
 * process or with each server in a child JVM, with per-side allocation and CPU accounting, and the tables
 * of its results. Start with {@link io.yarpc.benchmarks.load.LoadHarness}.
 */
package io.yarpc.benchmarks.load;

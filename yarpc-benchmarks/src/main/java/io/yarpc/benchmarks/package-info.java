/**
 * Benchmarks of yarpc-java: JMH micro-benchmarks of the receive path ({@code io.yarpc.benchmarks.jmh}) and
 * the end-to-end load harness against plain grpc-java ({@code io.yarpc.benchmarks.load}). See
 * the README's Performance section.
 */
package io.yarpc.benchmarks;

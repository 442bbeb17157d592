/**
 * Configuration from a file: {@link io.yarpc.config.YarpcConfig} reads a YAML or JSON document with
 * yarpc-go's {@code yarpcconfig} keys ({@code inbounds}, {@code outbounds}, {@code transports}, {@code
 * logging}, {@code metrics}) and returns a {@link io.yarpc.Dispatcher.Builder}, to which code still adds
 * procedures and middleware. Every problem of a document is reported at once, with its key path, in one
 * {@link io.yarpc.config.ConfigException}.
 *
 * <p>The sections of each transport and peer list come from their specs ({@link
 * io.yarpc.config.spi.TransportSpec}, {@link io.yarpc.config.spi.PeerListSpec}, in core), found with
 * {@link java.util.ServiceLoader}: this module depends on core only, and a third-party transport adds
 * its section by putting its spec on the class path.
 */
package io.yarpc.config;

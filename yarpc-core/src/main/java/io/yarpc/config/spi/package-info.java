/**
 * The service-provider interface through which transports and peer lists contribute their sections to a
 * configuration file (the {@code yarpc-config} module reads YAML or JSON and builds a dispatcher from
 * it), as yarpc-go's {@code yarpcconfig.TransportSpec} and {@code PeerListSpec} do.
 *
 * <p>A transport module implements {@link io.yarpc.config.spi.TransportSpec} and lists the class in
 * {@code META-INF/services/io.yarpc.config.spi.TransportSpec}; a peer list implements {@link
 * io.yarpc.config.spi.PeerListSpec} and lists it in {@code META-INF/services/io.yarpc.config.spi.PeerListSpec};
 * a peer list updater (DNS, a file) implements {@link io.yarpc.config.spi.PeerListUpdaterSpec}, listed the
 * same way.
 * The configuration module finds them with {@link java.util.ServiceLoader}, so it depends on core only and a
 * third-party transport adds its own section without changing it. A module that configures the dispatcher
 * itself (yarpc-observability: {@code metrics}, {@code logging.levels}) implements {@link
 * io.yarpc.config.spi.SectionSpec} the same way.
 *
 * <p>A spec reads its section through {@link io.yarpc.config.spi.ConfigSection}: typed getters that never
 * throw but record a problem with the key's path (a missing required key, a wrong type, a bad duration),
 * and that remember which keys were read, so that every key no spec read is reported as unknown. What a
 * spec's builder call throws ({@link java.lang.IllegalArgumentException} and the like) is reported at the
 * path of the key or section being applied. The loader then throws one exception listing every problem.
 * {@link io.yarpc.config.spi.ConfigContext} gives the service name and the pieces that every transport
 * shares: the peer chooser of an outbound ({@code peer}, {@code with}, a peer-list block), {@code limits},
 * {@code deadlinePolicy} and {@code tls}; and the objects the program gave the loader for what a file
 * cannot hold (a meter registry).
 */
package io.yarpc.config.spi;

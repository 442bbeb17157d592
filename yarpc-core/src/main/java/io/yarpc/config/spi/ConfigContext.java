package io.yarpc.config.spi;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.KeepAlive;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;

/**
 * What the loader gives a spec besides its section: the service's name and the sections every transport
 * shares, so that one concept has one spelling in every transport's section. Problems are recorded in the
 * sections passed, as {@link ConfigSection} describes.
 */
public interface ConfigContext {
  /** The name of the service being configured (the dispatcher's name). */
  String serviceName();

  /**
   * The object of {@code type} the program gave the loader ({@code YarpcConfig.loader().provide(type,
   * value)}), or {@code null}: for what a file cannot hold, such as the {@code MeterRegistry} that
   * yarpc-observability's {@code metrics} section records into.
   */
  <T> T provided(Class<T> type);

  /**
   * The peer chooser an outbound section asks for, not started (the outbound starts it), or {@code null}
   * when the section has none of its keys:
   *
   * <ul>
   *   <li>{@code peer: host:port}: a {@link io.yarpc.peer.SinglePeerChooser} of that peer;
   *   <li>{@code with: NAME}: the chooser of a preset registered with the loader;
   *   <li>{@code <list>: {...}}, the name of a registered {@link PeerListSpec} ({@code round-robin},
   *       {@code hashring32}...): that list, fed by the block's {@code peers}, or by the updater of a
   *       registered {@link PeerListUpdaterSpec} whose name is a key of the block ({@code dns: {...}}),
   *       with which it is returned as a {@link io.yarpc.peer.BoundPeerChooser}.
   * </ul>
   *
   * More than one of them is a problem. {@code identify} turns each configured peer into the identifier
   * the transport retains (e.g. {@code 10.0.0.1:443} into {@code https://10.0.0.1:443}), and each an
   * updater finds; what it throws for a configured peer is reported at the peer's path.
   */
  PeerChooser peerChooser(
      ConfigSection outbound, PeerTransport transport, UnaryOperator<String> identify);

  /**
   * Checks that {@code peer} is {@code host:port} (an IPv6 host in brackets, port 1 to 65535) and returns
   * it trimmed, {@code :port} as {@code 127.0.0.1:port} (this host, as Go dials it): the usual {@code
   * identify} of {@link #peerChooser}.
   *
   * @throws IllegalArgumentException {@code not host:port: "..."}
   */
  String hostPort(String peer);

  /**
   * The {@link InboundLimits} of a {@code limits} section: its keys are the builder's method names
   * ({@code maxConnections}, {@code idleTimeout}, ...; {@code maxRstFramesPerWindow} with {@code
   * rstFramesWindow}, {@code maxConnectionAge} with {@code maxConnectionAgeGrace}). {@code base} (null:
   * the defaults) when {@code limits} is null.
   */
  InboundLimits inboundLimits(ConfigSection limits, InboundLimits base);

  /**
   * The {@link KeepAlive} of a transport's {@code keepalive} section, or null (keepalive off) when
   * {@code keepalive} is null or says {@code enabled: false}: {@code time} (10s), {@code timeout} (20s),
   * {@code withoutCalls} (false; yarpc-go's spelling {@code permit-without-stream} works too) and {@code
   * enabled} (true: the section turns keepalive on), so the body of a yarpc-go {@code grpc-keepalive}
   * block reads unchanged.
   */
  KeepAlive keepAlive(ConfigSection keepalive);

  /**
   * The {@link DeadlinePolicy} of a {@code deadlinePolicy} section ({@code defaultTimeout}, {@code
   * maxTimeout}, and {@code requireDeadline: true}, which refuses unary calls without a deadline with
   * {@code missing TTL}), or {@code transportDefault} when {@code policy} is null. An absent key keeps the
   * transport default's value.
   */
  DeadlinePolicy deadlinePolicy(ConfigSection policy, DeadlinePolicy transportDefault);

  /**
   * Applies an inbound's {@code tls} section through {@code apply} (an inbound builder's {@code
   * tls(TlsConfig, TlsMode)}): {@code mode} ({@code disabled}, {@code permissive}, {@code enforced};
   * default {@code enforced} when a certificate is given), {@code certFile}, {@code keyFile}, {@code
   * keyPassword}, {@code caFile}, {@code clientAuth} ({@code none}, {@code optional}, {@code require}),
   * {@code provider}, {@code protocols}, {@code reloadInterval}; yarpc-go's {@code enabled: true} means
   * {@code enforced}. Calls nothing when {@code tls} is null or its mode is {@code disabled}.
   */
  void inboundTls(ConfigSection tls, BiConsumer<TlsConfig, TlsMode> apply);

  /**
   * The client side's {@link TlsConfig} of a transport's {@code tls} section ({@code caFile}, {@code
   * certFile} with {@code keyFile} for mutual TLS, {@code keyPassword}, {@code serverName}, {@code
   * hostnameVerification}, {@code provider}, {@code protocols}, {@code reloadInterval}), or null when
   * {@code tls} is null.
   */
  TlsConfig clientTls(ConfigSection tls);
}

package io.yarpc.netty.internal;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ApplicationProtocolNegotiator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.yarpc.tls.TlsConfig;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Function;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSessionContext;

/**
 * An {@link SslContext} that builds its delegate again when its {@link TlsConfig} is {@linkplain
 * TlsConfig#reload() reloaded} or its PEM files change (checked at most once per {@link
 * TlsConfig#reloadCheckInterval()}, as engines are made). Every new connection gets an engine from the
 * newest context; open connections keep theirs. When new material cannot be read, the failure is logged
 * once and the previous context stays in use.
 *
 * <p>Being an {@code SslContext}, it can be given to anything that takes one (grpc-java's server and
 * channel builders included). Thread-safe: engines may be made on any event loop.
 */
public final class ReloadingSslContext extends SslContext {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(ReloadingSslContext.class);

  private final TlsConfig config;
  private final Function<TlsConfig, SslContext> build;
  private final long intervalNanos;
  private volatile SslContext current;
  private volatile long generation;
  private volatile long nextCheckNanos;
  private long fingerprint;

  private ReloadingSslContext(TlsConfig config, Function<TlsConfig, SslContext> build) {
    this.config = config;
    this.build = build;
    this.intervalNanos = config.reloadCheckInterval().toNanos();
    this.generation = config.generation();
    this.fingerprint = config.filesFingerprint();
    this.current = build.apply(config);
    this.nextCheckNanos = System.nanoTime() + intervalNanos;
  }

  /**
   * A server context for {@code config} offering {@code alpn}.
   *
   * @throws IllegalStateException when the material cannot be read now
   */
  public static ReloadingSslContext server(TlsConfig config, List<String> alpn) {
    List<String> protocols = List.copyOf(alpn);
    return new ReloadingSslContext(config, c -> SslContexts.server(c, protocols));
  }

  /**
   * A client context for {@code config} offering {@code alpn}.
   *
   * @throws IllegalStateException when the material cannot be read now
   */
  public static ReloadingSslContext client(TlsConfig config, List<String> alpn) {
    List<String> protocols = List.copyOf(alpn);
    return new ReloadingSslContext(config, c -> SslContexts.client(c, protocols));
  }

  /** The config this context follows. */
  public TlsConfig config() {
    return config;
  }

  /** The newest context, rebuilt first when the config was reloaded or its files changed. */
  public SslContext current() {
    if (config.generation() != generation
        || (intervalNanos > 0 && System.nanoTime() - nextCheckNanos >= 0)) {
      maybeRebuild();
    }
    return current;
  }

  private synchronized void maybeRebuild() {
    long g = config.generation();
    boolean explicit = g != generation;
    boolean due = intervalNanos > 0 && System.nanoTime() - nextCheckNanos >= 0;
    if (!explicit && !due) {
      return; // another thread just did it
    }
    generation = g;
    if (due) {
      nextCheckNanos = System.nanoTime() + intervalNanos;
    }
    long f = config.filesFingerprint();
    if (!explicit && f == fingerprint) {
      return;
    }
    fingerprint = f;
    try {
      current = build.apply(config);
      log.info("TLS: reloaded {} for new connections", config);
    } catch (RuntimeException e) {
      log.warn("TLS: keeping the previous certificates: {}", e.getMessage());
    }
  }

  @Override
  public boolean isClient() {
    return current.isClient();
  }

  @Override
  public List<String> cipherSuites() {
    return current().cipherSuites();
  }

  @Override
  public ApplicationProtocolNegotiator applicationProtocolNegotiator() {
    return current().applicationProtocolNegotiator();
  }

  @Override
  public SSLEngine newEngine(ByteBufAllocator alloc) {
    return current().newEngine(alloc);
  }

  @Override
  public SSLEngine newEngine(ByteBufAllocator alloc, String peerHost, int peerPort) {
    return current().newEngine(alloc, peerHost, peerPort);
  }

  @Override
  public SSLSessionContext sessionContext() {
    return current().sessionContext();
  }

  @Override
  protected SslHandler newHandler(ByteBufAllocator alloc, boolean startTls) {
    return current().newHandler(alloc);
  }

  @Override
  protected SslHandler newHandler(
      ByteBufAllocator alloc, boolean startTls, Executor delegatedTaskExecutor) {
    return current().newHandler(alloc, delegatedTaskExecutor);
  }

  @Override
  protected SslHandler newHandler(
      ByteBufAllocator alloc, String peerHost, int peerPort, boolean startTls) {
    return current().newHandler(alloc, peerHost, peerPort);
  }

  @Override
  protected SslHandler newHandler(
      ByteBufAllocator alloc,
      String peerHost,
      int peerPort,
      boolean startTls,
      Executor delegatedTaskExecutor) {
    return current().newHandler(alloc, peerHost, peerPort, delegatedTaskExecutor);
  }
}

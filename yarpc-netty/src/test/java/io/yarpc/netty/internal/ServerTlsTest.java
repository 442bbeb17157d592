package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.handler.ssl.SslHandler;
import io.yarpc.testing.LeakDetectionExtension;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.tls.TlsProvider;
import io.yarpc.transport.ConnectionInfo;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The server front and client handler over real loopback connections: a line server that answers each
 * line with what it knows of the connection ({@code tls CN=...} or {@code plain}).
 */
@ExtendWith(LeakDetectionExtension.class)
class ServerTlsTest {
  @TempDir static Path dir;
  static TestCertificates pki;
  static EventLoopGroup group;

  @BeforeAll
  static void setUp() {
    pki = TestCertificates.generate(dir);
    group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
  }

  @AfterAll
  static void tearDown() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Answers every line with a description of the connection, on the event loop. */
  static final class Describe extends SimpleChannelInboundHandler<String> {
    private final String kind;

    Describe(String kind) {
      this.kind = kind;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, String line) {
      ConnectionInfo info = Connections.info(ctx.channel());
      String answer =
          kind
              + " tls="
              + info.isTls()
              + " subject="
              + info.peerSubject()
              + " sans="
              + info.peerSubjectAlternativeNames()
              + " line="
              + line
              + "\n";
      ctx.writeAndFlush(Unpooled.copiedBuffer(answer, StandardCharsets.UTF_8));
    }
  }

  static Channel serve(ServerTls front) throws InterruptedException {
    return new ServerBootstrap()
        .group(group)
        .channel(NioServerSocketChannel.class)
        .childHandler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                front.install(
                    ch.pipeline(),
                    new ServerTls.Continuation() {
                      @Override
                      public void plaintext(ChannelPipeline p) {
                        p.addLast(
                            new LineBasedFrameDecoder(1024),
                            new StringDecoder(StandardCharsets.UTF_8),
                            new Describe("plain"));
                      }

                      @Override
                      public void tls(ChannelPipeline p, SslHandler ssl) {
                        p.addLast(
                            new LineBasedFrameDecoder(1024),
                            new StringDecoder(StandardCharsets.UTF_8),
                            new Describe("tls"));
                      }

                      @Override
                      public void refusePlaintext(ChannelHandlerContext ctx, ByteBuf firstBytes) {
                        ctx.write(Unpooled.copiedBuffer("TLS required\n", StandardCharsets.UTF_8));
                      }
                    });
              }
            })
        .bind("127.0.0.1", 0)
        .sync()
        .channel();
  }

  /** A TLS client connection that collects answer lines. */
  static final class Client implements AutoCloseable {
    final BlockingQueue<Object> lines = new LinkedBlockingQueue<>();
    final Channel channel;
    final SslHandler ssl;

    Client(TlsConfig config, int port) throws InterruptedException {
      ReloadingSslContext ctx = ReloadingSslContext.client(config, List.of());
      SslHandler[] made = new SslHandler[1];
      channel =
          new Bootstrap()
              .group(group)
              .channel(NioSocketChannel.class)
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      made[0] = ClientTls.handler(ctx, ch.alloc(), "localhost", port, 10_000);
                      ch.pipeline()
                          .addLast(
                              made[0],
                              new LineBasedFrameDecoder(1024),
                              new StringDecoder(StandardCharsets.UTF_8),
                              new SimpleChannelInboundHandler<String>() {
                                @Override
                                protected void channelRead0(ChannelHandlerContext c, String s) {
                                  lines.add(s);
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext c, Throwable t) {
                                  lines.add(t);
                                  c.close();
                                }
                              });
                    }
                  })
              .connect("127.0.0.1", port)
              .sync()
              .channel();
      ssl = made[0];
    }

    /** Completes the handshake, or throws its failure. */
    Client handshake() throws Exception {
      ssl.handshakeFuture().await(10, TimeUnit.SECONDS);
      if (!ssl.handshakeFuture().isSuccess()) {
        throw (Exception) ssl.handshakeFuture().cause();
      }
      return this;
    }

    String ask(String line) throws Exception {
      channel.writeAndFlush(Unpooled.copiedBuffer(line + "\n", StandardCharsets.UTF_8));
      Object answer = lines.poll(10, TimeUnit.SECONDS);
      if (answer instanceof Throwable) {
        throw new AssertionError("connection failed", (Throwable) answer);
      }
      return (String) answer;
    }

    X509Certificate serverCertificate() throws Exception {
      return (X509Certificate) ssl.engine().getSession().getPeerCertificates()[0];
    }

    @Override
    public void close() {
      channel.close().syncUninterruptibly();
    }
  }

  static String plaintextAsk(int port, String line) throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8); // until the server closes
    }
  }

  static String plaintextAskKeepOpen(int port, String line) throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
      StringBuilder b = new StringBuilder();
      InputStream in = s.getInputStream();
      for (int c; (c = in.read()) != -1 && c != '\n'; ) {
        b.append((char) c);
      }
      return b.toString();
    }
  }

  static ServerTls front(TlsConfig config, TlsMode mode) {
    return ServerTls.create(config, mode, List.of(), "the test server", Duration.ofSeconds(10));
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"JDK", "OPENSSL"})
  void mutualTlsShowsTheClientsVerifiedIdentity(TlsProvider provider) throws Exception {
    Channel server =
        serve(
            front(
                pki.serverConfig(ClientAuth.REQUIRE).provider(provider).build(), TlsMode.ENFORCED));
    int port = ((InetSocketAddress) server.localAddress()).getPort();
    try (Client c = new Client(pki.mutualClientConfig().provider(provider).build(), port)) {
      String answer = c.handshake().ask("hello");
      assertThat(answer)
          .isEqualTo(
              "tls tls=true subject=CN=test-client"
                  + " sans=[URI:spiffe://yarpc.test/client, DNS:client.yarpc.test] line=hello");
      assertThat(c.serverCertificate().getSubjectX500Principal().getName())
          .isEqualTo("CN=localhost");
    } finally {
      server.close().sync();
    }
  }

  @Test
  void permissivePortServesTlsAndPlaintext() throws Exception {
    Channel server =
        serve(front(pki.serverConfig(ClientAuth.OPTIONAL).build(), TlsMode.PERMISSIVE));
    int port = ((InetSocketAddress) server.localAddress()).getPort();
    try (Client c = new Client(pki.clientConfig().build(), port)) {
      assertThat(c.handshake().ask("a")).isEqualTo("tls tls=true subject= sans=[] line=a");
      assertThat(plaintextAskKeepOpen(port, "b"))
          .isEqualTo("plain tls=false subject= sans=[] line=b");
      assertThat(c.ask("c")).isEqualTo("tls tls=true subject= sans=[] line=c");
    } finally {
      server.close().sync();
    }
  }

  @Test
  void enforcedPortAnswersPlaintextWithTheRefusalAndCloses() throws Exception {
    Channel server = serve(front(pki.serverConfig(ClientAuth.NONE).build(), TlsMode.ENFORCED));
    int port = ((InetSocketAddress) server.localAddress()).getPort();
    try {
      assertThat(plaintextAsk(port, "hello")).isEqualTo("TLS required\n");
      try (Client c = new Client(pki.clientConfig().build(), port)) {
        assertThat(c.handshake().ask("after")).startsWith("tls tls=true");
      }
    } finally {
      server.close().sync();
    }
  }

  @Test
  void disabledModeIgnoresTheConfig() throws Exception {
    ServerTls front = front(pki.serverConfig(ClientAuth.NONE).build(), TlsMode.DISABLED);
    assertThat(front.enabled()).isFalse();
    Channel server = serve(front);
    int port = ((InetSocketAddress) server.localAddress()).getPort();
    try {
      assertThat(plaintextAskKeepOpen(port, "x"))
          .isEqualTo("plain tls=false subject= sans=[] line=x");
    } finally {
      server.close().sync();
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = TlsProvider.class,
      names = {"JDK", "OPENSSL"})
  void clientFailuresNameTheReason(TlsProvider provider) throws Exception {
    Channel expired =
        serve(
            front(
                TlsConfig.builder()
                    .keyCertChain(pki.expiredServer().certificate(), pki.expiredServer().key())
                    .build(),
                TlsMode.ENFORCED));
    Channel untrusted =
        serve(
            front(
                TlsConfig.builder()
                    .keyCertChain(pki.untrustedServer().certificate(), pki.untrustedServer().key())
                    .build(),
                TlsMode.ENFORCED));
    Channel mutual = serve(front(pki.serverConfig(ClientAuth.REQUIRE).build(), TlsMode.ENFORCED));
    try {
      assertThat(handshakeFailure(pki.clientConfig().provider(provider).build(), expired))
          .contains("TLS handshake with peer p failed: the certificate has expired");
      assertThat(handshakeFailure(pki.clientConfig().provider(provider).build(), untrusted))
          .contains(
              "TLS handshake with peer p failed: the certificate is not signed by a trusted root");
      assertThat(
              handshakeFailure(
                  pki.clientConfig().provider(provider).serverName("elsewhere.example").build(),
                  mutual))
          .contains("the certificate does not name the server");
      // TLS 1.3: the server refuses the missing certificate after the client's handshake is done,
      // so
      // the client sees it on its first read.
      try (Client c = new Client(pki.clientConfig().provider(provider).build(), port(mutual))) {
        c.ssl.handshakeFuture().await(10, TimeUnit.SECONDS);
        c.channel.writeAndFlush(Unpooled.copiedBuffer("x\n", StandardCharsets.UTF_8));
        Object got = c.lines.poll(10, TimeUnit.SECONDS);
        Throwable failure =
            got instanceof Throwable ? (Throwable) got : c.ssl.handshakeFuture().cause();
        assertThat(failure).isNotNull();
        assertThat(TlsErrors.describe(failure))
            .startsWith("the server requires a client certificate and none was presented");
      }
    } finally {
      expired.close().sync();
      untrusted.close().sync();
      mutual.close().sync();
    }
  }

  private static int port(Channel server) {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  private static String handshakeFailure(TlsConfig config, Channel server) throws Exception {
    try (Client c = new Client(config, port(server))) {
      assertThatThrownBy(c::handshake).isNotNull();
      return TlsErrors.handshakeFailure("p", c.ssl.handshakeFuture().cause()).getMessage();
    }
  }

  @Test
  void newConnectionsGetRotatedCertificatesOpenOnesKeepWorking() throws Exception {
    Path cert = dir.resolve("rotating.pem");
    Path key = dir.resolve("rotating.key");
    Files.copy(pki.server().certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(pki.server().key(), key, StandardCopyOption.REPLACE_EXISTING);
    TlsConfig config = TlsConfig.builder().keyCertChain(cert, key).build();
    Channel server = serve(front(config, TlsMode.ENFORCED));
    int port = port(server);
    try (Client before = new Client(pki.clientConfig().build(), port)) {
      before.handshake();
      java.math.BigInteger first = before.serverCertificate().getSerialNumber();
      TestCertificates.Pair next = pki.issue("rotated", "localhost", "DNS:localhost,IP:127.0.0.1");
      Files.copy(next.certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
      Files.copy(next.key(), key, StandardCopyOption.REPLACE_EXISTING);
      config.reload();
      try (Client after = new Client(pki.clientConfig().build(), port)) {
        after.handshake();
        assertThat(after.serverCertificate().getSerialNumber()).isNotEqualTo(first);
        assertThat(after.ask("new")).startsWith("tls tls=true");
      }
      assertThat(before.ask("old")).startsWith("tls tls=true");
    } finally {
      server.close().sync();
    }
  }

  @Test
  void unreadableNewFilesKeepThePreviousCertificate() throws Exception {
    Path cert = dir.resolve("broken.pem");
    Path key = dir.resolve("broken.key");
    Files.copy(pki.server().certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(pki.server().key(), key, StandardCopyOption.REPLACE_EXISTING);
    TlsConfig config = TlsConfig.builder().keyCertChain(cert, key).build();
    Channel server = serve(front(config, TlsMode.ENFORCED));
    try {
      Files.writeString(cert, "not a certificate");
      config.reload();
      try (Client c = new Client(pki.clientConfig().build(), port(server))) {
        assertThat(c.handshake().serverCertificate().getSubjectX500Principal().getName())
            .isEqualTo("CN=localhost");
      }
    } finally {
      server.close().sync();
    }
  }

  @Test
  void badMaterialFailsAtCreationNamingTheFile() throws Exception {
    Path bad = dir.resolve("bad.pem");
    Files.writeString(bad, "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n");
    TlsConfig config = TlsConfig.builder().keyCertChain(bad, pki.server().key()).build();
    assertThatThrownBy(() -> front(config, TlsMode.ENFORCED))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot build a TLS context from TlsConfig{certificateChain=" + bad);
    assertThatThrownBy(() -> front(pki.clientConfig().build(), TlsMode.ENFORCED))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a certificate and key");
  }
}

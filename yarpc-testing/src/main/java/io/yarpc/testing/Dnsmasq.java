package io.yarpc.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.naming.NamingException;
import javax.naming.directory.InitialDirContext;

/**
 * A real DNS server for the tests: Debian's dnsmasq, a child process on 127.0.0.1 and a free port,
 * answering only from its configuration file ({@code srv-host=}, {@code host-record=}); names under
 * {@code svc.test} that it does not know get NXDOMAIN, other names REFUSED. Records change by rewriting
 * the file and restarting it on the same port ({@link #restart}); queries sent while it is down go
 * unanswered. Without dnsmasq a test is skipped, or fails when {@code YARPC_REQUIRE_PEERS} is set (as in
 * {@code .ci/run}, which installs it).
 */
public final class Dnsmasq implements AutoCloseable {
  private static final List<Path> CANDIDATES =
      List.of(Path.of("/usr/sbin/dnsmasq"), Path.of("/usr/bin/dnsmasq"), Path.of("/sbin/dnsmasq"));

  private final Path executable;
  private final Path dir;
  private final int port;
  private final int ttlSeconds;
  private Process process;

  private Dnsmasq(Path executable, Path dir, int port, int ttlSeconds) {
    this.executable = executable;
    this.dir = dir;
    this.port = port;
    this.ttlSeconds = ttlSeconds;
  }

  /** The executable, or the test is skipped (fails when YARPC_REQUIRE_PEERS is set). */
  public static Path executable() {
    Path found = null;
    for (Path p : CANDIDATES) {
      if (Files.isExecutable(p)) {
        found = p;
        break;
      }
    }
    if (System.getenv("YARPC_REQUIRE_PEERS") != null) { // .ci/run installs it: missing fails there
      assertThat(found).as("dnsmasq (apt-get install dnsmasq-base)").isNotNull();
    }
    assumeTrue(found != null, "dnsmasq is not installed (apt-get install dnsmasq-base)");
    return found;
  }

  /**
   * Starts dnsmasq with {@code records} (lines of its configuration file) in {@code dir}, its records'
   * TTL {@code ttlSeconds}; returns once it answers.
   */
  public static Dnsmasq start(Path dir, int ttlSeconds, List<String> records) throws Exception {
    Dnsmasq d = new Dnsmasq(executable(), dir, freePort(), ttlSeconds);
    d.launch(records);
    return d;
  }

  /** Where it listens (UDP and TCP). */
  public InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
  }

  /** Stops it, rewrites its records and starts it again on the same port; returns once it answers. */
  public void restart(List<String> records) throws Exception {
    stop();
    launch(records);
  }

  /** Stops it: queries go unanswered until it starts again. */
  public void stop() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      process = null;
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }

  /** The SRV line for {@code target:port} under {@code service} ({@code _http._tcp.users.svc.test}). */
  public static String srv(String service, String target, int port) {
    return "srv-host=" + service + "," + target + "," + port;
  }

  /** The line giving {@code name} the address {@code address} (A or AAAA). */
  public static String host(String name, String address) {
    return "host-record=" + name + "," + address;
  }

  private void launch(List<String> records) throws Exception {
    List<String> lines = new ArrayList<>(records);
    lines.add("local=/svc.test/"); // names it does not know under svc.test: NXDOMAIN
    Files.createDirectories(dir);
    Path conf = dir.resolve("dnsmasq.conf");
    Files.write(conf, lines, StandardCharsets.UTF_8);
    process =
        new ProcessBuilder(
                executable.toString(),
                "--no-daemon",
                "--no-resolv",
                "--no-hosts",
                "--listen-address=127.0.0.1",
                "--bind-interfaces",
                "--port=" + port,
                "--conf-file=" + conf,
                "--pid-file=",
                "--log-facility=-",
                "--log-queries",
                "--local-ttl=" + ttlSeconds)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("dnsmasq.log").toFile())
            .start();
    awaitAnswers();
  }

  /** The log (stderr and stdout), with a line per query ({@code query[SRV] name from 127.0.0.1}). */
  public String log() throws IOException {
    return Files.readString(dir.resolve("dnsmasq.log"));
  }

  /** Waits until it answers a query (any answer, NXDOMAIN included), at most 10 s. */
  private void awaitAnswers() throws Exception {
    Hashtable<String, String> env = new Hashtable<>();
    env.put("java.naming.factory.initial", "com.sun.jndi.dns.DnsContextFactory");
    env.put("java.naming.provider.url", "dns://127.0.0.1:" + port);
    env.put("com.sun.jndi.dns.timeout.initial", "100");
    env.put("com.sun.jndi.dns.timeout.retries", "1");
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException("dnsmasq exited: " + log());
      }
      try {
        new InitialDirContext(env).getAttributes("ready.svc.test", new String[] {"A"});
        return;
      } catch (javax.naming.NameNotFoundException answered) {
        return; // NXDOMAIN: it answers
      } catch (NamingException notYet) {
        if (System.nanoTime() > until) {
          throw new IllegalStateException("dnsmasq does not answer: " + log(), notYet);
        }
        Thread.sleep(20);
      }
    }
  }

  /** A port free for both UDP and TCP on 127.0.0.1. */
  private static int freePort() throws IOException {
    for (int i = 0; i < 50; i++) {
      try (ServerSocket tcp = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int p = tcp.getLocalPort();
        try (DatagramSocket udp =
            new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), p))) {
          return p;
        } catch (IOException taken) {
          // try another
        }
      }
    }
    throw new IOException("no port free for both UDP and TCP");
  }
}

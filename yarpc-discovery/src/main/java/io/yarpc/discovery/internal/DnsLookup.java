package io.yarpc.discovery.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.dns.DefaultDnsQuestion;
import io.netty.handler.codec.dns.DefaultDnsRecordDecoder;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRawRecord;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.resolver.dns.DnsErrorCauseException;
import io.netty.resolver.dns.DnsNameResolver;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.resolver.dns.DnsNameResolverTimeoutException;
import io.netty.resolver.dns.DnsQueryLifecycleObserver;
import io.netty.resolver.dns.DnsServerAddressStreamProviders;
import io.netty.resolver.dns.NoopAuthoritativeDnsServerCache;
import io.netty.resolver.dns.NoopDnsCache;
import io.netty.resolver.dns.NoopDnsCnameCache;
import io.netty.resolver.dns.SingletonDnsServerAddressStreamProvider;
import io.netty.util.NetUtil;
import io.netty.util.ReferenceCountUtil;
import io.yarpc.discovery.DnsPeerListUpdater.RecordType;
import io.yarpc.internal.GoDurations;
import io.yarpc.internal.GoStrings;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * DNS lookups for one updater on Netty's resolver: the records of one name with their TTLs, uncached
 * (the updater schedules its own refreshes from the TTLs), over UDP with TCP for truncated answers.
 * Failures say what the server answered: {@code NXDOMAIN}, {@code SERVFAIL}, {@code REFUSED}, no
 * records, or no answer in time.
 */
public final class DnsLookup {
  /** What a lookup found: {@code host:port} in answer order, and the smallest TTL of the records used. */
  public record Answer(List<String> hostPorts, long ttlSeconds) {}

  /** A failed lookup; its message is the reason for the updater's status. */
  public static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final boolean noRecords;

    Failure(String message, boolean noRecords) {
      super(message, null, false, false);
      this.noRecords = noRecords;
    }

    /** The name exists but has no records of the type asked (or the server said nothing more). */
    boolean noRecords() {
      return noRecords;
    }
  }

  private record Address(InetAddress address, long ttl) {}

  private record Target(String name, int port, long ttl) {}

  private final DnsNameResolver resolver;
  private final String server;
  private final Duration timeout;
  // The response code a server gave for a question ("SRV name."), noted by the query observer.
  private final Map<String, String> responseCodes = new ConcurrentHashMap<>();

  /**
   * Lookups on {@code loop} sent to {@code server} (null: the system's DNS servers and search domains,
   * from {@code /etc/resolv.conf}), each query given up after {@code timeout}.
   */
  public DnsLookup(EventLoop loop, InetSocketAddress server, Duration timeout) {
    this.server =
        server == null
            ? "the system's DNS servers"
            : hostPort(server.getAddress(), server.getPort());
    this.timeout = timeout;
    DnsNameResolverBuilder b =
        new DnsNameResolverBuilder(loop)
            .datagramChannelType(NioDatagramChannel.class)
            .socketChannelType(NioSocketChannel.class) // TCP when an answer is truncated
            .resolveCache(NoopDnsCache.INSTANCE)
            .cnameCache(NoopDnsCnameCache.INSTANCE)
            .authoritativeDnsServerCache(NoopAuthoritativeDnsServerCache.INSTANCE)
            .queryTimeoutMillis(Math.max(1, timeout.toMillis()))
            .dnsQueryLifecycleObserverFactory(question -> new Observer(key(question)));
    if (server != null) {
      b.nameServerProvider(new SingletonDnsServerAddressStreamProvider(server))
          .searchDomains(List.of());
    } else {
      b.nameServerProvider(DnsServerAddressStreamProviders.platformDefault());
    }
    this.resolver = b.build();
  }

  /**
   * Looks {@code name} up: its A or AAAA records, each address with {@code port}, or its SRV records,
   * each target with the record's port, the target resolved to its A records (its AAAA records when it
   * has no A record) when {@code resolveTargets}. Fails when any query fails.
   */
  public CompletableFuture<Answer> lookup(
      String name, RecordType type, int port, boolean resolveTargets) {
    if (type != RecordType.SRV) {
      DnsRecordType t = type == RecordType.A ? DnsRecordType.A : DnsRecordType.AAAA;
      return query(name, t, DnsLookup::address, "")
          .thenApply(
              addresses -> {
                List<String> hostPorts = new ArrayList<>();
                long ttl = Long.MAX_VALUE;
                for (Address a : addresses) {
                  hostPorts.add(hostPort(a.address, port));
                  ttl = Math.min(ttl, a.ttl);
                }
                return new Answer(hostPorts, ttl);
              });
    }
    return query(name, DnsRecordType.SRV, DnsLookup::target, "")
        .thenCompose(targets -> resolveTargets ? resolve(name, targets) : unresolved(targets));
  }

  /**
   * Checks that {@code name} can be asked for and returns it.
   *
   * @throws IllegalArgumentException {@code not a DNS name: "a..b" (Empty label is not a legal name)}
   */
  public static String checkName(String name) {
    try {
      new DefaultDnsQuestion(name, DnsRecordType.A);
      return name;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "not a DNS name: " + GoStrings.quote(name) + " (" + e.getMessage() + ")", e);
    }
  }

  /** Closes the resolver's sockets; lookups in progress fail. */
  public void close() {
    resolver.close();
  }

  private static CompletableFuture<Answer> unresolved(List<Target> targets) {
    List<String> hostPorts = new ArrayList<>();
    long ttl = Long.MAX_VALUE;
    for (Target t : targets) {
      hostPorts.add(hostPort(t.name, t.port));
      ttl = Math.min(ttl, t.ttl);
    }
    return CompletableFuture.completedFuture(new Answer(hostPorts, ttl));
  }

  /** Each distinct target's addresses, with the ports of its records. */
  private CompletableFuture<Answer> resolve(String srvName, List<Target> targets) {
    Map<String, CompletableFuture<List<Address>>> byName = new LinkedHashMap<>();
    String context = " (a target of SRV " + trimDot(srvName) + ")";
    for (Target t : targets) {
      byName.computeIfAbsent(t.name, n -> addresses(n, context));
    }
    return CompletableFuture.allOf(byName.values().toArray(new CompletableFuture<?>[0]))
        .thenApply(
            ignored -> {
              Set<String> hostPorts = new LinkedHashSet<>();
              long ttl = Long.MAX_VALUE;
              for (Target t : targets) {
                ttl = Math.min(ttl, t.ttl);
                for (Address a : byName.get(t.name).join()) {
                  hostPorts.add(hostPort(a.address, t.port));
                  ttl = Math.min(ttl, a.ttl);
                }
              }
              return new Answer(List.copyOf(hostPorts), ttl);
            });
  }

  /** A records, or AAAA records when the name has no A record. */
  private CompletableFuture<List<Address>> addresses(String name, String context) {
    CompletableFuture<List<Address>> out = new CompletableFuture<>();
    query(name, DnsRecordType.A, DnsLookup::address, context)
        .whenComplete(
            (v4, error) -> {
              if (error == null) {
                out.complete(v4);
              } else if (error instanceof Failure && ((Failure) error).noRecords()) {
                query(name, DnsRecordType.AAAA, DnsLookup::address, context)
                    .whenComplete(
                        (v6, e6) -> {
                          if (e6 == null) {
                            out.complete(v6);
                          } else if (e6 instanceof Failure && ((Failure) e6).noRecords()) {
                            out.completeExceptionally(
                                new Failure(
                                    "lookup of "
                                        + trimDot(name)
                                        + context
                                        + " failed: no A or AAAA records",
                                    true));
                          } else {
                            out.completeExceptionally(e6);
                          }
                        });
              } else {
                out.completeExceptionally(error);
              }
            });
    return out;
  }

  /**
   * The records of {@code type} for {@code name}, decoded (and released) on the event loop; fails with a
   * {@link Failure} saying why, or when there is none.
   */
  private <T> CompletableFuture<List<T>> query(
      String name, DnsRecordType type, Function<DnsRawRecord, T> decode, String context) {
    CompletableFuture<List<T>> out = new CompletableFuture<>();
    DnsQuestion question = new DefaultDnsQuestion(name, type);
    String key = key(question);
    responseCodes.remove(key);
    String what = type.name() + " lookup of " + trimDot(name) + context + " failed: ";
    resolver
        .resolveAll(question)
        .addListener(
            f -> {
              if (!f.isSuccess()) {
                out.completeExceptionally(failure(what, type, key, f.cause()));
                return;
              }
              @SuppressWarnings("unchecked")
              List<DnsRecord> records = (List<DnsRecord>) f.getNow();
              List<T> decoded = new ArrayList<>();
              try {
                for (DnsRecord r : records) {
                  if (r.type().equals(type) && r instanceof DnsRawRecord) {
                    decoded.add(decode.apply((DnsRawRecord) r));
                  }
                }
              } catch (RuntimeException e) {
                out.completeExceptionally(
                    new Failure(what + "cannot decode the answer: " + e.getMessage(), false));
                return;
              } finally {
                for (DnsRecord r : records) {
                  ReferenceCountUtil.release(r);
                }
              }
              if (decoded.isEmpty()) {
                out.completeExceptionally(
                    new Failure(what + "no " + type.name() + " records", true));
              } else {
                out.complete(decoded);
              }
            });
    return out;
  }

  private Failure failure(String what, DnsRecordType type, String key, Throwable cause) {
    String code = responseCodes.remove(key);
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof DnsErrorCauseException) {
        return new Failure(what + name(((DnsErrorCauseException) t).getCode()), false);
      }
      if (t instanceof DnsNameResolverTimeoutException) {
        return new Failure(
            what + "no answer from " + server + " within " + GoDurations.format(timeout), false);
      }
    }
    if (code != null) {
      return new Failure(what + code, false);
    }
    if (cause instanceof UnknownHostException) {
      return new Failure(what + "no " + type.name() + " records", true);
    }
    return new Failure(what + cause, false);
  }

  private static Address address(DnsRawRecord r) {
    ByteBuf c = r.content();
    int length = c.readableBytes();
    if (length != 4 && length != 16) {
      throw new IllegalArgumentException("an address of " + length + " bytes");
    }
    byte[] bytes = new byte[length];
    c.getBytes(c.readerIndex(), bytes);
    try {
      return new Address(InetAddress.getByAddress(bytes), r.timeToLive());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  private static Target target(DnsRawRecord r) {
    ByteBuf c = r.content().duplicate(); // the whole message: the target may point into it
    if (c.readableBytes() < 7) {
      throw new IllegalArgumentException("an SRV record of " + c.readableBytes() + " bytes");
    }
    c.skipBytes(4); // priority and weight: every target is a peer
    int port = c.readUnsignedShort();
    String target = DefaultDnsRecordDecoder.decodeName(c);
    return new Target(target, port, r.timeToLive());
  }

  private static String key(DnsQuestion question) {
    String name = question.name();
    return question.type().name() + " " + (name.endsWith(".") ? name : name + ".");
  }

  private static String trimDot(String name) {
    return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
  }

  /** A response code as DNS tools print it. */
  private static String name(DnsResponseCode code) {
    switch (code.intValue()) {
      case 1:
        return "FORMERR";
      case 2:
        return "SERVFAIL";
      case 3:
        return "NXDOMAIN";
      case 4:
        return "NOTIMP";
      case 5:
        return "REFUSED";
      default:
        return "response code " + code.intValue();
    }
  }

  /** Notes the response code of a question's answer without records, for the failure's message. */
  private final class Observer implements DnsQueryLifecycleObserver {
    private final String key;

    Observer(String key) {
      this.key = key;
    }

    @Override
    public void queryWritten(InetSocketAddress nameServerAddr, ChannelFuture future) {}

    @Override
    public void queryCancelled(int queriesRemaining) {}

    @Override
    public DnsQueryLifecycleObserver queryRedirected(List<InetSocketAddress> nameServers) {
      return this;
    }

    @Override
    public DnsQueryLifecycleObserver queryCNAMEd(DnsQuestion cnameQuestion) {
      return this;
    }

    @Override
    public DnsQueryLifecycleObserver queryNoAnswer(DnsResponseCode code) {
      if (code.intValue() != 0) {
        responseCodes.put(key, name(code));
      }
      return this;
    }

    @Override
    public void queryFailed(Throwable cause) {}

    @Override
    public void querySucceed() {}
  }

  /** {@code address:port}, an IPv6 address compressed and in brackets ({@code [::1]:80}). */
  public static String hostPort(InetAddress address, int port) {
    String host = NetUtil.toAddressString(address); // IPv6 compressed: ::1, 2001:db8::1
    return (address instanceof Inet6Address ? "[" + host + "]" : host) + ":" + port;
  }

  /** {@code name:port}, without the trailing dot of a fully qualified name. */
  static String hostPort(String name, int port) {
    return (name.endsWith(".") ? name.substring(0, name.length() - 1) : name) + ":" + port;
  }
}

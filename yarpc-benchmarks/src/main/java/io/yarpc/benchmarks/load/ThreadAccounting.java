package io.yarpc.benchmarks.load;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tells which threads work for the server and which for the client, and measures what they allocate and
 * how much CPU they use, with the JVM's per-thread counters ({@code
 * com.sun.management.ThreadMXBean#getThreadAllocatedBytes} and {@code getThreadCpuTime}).
 *
 * <h2>Attribution</h2>
 *
 * <ol>
 *   <li><b>By name</b>, for the pools the harness creates or names: {@code bench-server-*} (grpc-java's
 *       server executor, YARPC's stream callbacks) and {@code yarpc-bench-server-handler-*} (the YARPC
 *       server dispatcher's handler pool) are <em>server</em>; {@code bench-client-*} (grpc-java's channel
 *       executor, the {@code YarpcChannel} callback executor, the load generator's continuations) and
 *       {@code yarpc-bench-client-*} are <em>client</em>; the harness's own threads are left out.
 *   <li><b>By what they run</b>, for every other thread (Netty event loops: grpc-netty's shared {@code
 *       grpc-*-ELG-*}, YARPC's {@code yarpc-http-*} and {@code yarpc-tchannel-*}, timers): during each
 *       warm-up the harness samples all stacks every few milliseconds, and each sample that shows a
 *       server-side frame (grpc's {@code NettyServerHandler}/{@code ServerImpl}, YARPC's HTTP server
 *       handler, TChannel's {@code onCallReq}...) votes server, a client-side frame ({@code
 *       NettyClientHandler}/{@code ClientCallImpl}, the HTTP client handler, TChannel's {@code onCallRes}...)
 *       votes client. An event loop serves the connections registered on it, and in this harness the
 *       server's and the client's connections sit on different loops, so each loop gets one kind of vote;
 *       a thread with both kinds is split in proportion to its votes.
 *   <li>A thread with no name rule and no vote (idle timers, the JVM's own threads) is
 *       <em>unattributed</em>: its bytes are reported separately, never added to either side.
 * </ol>
 */
final class ThreadAccounting {
  /** Which side a thread works for. */
  enum Role {
    SERVER,
    CLIENT,
    HARNESS,
    UNKNOWN
  }

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Frames (class name prefixes, or class.method prefixes) whose presence marks server work. */
  private static final String[] SERVER_FRAMES = {
    "io.grpc.netty.NettyServer",
    "io.grpc.internal.ServerImpl",
    "io.grpc.internal.ServerCallImpl",
    "io.grpc.internal.AbstractServerStream",
    "io.grpc.internal.ServerCalls",
    "io.yarpc.transport.grpc.internal.InboundHandler",
    "io.yarpc.transport.grpc.internal.UnaryServerCall",
    "io.yarpc.transport.grpc.internal.GrpcServerStream",
    "io.yarpc.transport.grpc.GrpcInbound",
    "io.yarpc.transport.http.internal.Server",
    "io.yarpc.transport.http.internal.InboundResponses",
    "io.yarpc.transport.http.internal.ReadStartHandler",
    "io.yarpc.transport.http.HttpInbound",
    "io.yarpc.transport.http.internal.CallServer",
    "io.yarpc.transport.http.internal.RequestReceiver",
    "io.yarpc.transport.http.internal.Http1Exchanges",
    "io.yarpc.transport.http.internal.Http2ServerHandler",
    "io.yarpc.transport.http.internal.Http2ServerStream",
    "io.netty.handler.codec.http.HttpServerCodec",
    "io.netty.handler.codec.http.HttpRequestDecoder",
    "io.netty.handler.codec.http.HttpServerKeepAliveHandler",
    "io.yarpc.transport.tchannel.internal.IncomingCalls",
    "io.yarpc.transport.tchannel.TChannelInbound",
    "io.yarpc.internal.HandlerInvoker",
    "io.yarpc.encoding.protobuf.internal.UnaryServerCall",
    "io.yarpc.encoding.protobuf.internal.StreamServerCall",
    "io.yarpc.encoding.protobuf.internal.ServerCallBase",
    "io.yarpc.encoding.protobuf.internal.ServiceAdapter",
    "io.yarpc.benchmarks.load.EchoService",
  };

  /** Frames whose presence marks client work. */
  private static final String[] CLIENT_FRAMES = {
    "io.grpc.netty.NettyClient",
    "io.grpc.internal.ClientCallImpl",
    "io.grpc.internal.AbstractClientStream",
    "io.grpc.internal.RetriableStream",
    "io.grpc.internal.DelayedClientTransport",
    "io.grpc.stub.ClientCalls",
    "io.grpc.internal.ManagedChannelImpl",
    "io.yarpc.transport.grpc.internal.UnaryClientCall",
    "io.yarpc.transport.grpc.internal.GrpcClientStream",
    "io.yarpc.transport.grpc.internal.ClientCalls",
    "io.yarpc.transport.grpc.GrpcOutbound",
    "io.yarpc.transport.http.internal.Client",
    "io.yarpc.transport.http.internal.OutboundCodec",
    "io.yarpc.transport.http.internal.HttpPeer",
    "io.yarpc.transport.http.HttpOutbound",
    "io.netty.handler.codec.http.HttpClientCodec",
    "io.netty.handler.codec.http.HttpResponseDecoder",
    "io.yarpc.transport.tchannel.internal.OutgoingCalls",
    "io.yarpc.transport.tchannel.internal.Connection.call",
    "io.yarpc.transport.tchannel.internal.TChannelPeer",
    "io.yarpc.transport.tchannel.TChannelOutbound",
    "io.yarpc.internal.OutboundInvoker",
    "io.yarpc.encoding.protobuf.internal.UnaryClientCall",
    "io.yarpc.encoding.protobuf.internal.StreamClientCall",
    "io.yarpc.encoding.protobuf.internal.ClientCallBase",
    "io.yarpc.encoding.protobuf.internal.ClientCalls",
    "io.yarpc.encoding.protobuf.YarpcChannel",
    "io.yarpc.benchmarks.load.UnaryDriver",
    "io.yarpc.benchmarks.load.StreamDriver",
  };

  /** Votes per thread id: [server, client]. */
  private final Map<Long, long[]> votes = new HashMap<>();

  private final Map<Long, String> names = new HashMap<>();

  static {
    if (THREADS.isThreadAllocatedMemorySupported() && !THREADS.isThreadAllocatedMemoryEnabled()) {
      THREADS.setThreadAllocatedMemoryEnabled(true);
    }
    if (THREADS.isThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
      THREADS.setThreadCpuTimeEnabled(true);
    }
  }

  /** The role a thread's name gives it, or {@link Role#UNKNOWN}. */
  static Role byName(String name) {
    if (name.startsWith(NamedThreads.SERVER_PREFIX)
        || name.startsWith("yarpc-" + YarpcSystem.SERVER + "-")) {
      return Role.SERVER;
    }
    if (name.startsWith(NamedThreads.CLIENT_PREFIX)
        || name.startsWith("yarpc-" + YarpcSystem.CLIENT + "-")) {
      return Role.CLIENT;
    }
    if (name.startsWith(LoadHarness.THREAD_PREFIX) || name.equals("main")) {
      return Role.HARNESS;
    }
    return Role.UNKNOWN;
  }

  /** Takes one stack sample of every thread without a name rule and records its vote. */
  void sample() {
    for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
      Thread t = e.getKey();
      if (byName(t.getName()) != Role.UNKNOWN) {
        continue;
      }
      Role vote = vote(e.getValue());
      if (vote == Role.UNKNOWN) {
        continue;
      }
      long[] v = votes.computeIfAbsent(t.getId(), id -> new long[2]);
      v[vote == Role.SERVER ? 0 : 1]++;
      names.put(t.getId(), t.getName());
    }
  }

  /** The side the innermost marked frame of {@code stack} belongs to. */
  static Role vote(StackTraceElement[] stack) {
    for (StackTraceElement f : stack) {
      String frame = f.getClassName() + "." + f.getMethodName();
      for (String s : SERVER_FRAMES) {
        if (frame.startsWith(s)) {
          return Role.SERVER;
        }
      }
      for (String c : CLIENT_FRAMES) {
        if (frame.startsWith(c)) {
          return Role.CLIENT;
        }
      }
    }
    return Role.UNKNOWN;
  }

  /**
   * The server's share of a thread's work from its votes: all of it (or none) when at least {@value
   * #DOMINANT} of the votes agree — a few stray votes come from frames both sides run — else in proportion.
   */
  private static double share(long[] v) {
    double server = (double) v[0] / (v[0] + v[1]);
    return server >= DOMINANT ? 1 : server <= 1 - DOMINANT ? 0 : server;
  }

  private static final double DOMINANT = 0.9;

  /** Names of the threads sampled doing both server and client work (no side has {@value #DOMINANT}). */
  List<String> mixedThreads() {
    List<String> mixed = new ArrayList<>();
    votes.forEach(
        (id, v) -> {
          double s = share(v);
          if (s > 0 && s < 1 && v[0] + v[1] >= 10) {
            mixed.add(names.get(id));
          }
        });
    return mixed;
  }

  /** Forgets every vote (between systems: threads are not reused across systems). */
  void reset() {
    votes.clear();
    names.clear();
  }

  /** The allocation and CPU counters of every live thread, now. */
  static Snapshot snapshot() {
    long[] ids = THREADS.getAllThreadIds();
    long[] allocated = THREADS.getThreadAllocatedBytes(ids);
    long[] cpu = THREADS.getThreadCpuTime(ids);
    Map<Long, long[]> byId = new HashMap<>(ids.length * 2);
    for (int i = 0; i < ids.length; i++) {
      byId.put(ids[i], new long[] {Math.max(0, allocated[i]), Math.max(0, cpu[i])});
    }
    Map<Long, String> names = new HashMap<>();
    for (java.lang.management.ThreadInfo info : THREADS.getThreadInfo(ids, 0)) {
      if (info != null) {
        names.put(info.getThreadId(), info.getThreadName());
      }
    }
    return new Snapshot(
        byId,
        names,
        System.nanoTime(),
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime());
  }

  /** Counters of all threads at one instant. */
  record Snapshot(
      Map<Long, long[]> counters, Map<Long, String> names, long nanoTime, long processCpuNanos) {}

  /** What each side allocated and used between two snapshots. */
  record Usage(
      long serverBytes,
      long clientBytes,
      long unattributedBytes,
      long serverCpuNanos,
      long clientCpuNanos,
      long processCpuNanos,
      Map<String, String> threads) {}

  /**
   * The allocation and CPU of each side between {@code start} and {@code end}; threads that ended in
   * between are missing (the harness's pools keep threads 60 s, so none of the measured ones do).
   */
  Usage usage(Snapshot start, Snapshot end) {
    double serverBytes = 0;
    double clientBytes = 0;
    long unattributed = 0;
    double serverCpu = 0;
    double clientCpu = 0;
    Map<String, String> threads = new LinkedHashMap<>();
    List<Long> ids = new ArrayList<>(end.counters().keySet());
    ids.sort(null);
    for (long id : ids) {
      long[] e = end.counters().get(id);
      long[] s = start.counters().getOrDefault(id, new long[2]);
      long bytes = Math.max(0, e[0] - s[0]);
      long cpu = Math.max(0, e[1] - s[1]);
      String name = end.names().getOrDefault(id, "thread-" + id);
      Role role = byName(name);
      double serverShare;
      if (role == Role.SERVER) {
        serverShare = 1;
      } else if (role == Role.CLIENT) {
        serverShare = 0;
      } else if (role == Role.HARNESS) {
        continue;
      } else {
        long[] v = votes.get(id);
        if (v == null || v[0] + v[1] == 0) {
          unattributed += bytes;
          if (bytes > 0 || cpu > 0) {
            threads.put(name, "unattributed " + bytes + " B, " + cpu / 1_000_000 + " ms CPU");
          }
          continue;
        }
        serverShare = share(v);
      }
      serverBytes += bytes * serverShare;
      clientBytes += bytes * (1 - serverShare);
      serverCpu += cpu * serverShare;
      clientCpu += cpu * (1 - serverShare);
      if (bytes > 0 || cpu > 0) {
        String how =
            role == Role.UNKNOWN
                ? String.format(
                    "sampled %d server / %d client votes", votes.get(id)[0], votes.get(id)[1])
                : "by name";
        threads.put(
            name,
            (serverShare == 1
                    ? "server"
                    : serverShare == 0
                        ? "client"
                        : String.format(
                            "server %.0f%% / client %.0f%%",
                            serverShare * 100, (1 - serverShare) * 100))
                + " ("
                + how
                + ") "
                + bytes
                + " B, "
                + cpu / 1_000_000
                + " ms CPU");
      }
    }
    return new Usage(
        Math.round(serverBytes),
        Math.round(clientBytes),
        unattributed,
        Math.round(serverCpu),
        Math.round(clientCpu),
        end.processCpuNanos() - start.processCpuNanos(),
        threads);
  }
}

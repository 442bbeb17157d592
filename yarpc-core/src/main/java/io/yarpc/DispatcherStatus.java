package io.yarpc;

import static java.util.Objects.requireNonNull;

import io.yarpc.peer.ChooserStatus;
import io.yarpc.transport.RpcType;
import java.net.SocketAddress;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * What a dispatcher is doing at one moment, from {@link Dispatcher#introspect()}: its lifecycle state, the
 * procedures it serves and how many calls of each are being handled, its inbounds and where they listen,
 * and its outbounds with their peers. For debug pages, health checks and tests; not a monitoring feed
 * (use metrics for that).
 *
 * <p>An immutable snapshot: lists are unmodifiable and nothing follows the dispatcher after it was taken.
 * Its parts are read one after the other without a global lock, so counts taken while calls come and go
 * need not add up exactly (the sum of the procedures' calls in flight may differ from {@link
 * #callsInFlight()} by the calls that began or ended in between).
 *
 * @param name the dispatcher's service name
 * @param state its lifecycle state
 * @param callsInFlight inbound calls being handled, all procedures together ({@link
 *     Dispatcher#inFlightCalls()})
 * @param procedures every registered procedure, sorted by (service, name, encoding)
 * @param inbounds the inbounds, in the order given to the builder
 * @param outbounds the outbounds, by outbound key in the order given to the builder, then unary,
 *     oneway, stream; one entry per distinct outbound object of a key
 */
public record DispatcherStatus(
    String name,
    State state,
    int callsInFlight,
    List<ProcedureStatus> procedures,
    List<InboundStatus> inbounds,
    List<OutboundStatus> outbounds) {

  /**
   * Checks the arguments and copies the lists.
   *
   * @throws NullPointerException when an argument or a list element is null
   */
  public DispatcherStatus {
    requireNonNull(name, "name");
    requireNonNull(state, "state");
    procedures = List.copyOf(procedures);
    inbounds = List.copyOf(inbounds);
    outbounds = List.copyOf(outbounds);
  }

  /** A dispatcher's lifecycle state. */
  public enum State {
    /** Built, not started yet. */
    NEW,
    /** Started and taking calls. */
    RUNNING,
    /**
     * {@link Dispatcher#stop()} has begun: new calls are refused, calls in flight drain, then the
     * components stop.
     */
    STOPPING,
    /** Stopped (or its start failed); it cannot start again. */
    STOPPED
  }

  /**
   * One registered procedure.
   *
   * @param service the service it belongs to (the dispatcher's name when it was registered without one)
   * @param name the procedure name, e.g. {@code echo} or {@code pkg.Service::Method}
   * @param encoding the encoding it accepts; empty for any (a wildcard, as raw procedures register)
   * @param rpcType unary, oneway or streaming
   * @param signature a human-readable signature, possibly empty ({@link
   *     io.yarpc.transport.Procedure#signature()})
   * @param callsInFlight calls of this procedure being handled now (a handler running, or its result not
   *     yet complete; a stream until its handler ends)
   */
  public record ProcedureStatus(
      String service,
      String name,
      String encoding,
      RpcType rpcType,
      String signature,
      int callsInFlight) {
    /**
     * Checks the arguments.
     *
     * @throws NullPointerException when an argument is null
     */
    public ProcedureStatus {
      requireNonNull(service, "service");
      requireNonNull(name, "name");
      requireNonNull(encoding, "encoding");
      requireNonNull(rpcType, "rpcType");
      requireNonNull(signature, "signature");
    }
  }

  /**
   * One inbound.
   *
   * @param transportName its transport's name ({@code http}, {@code grpc}, {@code tchannel})
   * @param address where it listens ({@link io.yarpc.transport.Inbound#listenAddress()}), or null when it
   *     does not (yet) or does not say
   * @param running whether it is started and not stopped
   */
  public record InboundStatus(String transportName, SocketAddress address, boolean running) {
    /**
     * Checks the arguments.
     *
     * @throws NullPointerException when {@code transportName} is null
     */
    public InboundStatus {
      requireNonNull(transportName, "transportName");
    }
  }

  /**
   * One outbound object under one outbound key.
   *
   * @param key the outbound key given to {@link Dispatcher.Builder#outbound}
   * @param service the service it calls (the key unless {@link Outbounds#serviceName()} says otherwise)
   * @param rpcTypes the RPC types this object serves for the key, iterated in {@link RpcType} order (an
   *     HTTP outbound often serves unary and oneway)
   * @param transportName its transport's name ({@code http}, {@code http2}, {@code grpc}, {@code
   *     tchannel})
   * @param running whether it is started and not stopped
   * @param chooser its peer chooser's status when it {@linkplain io.yarpc.peer.HasPeerChooser has one},
   *     else null
   */
  public record OutboundStatus(
      String key,
      String service,
      Set<RpcType> rpcTypes,
      String transportName,
      boolean running,
      ChooserStatus chooser) {
    /**
     * Checks the arguments and copies {@code rpcTypes}.
     *
     * @throws NullPointerException when an argument other than {@code chooser} is null
     */
    public OutboundStatus {
      requireNonNull(key, "key");
      requireNonNull(service, "service");
      rpcTypes =
          rpcTypes.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(rpcTypes));
      requireNonNull(transportName, "transportName");
    }
  }
}

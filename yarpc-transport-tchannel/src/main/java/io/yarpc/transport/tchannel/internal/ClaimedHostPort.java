package io.yarpc.transport.tchannel.internal;

import io.netty.util.NetUtil;
import io.yarpc.transport.ConnectionInfo;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.Locale;

/**
 * Whether an accepted connection may stand for the {@code host_port} its init req advertised, that is,
 * serve as the peer connection of this side's outbounds to that address. A process can advertise any
 * {@code host_port}; taking the claim on trust would let anyone who can connect receive the calls meant
 * for another server. A claim is backed when:
 *
 * <ul>
 *   <li>the connection's remote IP address is the claimed host (an IP literal; a host name is never
 *       resolved for this), or
 *   <li>over TLS, the client's verified certificate has a subject alternative name for the claimed host:
 *       {@code IP Address} equal to an IP literal, or {@code DNS} equal (ignoring case, no wildcards) to a
 *       host name.
 * </ul>
 *
 * When this side's outbounds require TLS, only the second counts (and a plaintext connection never
 * stands for a peer): the outbound would otherwise send its calls without the encryption and the server
 * authentication it was configured with. The claimed port is not checked: it cannot be. Stateless.
 */
public final class ClaimedHostPort {
  private ClaimedHostPort() {}

  /**
   * Whether {@code connection}'s claim to be {@code hostPort} is backed, as the class comment says.
   *
   * @param requireCertificate whether only a verified certificate counts (this side's outbounds use TLS)
   */
  public static boolean isBacked(
      String hostPort, ConnectionInfo connection, boolean requireCertificate) {
    String host = host(hostPort);
    if (host == null) {
      return false;
    }
    byte[] ip = NetUtil.createByteArrayFromIpAddressString(host);
    if (!requireCertificate && ip != null && isAddress(connection.remoteAddress(), ip)) {
      return true;
    }
    if (!connection.hasPeerCertificate()) {
      return false;
    }
    for (String san : connection.peerSubjectAlternativeNames()) {
      if (ip != null && san.startsWith("IP Address:")) {
        byte[] named =
            NetUtil.createByteArrayFromIpAddressString(san.substring("IP Address:".length()));
        if (named != null && Arrays.equals(named, ip)) {
          return true;
        }
      } else if (ip == null && san.startsWith("DNS:")) {
        if (san.substring("DNS:".length()).toLowerCase(Locale.ROOT).equals(host)) {
          return true;
        }
      }
    }
    return false;
  }

  /** The host of {@code host:port} or {@code [v6]:port}, lower case and without brackets, or null. */
  private static String host(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0) {
      return null;
    }
    String host = hostPort.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return host.isEmpty() ? null : host.toLowerCase(Locale.ROOT);
  }

  private static boolean isAddress(SocketAddress remote, byte[] ip) {
    return remote instanceof InetSocketAddress
        && ((InetSocketAddress) remote).getAddress() != null
        && Arrays.equals(((InetSocketAddress) remote).getAddress().getAddress(), ip);
  }
}

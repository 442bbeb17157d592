package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBufUtil;

/** The byte-exact frames of docs/spec/wire-tchannel.md §15, captured between tchannel-node 4.0.1 peers. */
final class SpecVectors {
  private SpecVectors() {}

  /** §15.1 init req (client to server), 155 bytes. */
  static final byte[] INIT_REQ =
      hex(
          "009b0100000000010000000000000000000200050009686f73745f706f727400"
              + "09302e302e302e303a30000c70726f636573735f6e616d65000b6e6f64655b32"
              + "353832395d0011746368616e6e656c5f6c616e677561676500046e6f64650019"
              + "746368616e6e656c5f6c616e67756167655f76657273696f6e000732302e3230"
              + "2e320010746368616e6e656c5f76657273696f6e0005342e302e31");

  /** §15.1 init res (server to client), 161 bytes. */
  static final byte[] INIT_RES =
      hex(
          "00a10200000000010000000000000000000200050009686f73745f706f727400"
              + "0f3132372e302e302e313a3430343531000c70726f636573735f6e616d65000b"
              + "6e6f64655b32353532365d0011746368616e6e656c5f6c616e67756167650004"
              + "6e6f64650019746368616e6e656c5f6c616e67756167655f76657273696f6e00"
              + "0732302e32302e320010746368616e6e656c5f76657273696f6e0005342e302e"
              + "31");

  /** §15.1 call req: echo-svc, {@code echo}/{@code hdr}/{@code hello}, CRC-32C, ttl 1430, 104 bytes. */
  static final byte[] CALL_REQ =
      hex(
          "006803000000000200000000000000000000000596e4951d284ca9b13d000000"
              + "0000000000e4951d284ca9b13d00086563686f2d737663030261730372617702"
              + "636e096a6176612d7465737402726501630324032b9c00046563686f00036864"
              + "72000568656c6c6f");

  /** §15.1 call res: OK, ``/{@code hdr}/{@code hello}, CRC-32C, 70 bytes. */
  static final byte[] CALL_RES =
      hex(
          "004604000000000200000000000000000000e4951d284ca9b13d000000000000"
              + "0000e4951d284ca9b13d00010261730372617703746c490f0000000368647200"
              + "0568656c6c6f");

  /** §15.3 call req: {@code slow}, empty arg2, {@code zz}, no checksum, ttl 188, 94 bytes. */
  static final byte[] SLOW_CALL_REQ =
      hex(
          "005e030000000002000000000000000000000000bcae56196271b67edd000000"
              + "0000000000ae56196271b67edd00086563686f2d737663030261730372617702"
              + "636e096a6176612d746573740272650163000004736c6f77000000027a7a");

  /** §15.3 error frame: timeout, 91 bytes. */
  static final byte[] TIMEOUT_ERROR =
      hex(
          "005bff0000000002000000000000000001ae56196271b67edd00000000000000"
              + "00ae56196271b67edd00002f726571756573742074696d6564206f7574206166"
              + "746572203138386d7320286c696d697420776173203138386d7329");

  /** §15.4 fragmentation vector, frame 1 of 3 (90 bytes). */
  static final byte[] FRAGMENT_1 =
      hex(
          "005a030000000002000000000000000001000003e80102030405060708000000"
              + "0000000000010203040506070800086563686f2d737663020261730372617702"
              + "636e0872617770726f626503be46e9a700046563686f00026864");

  /** §15.4 frame 2 of 3 (31 bytes). */
  static final byte[] FRAGMENT_2 =
      hex("001f13000000000200000000000000000103a96c57ea0007722d6279746573");

  /** §15.4 frame 3 of 3 (31 bytes). */
  static final byte[] FRAGMENT_3 =
      hex("001f13000000000200000000000000000003bcfd90160000000568656c6c6f");

  static byte[] hex(String s) {
    return ByteBufUtil.decodeHexDump(s);
  }
}

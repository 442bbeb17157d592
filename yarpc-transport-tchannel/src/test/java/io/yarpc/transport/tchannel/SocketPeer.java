package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/** A TChannel peer played by hand over a plain {@link Socket}: writes raw frames, reads frames back. */
final class SocketPeer implements Closeable {
  /** A frame read back. */
  record Frame(int type, int id, byte[] payload) {
    /** An error frame's code. */
    int errorCode() {
      return payload[0] & 0xFF;
    }

    /** An error frame's message. */
    String errorMessage() {
      int length = (payload[26] & 0xFF) << 8 | payload[27] & 0xFF;
      return new String(payload, 28, length, UTF_8);
    }

    /** A call res's code byte. */
    int responseCode() {
      return payload[1] & 0xFF;
    }

    @Override
    public String toString() {
      return "Frame{type=0x"
          + Integer.toHexString(type)
          + ", id="
          + Integer.toUnsignedString(id)
          + (type == 0xFF
              ? ", code=0x" + Integer.toHexString(errorCode()) + ", message=" + errorMessage()
              : "")
          + "}";
    }
  }

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;

  private SocketPeer(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
  }

  /** Connects, with a 10 s read timeout (only a guard against hangs). */
  static SocketPeer connect(InetSocketAddress address) throws IOException {
    Socket s = new Socket();
    s.connect(address, 10_000);
    s.setSoTimeout(10_000);
    s.setTcpNoDelay(true);
    return new SocketPeer(s);
  }

  /** Connects and completes the init handshake. */
  static SocketPeer connectAndInit(InetSocketAddress address) throws IOException {
    SocketPeer p = connect(address);
    p.write(Wire.initReq(1));
    Frame res = p.read();
    assertThat(res.type()).as("init res").isEqualTo(0x02);
    assertThat(res.id()).isEqualTo(1);
    return p;
  }

  void write(byte[]... frames) throws IOException {
    for (byte[] f : frames) {
      out.write(f);
    }
    out.flush();
  }

  /** Reads the next frame; fails on end of stream or after the read timeout. */
  Frame read() throws IOException {
    int size = in.readUnsignedShort();
    byte[] rest = new byte[size - 2];
    in.readFully(rest);
    ByteBuffer b = ByteBuffer.wrap(rest);
    int type = b.get() & 0xFF;
    b.get();
    int id = b.getInt();
    byte[] payload = new byte[size - 16];
    System.arraycopy(rest, 14, payload, 0, payload.length);
    return new Frame(type, id, payload);
  }

  /** Reads the next frame and checks it is an error frame with this id, code and message. */
  void expectError(int id, int code, String message) throws IOException {
    Frame f = read();
    assertThat(f.type()).as("frame type of %s", f).isEqualTo(0xFF);
    assertThat(f.id()).as("id of %s", f).isEqualTo(id);
    assertThat(f.errorCode()).as("error code of %s", f).isEqualTo(code);
    assertThat(f.errorMessage()).isEqualTo(message);
  }

  /** Whether the server closed the connection (end of stream before the read timeout). */
  boolean closedByPeer() throws IOException {
    try {
      return in.read() == -1;
    } catch (EOFException | SocketException e) {
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    }
  }

  /** Checks that the connection still works: a ping req is answered with a ping res. */
  void assertOpen(int pingId) throws IOException {
    write(Wire.frame(0xD0, pingId, new byte[0]));
    Frame f = read();
    assertThat(f.type()).as("expected a ping res, got %s", f).isEqualTo(0xD1);
    assertThat(f.id()).isEqualTo(pingId);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}

package io.yarpc.transport.grpc;

import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerTransport;
import io.yarpc.testing.RetrySuite;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.UnaryOutbound;
import java.net.InetSocketAddress;

/**
 * Retries over gRPC. A grpc-java server cannot refuse a call with {@code REFUSED_STREAM} through its API
 * (grpc-java's client retries a refused stream or one past a GOAWAY by itself), so a call the dispatcher
 * refuses before its handler is retried only when its procedure is idempotent; a peer grpc-java cannot
 * connect to is retried on the next peer.
 */
class GrpcRetryTest extends RetrySuite {
  @Override
  protected Inbound newInbound() {
    return GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
  }

  @Override
  protected PeerTransport newClientTransport() {
    return GrpcTransport.create();
  }

  @Override
  protected UnaryOutbound outbound(PeerTransport transport, PeerChooser chooser) {
    return ((GrpcTransport) transport).outbound(chooser);
  }

  @Override
  protected boolean signalsRefusal() {
    return false;
  }
}

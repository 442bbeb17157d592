package io.yarpc.testing;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Headers;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One in-memory stream: two pipes (client to server, server to client) with flow control, the server's
 * headers, and the end of the stream. Every state change happens under one lock; futures are completed
 * afterwards on the transport's I/O threads, never inside the lock and never on the caller's thread.
 *
 * <p>Flow control per pipe: {@code receive()} asks for exactly one message; a sent message goes straight
 * to a pending receive or waits in the pipe's queue, and the {@code send()} future completes only when the
 * queue holds at most {@code window} messages — otherwise when the receiver has taken enough of them.
 */
final class InMemoryStream {
  private static final Object OK = new Object();

  private final InMemoryTransport transport;
  private final RequestMeta clientMeta;
  private final RequestMeta serverMeta;
  private final String what;
  private final int window;
  private final Object lock = new Object();
  private final Pipe toServer;
  private final Pipe toClient;
  private final CompletableFuture<Headers> headers = new CompletableFuture<>();
  private final CompletableFuture<Headers> trailers = new CompletableFuture<>();
  private volatile Headers serverTrailers = Headers.empty();
  private final ClientEnd client = new ClientEnd();
  private final ServerEnd server = new ServerEnd();
  private final Runnable onClientDone;

  /** Guarded by {@link #lock}. */
  private boolean headersSent;

  /** Guarded by {@link #lock}. */
  private boolean serverSentMessage;

  private volatile CompletableFuture<Void> handler;
  private volatile boolean cancelled;
  private Runnable onServerEnd = () -> {};

  InMemoryStream(
      InMemoryTransport transport,
      RequestMeta clientMeta,
      RequestMeta serverMeta,
      Runnable onClientDone) {
    this.transport = transport;
    this.clientMeta = clientMeta;
    this.serverMeta = serverMeta;
    this.what = InMemoryInbound.describe(clientMeta);
    this.window = transport.streamWindow();
    this.onClientDone = onClientDone;
    this.toServer = new Pipe("stream message to server of " + what, false);
    this.toClient = new Pipe("stream message to client of " + what, true);
  }

  RequestMeta serverMeta() {
    return serverMeta;
  }

  ClientStream client() {
    return client;
  }

  /** Runs the handler with the server's end; its future's completion ends the stream. */
  void start(Handler<ServerStream, Void> streamHandler, Runnable onServerEnd) {
    this.onServerEnd = onServerEnd;
    CompletableFuture<Void> f = InboundCalls.handle(streamHandler, server, () -> {});
    handler = f;
    if (cancelled) {
      f.cancel(false);
    }
    f.whenComplete((v, e) -> serverEnded(e));
  }

  /** Fails everything on both sides with {@code error}, e.g. when an inbound or outbound stops. */
  void abort(YarpcException error) {
    cancelled = true;
    trailers.complete(Headers.empty());
    toServer.abort(error);
    toClient.abort(error);
    fail(headers, error);
    CompletableFuture<Void> h = handler;
    if (h != null) {
      h.cancel(false);
    }
    onClientDone.run();
  }

  private void serverEnded(Throwable error) {
    trailers.complete(InMemoryTransport.copy(serverTrailers)); // before the end reaches the client
    boolean noHeadersSent; // headers already sent complete the client's future themselves, later
    synchronized (lock) {
      noHeadersSent = !headersSent;
      headersSent = true;
    }
    if (error == null) {
      toClient.finishSending(
          null,
          new IllegalStateException(
              "the stream has ended: the handler's future already completed"));
      toServer.receiverGone(new IllegalStateException("the stream has ended"), true, null);
      if (noHeadersSent) {
        transport.execute(() -> headers.complete(Headers.empty()));
      }
    } else {
      YarpcException serverSide = YarpcException.from(error);
      YarpcException clientSide =
          transport.transmitStatus(serverSide, "in-memory stream error of " + what);
      toClient.finishSending(clientSide, serverSide);
      toServer.receiverGone(serverSide, false, clientSide);
      if (noHeadersSent) {
        fail(headers, clientSide);
      }
    }
    onServerEnd.run();
  }

  private void fail(CompletableFuture<?> f, Throwable error) {
    transport.execute(() -> f.completeExceptionally(error));
  }

  private void runAll(List<Runnable> actions) {
    for (Runnable r : actions) {
      transport.execute(r);
    }
  }

  private static void deliver(CompletableFuture<StreamMessage> receiver, Body body) {
    if (body == null) {
      receiver.complete(null);
    } else if (!receiver.complete(StreamMessage.of(body))) {
      body.release(); // the receiver gave up on this receive
    }
  }

  @Override
  public String toString() {
    return "InMemoryStream{" + what + "}";
  }

  /** One direction of the stream. All fields are guarded by {@link #lock}. */
  private final class Pipe {
    private final String label;
    private final boolean serverSends;
    private final ArrayDeque<Body> queue = new ArrayDeque<>();
    private CompletableFuture<StreamMessage> pendingReceive;
    private CompletableFuture<Void> stalled;

    /** What the receiver gets once the queue is empty: null (nothing yet), OK or an exception. */
    private Object end;

    private Throwable receiveRejection;
    private Throwable sendRejection;
    private boolean dropSends;

    Pipe(String label, boolean serverSends) {
      this.label = label;
      this.serverSends = serverSends;
    }

    private Throwable sendProblem() {
      if (sendRejection != null) {
        return sendRejection;
      }
      if (!dropSends && stalled != null) {
        return new IllegalStateException(
            "a send is already pending: wait for the previous send's future");
      }
      return null;
    }

    CompletableFuture<Void> send(StreamMessage message) {
      requireNonNull(message, "message");
      Throwable problem;
      boolean drop;
      synchronized (lock) {
        problem = sendProblem();
        drop = dropSends;
      }
      if (problem != null || drop) {
        message.release();
        return problem != null ? CompletableFuture.failedFuture(problem) : completedLater();
      }
      Body wire;
      try {
        wire = transport.transmit(message.body(), "in-memory " + label);
      } catch (YarpcException e) {
        return CompletableFuture.failedFuture(e);
      }
      CompletableFuture<Void> sent = new CompletableFuture<>();
      List<Runnable> after = new ArrayList<>(3);
      synchronized (lock) {
        problem = sendProblem();
        if (problem != null || dropSends) {
          Throwable p = problem;
          after.add(wire::release);
          after.add(p != null ? () -> sent.completeExceptionally(p) : () -> sent.complete(null));
        } else {
          if (serverSends) {
            serverSentMessage = true;
            if (!headersSent) {
              headersSent = true;
              after.add(() -> headers.complete(Headers.empty()));
            }
          }
          if (pendingReceive != null && !pendingReceive.isDone()) {
            CompletableFuture<StreamMessage> receiver = pendingReceive;
            pendingReceive = null;
            after.add(() -> deliver(receiver, wire));
            after.add(() -> sent.complete(null));
          } else {
            pendingReceive = null;
            queue.add(wire);
            if (queue.size() <= window) {
              after.add(() -> sent.complete(null));
            } else {
              stalled = sent;
            }
          }
        }
      }
      runAll(after);
      return sent;
    }

    CompletableFuture<StreamMessage> receive() {
      List<Runnable> after = new ArrayList<>(2);
      CompletableFuture<StreamMessage> received;
      boolean terminal = false;
      synchronized (lock) {
        if (receiveRejection != null) {
          return CompletableFuture.failedFuture(receiveRejection);
        }
        if (pendingReceive != null && !pendingReceive.isDone()) {
          return CompletableFuture.failedFuture(
              new IllegalStateException("a receive is already pending: wait for its future"));
        }
        Body next = queue.poll();
        if (next != null) {
          CompletableFuture<StreamMessage> f = new CompletableFuture<>();
          received = f;
          after.add(() -> deliver(f, next));
          if (stalled != null && queue.size() <= window) {
            CompletableFuture<Void> s = stalled;
            stalled = null;
            after.add(() -> s.complete(null));
          }
        } else if (end != null) {
          received = new CompletableFuture<>();
          terminal = true;
          if (end == OK) {
            after.add(() -> received.complete(null));
          } else {
            Throwable e = (Throwable) end;
            after.add(() -> received.completeExceptionally(e));
          }
        } else {
          received = new CompletableFuture<>();
          pendingReceive = received;
        }
      }
      runAll(after);
      if (terminal && serverSends) {
        onClientDone.run();
      }
      return received;
    }

    /** The sender is done: the receiver gets the queue, then end of stream ({@code error == null}) or the error. */
    void finishSending(YarpcException error, Throwable rejectSends) {
      List<Runnable> after = new ArrayList<>(2);
      boolean terminal = false;
      synchronized (lock) {
        if (sendRejection == null && !dropSends) {
          sendRejection = rejectSends;
        }
        if (end != null || receiveRejection != null) {
          return;
        }
        end = error == null ? OK : error;
        if (queue.isEmpty() && pendingReceive != null) {
          CompletableFuture<StreamMessage> receiver = pendingReceive;
          pendingReceive = null;
          terminal = true;
          after.add(
              error == null
                  ? () -> receiver.complete(null)
                  : () -> receiver.completeExceptionally(error));
        }
        if (error != null && stalled != null) {
          CompletableFuture<Void> s = stalled;
          stalled = null;
          after.add(() -> s.completeExceptionally(error));
        }
      }
      runAll(after);
      if (terminal && serverSends) {
        onClientDone.run();
      }
    }

    /** The receiver is gone: queued messages are dropped, receives fail, sends are dropped or fail. */
    void receiverGone(Throwable rejectReceives, boolean drop, Throwable rejectSends) {
      List<Runnable> after = new ArrayList<>();
      synchronized (lock) {
        if (receiveRejection == null) {
          receiveRejection = rejectReceives;
        }
        drainLocked(after, receiveRejection);
        if (sendRejection == null && !dropSends) {
          if (drop) {
            dropSends = true;
          } else {
            sendRejection = rejectSends;
          }
        }
        if (stalled != null) {
          CompletableFuture<Void> s = stalled;
          stalled = null;
          Throwable e = sendRejection;
          after.add(e == null ? () -> s.complete(null) : () -> s.completeExceptionally(e));
        }
      }
      runAll(after);
    }

    /** Fails everything at once: queued messages are dropped, pending and later operations fail. */
    void abort(YarpcException error) {
      List<Runnable> after = new ArrayList<>();
      synchronized (lock) {
        if (receiveRejection == null) {
          receiveRejection = error;
        }
        if (sendRejection == null) {
          sendRejection = error;
        }
        dropSends = false;
        drainLocked(after, receiveRejection);
        if (stalled != null) {
          CompletableFuture<Void> s = stalled;
          stalled = null;
          after.add(() -> s.completeExceptionally(error));
        }
      }
      runAll(after);
    }

    private void drainLocked(List<Runnable> after, Throwable receiveError) {
      for (Body b; (b = queue.poll()) != null; ) {
        b.release();
      }
      if (pendingReceive != null) {
        CompletableFuture<StreamMessage> receiver = pendingReceive;
        pendingReceive = null;
        after.add(() -> receiver.completeExceptionally(receiveError));
      }
    }

    private CompletableFuture<Void> completedLater() {
      CompletableFuture<Void> f = new CompletableFuture<>();
      transport.execute(() -> f.complete(null));
      return f;
    }
  }

  /** The server's end, handed to the stream handler. */
  private final class ServerEnd implements ServerStream {
    @Override
    public RequestMeta meta() {
      return serverMeta;
    }

    @Override
    public CompletableFuture<Void> send(StreamMessage message) {
      return toClient.send(message);
    }

    @Override
    public CompletableFuture<StreamMessage> receive() {
      return toServer.receive();
    }

    @Override
    public void sendHeaders(Headers h) {
      requireNonNull(h, "headers");
      synchronized (lock) {
        Throwable ended = toClient.sendRejection;
        if (ended instanceof YarpcException) {
          throw (YarpcException) ended;
        }
        if (ended != null) {
          throw new IllegalStateException("the stream has ended", ended);
        }
        if (headersSent) {
          throw new IllegalStateException(
              serverSentMessage
                  ? "stream headers must be sent before the first message"
                  : "stream headers were already sent");
        }
        headersSent = true;
      }
      Headers copy = InMemoryTransport.copy(h);
      transport.execute(() -> headers.complete(copy));
    }

    @Override
    public void setTrailers(Headers t) {
      serverTrailers = requireNonNull(t, "trailers");
    }

    @Override
    public String toString() {
      return "InMemoryServerStream{" + what + "}";
    }
  }

  /** The client's end, returned by the outbound. */
  private final class ClientEnd implements ClientStream {
    @Override
    public RequestMeta meta() {
      return clientMeta;
    }

    @Override
    public CompletableFuture<Void> send(StreamMessage message) {
      return toServer.send(message);
    }

    @Override
    public CompletableFuture<StreamMessage> receive() {
      return toClient.receive();
    }

    @Override
    public CompletableFuture<Headers> headers() {
      return headers.copy();
    }

    @Override
    public CompletableFuture<Headers> trailers() {
      return trailers.copy();
    }

    @Override
    public void halfClose() {
      toServer.finishSending(null, new IllegalStateException("cannot send after halfClose()"));
    }

    @Override
    public void cancel() {
      if (cancelled) {
        return;
      }
      abort(
          YarpcException.of(
              Code.CANCELLED,
              "stream to procedure \"%s\" of service \"%s\" was cancelled by the caller",
              clientMeta.procedure(),
              clientMeta.service()));
    }

    @Override
    public String toString() {
      return "InMemoryClientStream{" + what + "}";
    }
  }
}

package io.yarpc.observability.admin.internal;

import com.google.gson.stream.JsonWriter;
import io.yarpc.DispatcherStatus;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.PeerStatus;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.RpcType;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * {@link DispatcherStatus} as JSON: the records' component names as field names, enums by {@code
 * name()}, addresses as {@code host:port}, absent values as {@code null}. Indented, for people with curl.
 */
final class StatusJson {
  private StatusJson() {}

  static String render(DispatcherStatus status) {
    StringWriter text = new StringWriter(4096);
    try (JsonWriter w = new JsonWriter(text)) {
      w.setIndent("  ");
      w.setSerializeNulls(true);
      w.beginObject();
      w.name("name").value(status.name());
      w.name("state").value(status.state().name());
      w.name("callsInFlight").value(status.callsInFlight());
      w.name("procedures").beginArray();
      for (DispatcherStatus.ProcedureStatus p : status.procedures()) {
        w.beginObject();
        w.name("service").value(p.service());
        w.name("name").value(p.name());
        w.name("encoding").value(p.encoding());
        w.name("rpcType").value(p.rpcType().name());
        w.name("signature").value(p.signature());
        w.name("callsInFlight").value(p.callsInFlight());
        w.endObject();
      }
      w.endArray();
      w.name("inbounds").beginArray();
      for (DispatcherStatus.InboundStatus in : status.inbounds()) {
        w.beginObject();
        w.name("transportName").value(in.transportName());
        w.name("address").value(AdminChannels.describe(in.address()));
        w.name("running").value(in.running());
        w.endObject();
      }
      w.endArray();
      w.name("outbounds").beginArray();
      for (DispatcherStatus.OutboundStatus o : status.outbounds()) {
        w.beginObject();
        w.name("key").value(o.key());
        w.name("service").value(o.service());
        w.name("rpcTypes").beginArray();
        for (RpcType t : o.rpcTypes()) {
          w.value(t.name());
        }
        w.endArray();
        w.name("transportName").value(o.transportName());
        w.name("running").value(o.running());
        w.name("chooser");
        writeChooser(w, o.chooser());
        w.endObject();
      }
      w.endArray();
      w.endObject();
    } catch (IOException e) { // a StringWriter does not throw
      throw new UncheckedIOException(e);
    }
    return text.append('\n').toString();
  }

  private static void writeChooser(JsonWriter w, ChooserStatus chooser) throws IOException {
    if (chooser == null) {
      w.nullValue();
      return;
    }
    w.beginObject();
    w.name("kind").value(chooser.kind());
    w.name("peers").beginArray();
    for (PeerStatus p : chooser.peers()) {
      w.beginObject();
      w.name("identifier").value(p.identifier());
      w.name("status").value(p.status().name());
      w.name("unavailableReason").value(p.unavailableReason());
      w.name("pendingRequests").value(p.pendingRequests());
      w.endObject();
    }
    w.endArray();
    w.name("updater");
    writeUpdater(w, chooser.updater());
    w.endObject();
  }

  private static void writeUpdater(JsonWriter w, UpdaterStatus updater) throws IOException {
    if (updater == null) {
      w.nullValue();
      return;
    }
    w.beginObject();
    w.name("kind").value(updater.kind());
    w.name("source").value(updater.source());
    w.name("running").value(updater.running());
    w.name("peers").beginArray();
    for (String p : updater.peers()) {
      w.value(p);
    }
    w.endArray();
    w.name("lastRefresh")
        .value(updater.lastRefresh() == null ? null : updater.lastRefresh().toString());
    w.name("lastError").value(updater.lastError());
    w.name("consecutiveFailures").value(updater.consecutiveFailures());
    w.endObject();
  }
}

package io.yarpc.observability.admin.internal;

import io.yarpc.DispatcherStatus;
import io.yarpc.DispatcherStatus.InboundStatus;
import io.yarpc.DispatcherStatus.OutboundStatus;
import io.yarpc.DispatcherStatus.ProcedureStatus;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.PeerStatus;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.RpcType;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.StringJoiner;

/**
 * The {@code /debug/yarpc} page: one self-contained HTML document (an inline style sheet; no script, no
 * external asset) with a table each for procedures, inbounds, outbounds and peers. Every text that comes
 * from the dispatcher is HTML-escaped. Tables and rows carry ids and classes ({@code
 * id="procedures"}, {@code class="peer unavailable"}) so tools and tests can find them.
 */
final class StatusHtml {
  private static final String STYLE =
      String.join(
          "\n",
          "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;"
              + "color:#1f2328;background:#fff}",
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}",
          ".summary{color:#57606a;margin:0 0 8px}.summary b{color:#1f2328}",
          "nav a{margin-right:14px;color:#0969da}",
          "table{border-collapse:collapse;width:100%;margin-bottom:4px}",
          "th,td{text-align:left;padding:5px 10px;border-bottom:1px solid #d0d7de;vertical-align:top;"
              + "white-space:nowrap}",
          "td.wrap{white-space:normal;overflow-wrap:anywhere}",
          "th{background:#f6f8fa;font-weight:600}",
          "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}",
          "code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}",
          ".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;"
              + "font-weight:600}",
          ".ok{background:#dafbe1;color:#116329}.warn{background:#fff8c5;color:#7d4e00}",
          ".bad{background:#ffebe9;color:#a40e26}.muted{color:#57606a}",
          ".busy{font-weight:700;color:#7d4e00}",
          ".empty{color:#57606a;font-style:italic}");

  private StatusHtml() {}

  static String render(DispatcherStatus s, Instant taken, boolean hasMetrics) {
    StringBuilder h = new StringBuilder(8192);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        .append("<title>")
        .append(esc(s.name()))
        .append(" &middot; yarpc</title>\n<style>\n")
        .append(STYLE)
        .append("\n</style>\n</head>\n<body>\n");

    h.append("<h1 id=\"service\">").append(esc(s.name())).append("</h1>\n");
    h.append("<p class=\"summary\">state ")
        .append(stateBadge(s.state()))
        .append(" &middot; <b id=\"calls-in-flight\">")
        .append(s.callsInFlight())
        .append("</b> call")
        .append(s.callsInFlight() == 1 ? "" : "s")
        .append(" in flight &middot; <b>")
        .append(s.procedures().size())
        .append("</b> procedure")
        .append(s.procedures().size() == 1 ? "" : "s")
        .append(" &middot; taken <time datetime=\"")
        .append(taken.truncatedTo(ChronoUnit.MILLIS))
        .append("\">")
        .append(taken.truncatedTo(ChronoUnit.SECONDS))
        .append("</time></p>\n");
    h.append("<nav><a href=\"")
        .append(AdminRoutes.DEBUG_JSON)
        .append("\">JSON</a><a href=\"")
        .append(AdminRoutes.HEALTH)
        .append("\">health</a>");
    if (hasMetrics) {
      h.append("<a href=\"").append(AdminRoutes.METRICS).append("\">metrics</a>");
    }
    h.append("</nav>\n");

    procedures(h, s);
    inbounds(h, s);
    outbounds(h, s);
    peers(h, s);

    h.append("</body>\n</html>\n");
    return h.toString();
  }

  private static void procedures(StringBuilder h, DispatcherStatus s) {
    h.append("<h2>Procedures</h2>\n<table id=\"procedures\">\n<thead><tr>")
        .append("<th>Service</th><th>Procedure</th><th>Encoding</th><th>RPC type</th>")
        .append("<th class=\"num\">Calls in flight</th><th>Signature</th></tr></thead>\n<tbody>\n");
    if (s.procedures().isEmpty()) {
      emptyRow(h, 6, "no procedures registered");
    }
    for (ProcedureStatus p : s.procedures()) {
      h.append("<tr class=\"procedure\"><td>")
          .append(esc(p.service()))
          .append("</td><td class=\"mono\">")
          .append(esc(p.name()))
          .append("</td><td>")
          .append(p.encoding().isEmpty() ? "<span class=\"muted\">any</span>" : esc(p.encoding()))
          .append("</td><td>")
          .append(esc(p.rpcType().toString()))
          .append("</td><td class=\"num")
          .append(p.callsInFlight() > 0 ? " busy" : "")
          .append("\">")
          .append(p.callsInFlight())
          .append("</td><td class=\"mono wrap\">")
          .append(esc(p.signature()))
          .append("</td></tr>\n");
    }
    h.append("</tbody>\n</table>\n");
  }

  private static void inbounds(StringBuilder h, DispatcherStatus s) {
    h.append("<h2>Inbounds</h2>\n<table id=\"inbounds\">\n<thead><tr>")
        .append("<th>Transport</th><th>Address</th><th>State</th></tr></thead>\n<tbody>\n");
    if (s.inbounds().isEmpty()) {
      emptyRow(h, 3, "no inbounds");
    }
    for (InboundStatus in : s.inbounds()) {
      String address = AdminChannels.describe(in.address());
      h.append("<tr class=\"inbound\"><td>")
          .append(esc(in.transportName()))
          .append("</td><td class=\"mono\">")
          .append(address == null ? "<span class=\"muted\">not listening</span>" : esc(address))
          .append("</td><td>")
          .append(runningBadge(in.running()))
          .append("</td></tr>\n");
    }
    h.append("</tbody>\n</table>\n");
  }

  private static void outbounds(StringBuilder h, DispatcherStatus s) {
    h.append("<h2>Outbounds</h2>\n<table id=\"outbounds\">\n<thead><tr>")
        .append("<th>Key</th><th>Service</th><th>Transport</th><th>RPC types</th><th>State</th>")
        .append("<th>Peer chooser</th><th class=\"num\">Peers available</th></tr></thead>\n")
        .append("<tbody>\n");
    if (s.outbounds().isEmpty()) {
      emptyRow(h, 7, "no outbounds");
    }
    for (OutboundStatus o : s.outbounds()) {
      StringJoiner types = new StringJoiner(", ");
      for (RpcType t : o.rpcTypes()) {
        types.add(t.toString());
      }
      h.append("<tr class=\"outbound\"><td>")
          .append(esc(o.key()))
          .append("</td><td>")
          .append(esc(o.service()))
          .append("</td><td>")
          .append(esc(o.transportName()))
          .append("</td><td>")
          .append(esc(types.toString()))
          .append("</td><td>")
          .append(runningBadge(o.running()))
          .append("</td><td>");
      if (o.chooser() == null) {
        h.append("<span class=\"muted\">none reported</span></td><td class=\"num\"></td>");
      } else {
        long available =
            o.chooser().peers().stream()
                .filter(p -> p.status() == ConnectionStatus.AVAILABLE)
                .count();
        h.append(esc(o.chooser().kind()));
        UpdaterStatus u = o.chooser().updater();
        if (u != null) {
          h.append("<br><span class=\"updater muted\">")
              .append(esc(u.kind()))
              .append(": ")
              .append(esc(u.source()))
              .append("</span>");
          if (u.lastError() != null) {
            h.append("<br><span class=\"updater-error badge bad\">")
                .append(esc(u.lastError()))
                .append("</span>");
          }
        }
        h.append("</td><td class=\"num\">")
            .append(available)
            .append(" of ")
            .append(o.chooser().peers().size())
            .append("</td>");
      }
      h.append("</tr>\n");
    }
    h.append("</tbody>\n</table>\n");
  }

  private static void peers(StringBuilder h, DispatcherStatus s) {
    h.append("<h2>Peers</h2>\n<table id=\"peers\">\n<thead><tr>")
        .append("<th>Outbound</th><th>Transport</th><th>Peer</th><th>Status</th>")
        .append("<th class=\"num\">Pending requests</th><th>Why unavailable</th></tr></thead>\n")
        .append("<tbody>\n");
    int rows = 0;
    for (OutboundStatus o : s.outbounds()) {
      if (o.chooser() == null) {
        continue;
      }
      for (PeerStatus p : o.chooser().peers()) {
        rows++;
        String status = p.status().name().toLowerCase(Locale.ROOT);
        h.append("<tr class=\"peer ")
            .append(status)
            .append("\"><td>")
            .append(esc(o.key()))
            .append("</td><td>")
            .append(esc(o.transportName()))
            .append("</td><td class=\"mono\">")
            .append(esc(p.identifier()))
            .append("</td><td>")
            .append(peerBadge(p.status()))
            .append("</td><td class=\"num")
            .append(p.pendingRequests() > 0 ? " busy" : "")
            .append("\">")
            .append(p.pendingRequests())
            .append("</td><td class=\"wrap\">")
            .append(p.unavailableReason() == null ? "" : esc(p.unavailableReason()))
            .append("</td></tr>\n");
      }
    }
    if (rows == 0) {
      emptyRow(h, 6, "no peers reported");
    }
    h.append("</tbody>\n</table>\n");
  }

  private static void emptyRow(StringBuilder h, int columns, String text) {
    h.append("<tr><td class=\"empty\" colspan=\"")
        .append(columns)
        .append("\">")
        .append(text)
        .append("</td></tr>\n");
  }

  private static String stateBadge(DispatcherStatus.State state) {
    String kind =
        state == DispatcherStatus.State.RUNNING
            ? "ok"
            : state == DispatcherStatus.State.STOPPED ? "bad" : "warn";
    return "<span id=\"state\" class=\"badge " + kind + "\">" + state.name() + "</span>";
  }

  private static String runningBadge(boolean running) {
    return running
        ? "<span class=\"badge ok\">running</span>"
        : "<span class=\"badge bad\">not running</span>";
  }

  private static String peerBadge(ConnectionStatus status) {
    String kind =
        status == ConnectionStatus.AVAILABLE
            ? "ok"
            : status == ConnectionStatus.CONNECTING ? "warn" : "bad";
    return "<span class=\"badge " + kind + "\">" + status.name() + "</span>";
  }

  /** {@code text} with {@code & < > " '} escaped, safe in element content and quoted attributes. */
  static String esc(String text) {
    if (text == null) {
      return "";
    }
    StringBuilder b = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      String r;
      switch (c) {
        case '&':
          r = "&amp;";
          break;
        case '<':
          r = "&lt;";
          break;
        case '>':
          r = "&gt;";
          break;
        case '"':
          r = "&quot;";
          break;
        case '\'':
          r = "&#39;";
          break;
        default:
          r = null;
      }
      if (r != null) {
        if (b == null) {
          b = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        b.append(r);
      } else if (b != null) {
        b.append(c);
      }
    }
    return b == null ? text : b.toString();
  }
}

package io.yarpc.observability.admin.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.yarpc.DispatcherStatus;
import io.yarpc.DispatcherStatus.OutboundStatus;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.PeerStatus;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.RpcType;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The status page and its JSON show the updater that feeds an outbound's peer list, and its error. */
class UpdaterStatusRenderingTest {
  private static DispatcherStatus status(UpdaterStatus updater) {
    ChooserStatus chooser =
        new ChooserStatus(
            "round-robin",
            List.of(new PeerStatus("10.0.0.1:8080", ConnectionStatus.AVAILABLE, null, 0)),
            updater);
    return new DispatcherStatus(
        "gateway",
        DispatcherStatus.State.RUNNING,
        0,
        List.of(),
        List.of(),
        List.of(
            new OutboundStatus("users", "users", Set.of(RpcType.UNARY), "http", true, chooser)));
  }

  @Test
  void theUpdatersStatusIsInTheJsonAndThePage() {
    UpdaterStatus failing =
        new UpdaterStatus(
            "dns",
            "SRV _http._tcp.users.svc.test",
            true,
            List.of("10.0.0.1:8080"),
            Instant.parse("2026-12-01T10:00:00Z"),
            "SRV lookup of _http._tcp.users.svc.test failed: <NXDOMAIN>",
            3);
    JsonObject updater =
        JsonParser.parseString(StatusJson.render(status(failing)))
            .getAsJsonObject()
            .getAsJsonArray("outbounds")
            .get(0)
            .getAsJsonObject()
            .getAsJsonObject("chooser")
            .getAsJsonObject("updater");
    assertThat(updater.get("kind").getAsString()).isEqualTo("dns");
    assertThat(updater.get("source").getAsString()).isEqualTo("SRV _http._tcp.users.svc.test");
    assertThat(updater.get("running").getAsBoolean()).isTrue();
    assertThat(updater.getAsJsonArray("peers").get(0).getAsString()).isEqualTo("10.0.0.1:8080");
    assertThat(updater.get("lastRefresh").getAsString()).isEqualTo("2026-12-01T10:00:00Z");
    assertThat(updater.get("lastError").getAsString())
        .isEqualTo("SRV lookup of _http._tcp.users.svc.test failed: <NXDOMAIN>");
    assertThat(updater.get("consecutiveFailures").getAsInt()).isEqualTo(3);

    String page = StatusHtml.render(status(failing), Instant.EPOCH, false);
    assertThat(page)
        .contains("<span class=\"updater muted\">dns: SRV _http._tcp.users.svc.test</span>")
        .contains(
            "<span class=\"updater-error badge bad\">SRV lookup of _http._tcp.users.svc.test"
                + " failed: &lt;NXDOMAIN&gt;</span>");

    String without = StatusHtml.render(status(null), Instant.EPOCH, false);
    assertThat(without).doesNotContain("class=\"updater");
    assertThat(
            JsonParser.parseString(StatusJson.render(status(null)))
                .getAsJsonObject()
                .getAsJsonArray("outbounds")
                .get(0)
                .getAsJsonObject()
                .getAsJsonObject("chooser")
                .get("updater")
                .isJsonNull())
        .isTrue();
  }
}

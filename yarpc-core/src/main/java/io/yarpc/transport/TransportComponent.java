package io.yarpc.transport;

import java.util.List;

/** An inbound or outbound: a {@link Lifecycle} that may depend on shared {@link Transport}s. */
public interface TransportComponent extends Lifecycle {
  /** The transports this component needs running first. */
  default List<Transport> transports() {
    return List.of();
  }

  /** The transport's name as it appears in {@link RequestMeta#transport()}, e.g. {@code http}. */
  String transportName();
}

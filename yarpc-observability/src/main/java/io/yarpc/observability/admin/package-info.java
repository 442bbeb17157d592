/**
 * The admin listener: {@link io.yarpc.observability.admin.AdminServer}, an HTTP/1.1 server on a port of
 * its own with {@code /metrics} (Prometheus), {@code /health} and the {@code /debug/yarpc} page (and
 * its JSON twin), built on {@link io.yarpc.Dispatcher#introspect()}.
 */
package io.yarpc.observability.admin;

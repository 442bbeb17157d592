/**
 * Example: a gateway whose handler calls a downstream service, the deadline propagating from hop to hop
 * ({@link io.yarpc.examples.gateway.GatewayExample}).
 */
package io.yarpc.examples.gateway;

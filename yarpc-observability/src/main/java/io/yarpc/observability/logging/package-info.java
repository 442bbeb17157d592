/**
 * One structured slf4j line per call: {@link io.yarpc.observability.logging.YarpcCallLogs}, installed on a
 * {@link io.yarpc.Dispatcher.Builder}, with yarpc-go's messages, fields and levels per {@link
 * io.yarpc.observability.logging.CallOutcome}.
 */
package io.yarpc.observability.logging;

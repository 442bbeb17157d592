/**
 * The implementation behind {@link io.yarpc.observability.logging.YarpcCallLogs}: the observer that writes
 * one line per call, and the reader of a configuration file's {@code logging.levels} section. Not an API.
 */
@Internal
package io.yarpc.observability.logging.internal;

import io.yarpc.Internal;

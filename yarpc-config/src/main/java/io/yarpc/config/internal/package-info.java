/**
 * The implementation of {@link io.yarpc.config.YarpcConfig}: YAML parsing (SnakeYAML Engine), the
 * sections specs read, interpolation, and the loader that builds the dispatcher; not a public API, may
 * change without notice.
 */
@Internal
package io.yarpc.config.internal;

import io.yarpc.Internal;

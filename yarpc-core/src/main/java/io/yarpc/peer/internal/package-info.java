/**
 * Implementation details of the peer choosers in {@link io.yarpc.peer}; not a public API, may change
 * without notice.
 */
@Internal
package io.yarpc.peer.internal;

import io.yarpc.Internal;

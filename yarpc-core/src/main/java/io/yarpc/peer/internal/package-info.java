/**
 * Implementation details of the peer choosers in {@link io.yarpc.peer}; not a public API, may change
 * without notice.
 */
package io.yarpc.peer.internal;

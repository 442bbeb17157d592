/**
 * How the updaters of {@link io.yarpc.discovery} work: the membership bookkeeping they share, DNS
 * lookups on Netty's resolver, the peers file's parser and watcher, and their configuration specs; not a
 * public API, may change without notice.
 */
@Internal
package io.yarpc.discovery.internal;

import io.yarpc.Internal;

/**
 * Peer list updaters that follow a source as it changes, so that an outbound's peers are whatever the
 * source says now: {@link io.yarpc.discovery.DnsPeerListUpdater} (A, AAAA or SRV records, refreshed as
 * their TTLs run out; a Kubernetes headless service) and {@link io.yarpc.discovery.FilePeerListUpdater}
 * (a JSON or YAML file, watched). Bind one to a peer list with {@link io.yarpc.peer.BoundPeerChooser}, or
 * name it in a configuration file instead of the static {@code peers} (the {@code dns} and {@code
 * peers-file} blocks, registered with {@code yarpc-config} through {@link java.util.ServiceLoader}).
 *
 * <p>Both follow the contract of {@link io.yarpc.peer.PeerListUpdater}: one {@code update} per change,
 * with only the difference; a failed read keeps the last good membership and shows in the updater's
 * status and the outbound's introspection; nothing touches the list after {@code stop()}.
 */
package io.yarpc.discovery;

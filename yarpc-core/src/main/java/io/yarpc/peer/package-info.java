/**
 * Peer management: the SPI between transports and peer choosers, and the provided choosers.
 *
 * <p>Ownership, as in yarpc-go: a {@link io.yarpc.peer.PeerTransport} owns its {@link io.yarpc.peer.Peer}s
 * and reference-counts them by subscriber; a {@link io.yarpc.peer.PeerChooser} only chooses, retaining the
 * peers it may choose while it runs and releasing each retain exactly once when it stops; a
 * {@link io.yarpc.peer.PeerList} is fed by its builder's static identifiers or by a
 * {@link io.yarpc.peer.PeerListUpdater} (DNS or a file, in {@code yarpc-discovery}), bound to it by a
 * {@link io.yarpc.peer.BoundPeerChooser}; the outbound that receives a {@link io.yarpc.peer.PeerLease} owns
 * it and finishes it once when the call ends.
 *
 * <p>Provided: {@link io.yarpc.peer.SinglePeerChooser} (one fixed address) and the peer lists, which
 * share their mechanics ({@link io.yarpc.peer.AbstractPeerList}: membership, availability, waiting,
 * leases, {@linkplain io.yarpc.peer.OutlierDetection outlier ejection}) and differ in which available
 * peer a call gets: {@link io.yarpc.peer.RoundRobinPeerList}
 * ({@code round-robin}), {@link io.yarpc.peer.FewestPendingPeerList} ({@code fewest-pending-requests}),
 * {@link io.yarpc.peer.RandomPeerList} ({@code random}), {@link io.yarpc.peer.TwoRandomChoicesPeerList}
 * ({@code two-random-choices}) and {@link io.yarpc.peer.HashRingPeerList} ({@code hashring32}).
 */
package io.yarpc.peer;

// Package shmlink is an hw.EthDev between two processes over one shared
// memory file (for instance under /dev/shm): a point-to-point Ethernet
// wire with no kernel in the data path, the shape of DPDK's net_memif
// (drivers/net/memif, "copy mode") without its control channel.
//
// One process creates the region (RoleCreate), the other attaches to it
// (RoleAttach). The file holds a header (magic, version, the layout and
// MTU both sides must agree on, each side's running flag) and, for each
// direction, a single-producer/single-consumer ring of descriptors and
// the frame slots the producing side owns. A sender copies each frame
// (gathering a chain) into its next free slot, writes a descriptor
// {offset, length} and publishes the ring's head; the receiver checks
// every descriptor against the layout, copies the frame into an mbuf of
// its own rx pool and publishes the tail, which frees the slot. Nothing
// a peer writes is trusted: a descriptor out of bounds, a runt, an
// oversized frame or an impossible head or tail index is counted and
// dropped, never followed.
//
// Doorbell: a receiver that finds its ring empty arms it (a flag in the
// region); a sender that publishes frames on an armed ring disarms it
// and wakes the receiver's watcher through a futex word in the region
// (futex(2) without FUTEX_PRIVATE_FLAG works across processes on a
// shared mapping). The watcher calls the function given to SetRxNotify,
// so a parked real-time lcore wakes on arrival (stack/rt's RxNotifier),
// as with hw/tap. A busy receiver never arms, so a busy link costs no
// system call at all.
//
// Liveness: each side holds an open file description lock (F_OFD_SETLK)
// on a byte of its own in the file for as long as it runs; the kernel
// drops it when the process dies, however it dies, so the other side
// sees the peer gone (counted in peer_gone, the link down) without
// trusting a PID or a heartbeat.
package shmlink

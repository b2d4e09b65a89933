// Package ether is the Ethernet II (DIX) frame format: a zero-copy view
// (Frame) over the bytes of a frame, a parsed representation (Repr) with
// Parse and Emit, and MAC address helpers.
//
// The frame is the one DPDK hands over: destination, source, EtherType and
// payload, without preamble and without the frame check sequence (the NIC
// strips and checks the FCS, IEEE 802.3 clause 3.2.9).
//
// 802.1Q: a frame carrying one VLAN tag (TPID 0x8100, IEEE 802.1Q-2018
// clause 9) parses: Repr records the tag control information and the inner
// EtherType, and HeaderLen is 18. A second tag (QinQ, TPID 0x88a8 or a
// nested 0x8100) is rejected with ErrStackedVLAN. The stack above
// (stack/iface) is not VLAN-aware and drops tagged frames with a counted
// reason; a deployment that uses VLANs lets the NIC strip the tag, as
// Gazelle does with DPDK's VLAN strip offload.
//
// Errors are values of type Error, comparable with ==, so that the
// per-packet path can count a drop reason without allocating.
package ether

// Package rss is Receive Side Scaling as NICs compute it: the Toeplitz
// hash of the Microsoft RSS specification ("RSS Hashing Functions" and
// "Verifying the RSS Hash Calculation", Windows driver documentation),
// its default key, the hash inputs (IPv4/IPv6 addresses, then TCP/UDP
// ports, in network byte order), and the redirection table (RETA) that
// maps a hash to a receive queue. The simulated NIC (sim/nic), the
// in-process ring device (hw/ringdev), and the runtime's source-port
// choice (stack/rt) share it so that they steer a flow identically.
//
// Nothing here allocates per packet.
package rss

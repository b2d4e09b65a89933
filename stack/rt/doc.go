// Package rt is Savanna's real-time driver (architecture invariant 3): one
// goroutine per lcore, locked to an OS thread, owning one lstack.Instance
// and polling its queue pair, the same instances the virtual-time engine
// steps.
//
// The threading model is Gazelle's (openEuler gazelle, lstack): the stack
// instance belongs to its lcore alone; application goroutines never touch
// tcp.Conn or the instance. They reach the lcore through lock-free queues:
// a multi-producer single-consumer task list per lcore (Kick and Submit,
// Gazelle's rpc_msg queue) and, per socket, whatever rings the socket
// layer above (stack/gonet) keeps. The lcore tells sockets about readiness
// by draining tcp.Stack.Events after every poll and calling the handler
// registered for the connection or listener (Watch, WatchListener).
//
// An idle lcore spins for Config.Spin and then parks on a wake channel
// with a timeout of its next TCP/ARP deadline, so an idle server does not
// burn a CPU; kicks from applications and receive notifications from
// devices that offer them (RxNotifier) wake it. Config.Busy keeps it
// spinning, DPDK style.
//
// With several lcores the port gets as many queue pairs and RSS spreads
// flows over them; every instance listens on the same ports (Gazelle's
// listen_shadow) and serves the connections that arrive on its queue.
// ARP frames are copied to every instance (Gazelle hands ARP to all stack
// threads too), since each instance keeps its own neighbour cache.
package rt

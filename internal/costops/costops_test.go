package costops_test

import (
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/http"
	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/stackcost"
	"github.com/savanna-sim/savanna/stack/tcp"
	"github.com/savanna-sim/savanna/zlibshim"
)

var _ = Describe("the run's table of cost operations", func() {
	It("has every op of every owner, under its owner's key", func() {
		t := costops.Table()
		n := 0
		for _, s := range costops.Sets() {
			for _, o := range s.Ops {
				Expect(t.Name(o.Op)).To(Equal(o.Key), "%v", o.Op)
				n++
			}
		}
		Expect(t.Len()).To(Equal(n))
	})

	It("has no owner range claimed twice, every op within its owner's range, no id or key twice", func() {
		seen := map[hw.CostOp]bool{}
		keys := map[string]bool{}
		for _, s := range costops.Sets() {
			Expect(seen[s.Base]).To(BeFalse(), "range %v claimed twice", s.Base)
			seen[s.Base] = true
			for _, o := range s.Ops {
				Expect(o.Op.Base()).To(Equal(s.Base), o.Key)
				Expect(keys[o.Key]).To(BeFalse(), o.Key)
				keys[o.Key] = true
			}
		}
		_, err := costops.Build(costops.Sets()...)
		Expect(err).NotTo(HaveOccurred())
	})

	It("catches an owner whose op overflows its range into the next owner's", func() {
		sets := costops.Sets()
		for i := range sets {
			if sets[i].Base == hw.OpsTCP {
				sets[i].Ops = append(sets[i].Ops, hw.CostOpInfo{Op: hw.OpsTCP + hw.OpsCap, Key: "stack_tcp_overflow", Doc: "one op too many"})
			}
		}
		_, err := costops.Build(sets...)
		Expect(err).To(MatchError(ContainSubstring(`tcp's op "stack_tcp_overflow"`)))
		Expect(err).To(MatchError(ContainSubstring("outside its range")))
	})

	It("is exactly what the default cost file prices", func() {
		m := cost.For(costops.Table()).Default()
		var file struct {
			Costs map[string]yaml.Node `yaml:"costs"`
		}
		Expect(yaml.Unmarshal(cost.DefaultBytes(), &file)).To(Succeed())
		var inFile, inTable []string
		for k := range file.Costs {
			inFile = append(inFile, k)
		}
		for _, o := range costops.Table().Ops() {
			inTable = append(inTable, o.Key)
			Expect(m.Entries[o.Op].Source).NotTo(BeEmpty(), o.Key)
		}
		sort.Strings(inFile)
		sort.Strings(inTable)
		Expect(inTable).To(Equal(inFile))
	})

	It("keeps each CPU mode: the operating system's and Linux's model's ops are kernel time", func() {
		var kernel []string
		for _, o := range costops.Table().Ops() {
			if o.Op.Mode() == hw.CPUKernel {
				kernel = append(kernel, o.Key)
			}
		}
		Expect(kernel).To(ConsistOf("syscall", "kernel_copy_byte", "softirq_packet", "kernel_tcp_rx", "kernel_tcp_tx",
			"kernel_ip_rx", "kernel_ip_tx", "interrupt", "context_switch", "wakeup", "lock_contention",
			"epoll_wait_kernel", "syscall_open", "syscall_ioctl", "syscall_futex", "syscall_mmap", "wakeup_same_core",
			"compaction_page", "page_alloc", "epoll_wait_event", "cache_miss", "kernel_conn_bytes", "epoll_ctl_kernel"))
	})

	DescribeTable("names each owner's op by the file key cost files and reports have always used",
		func(op hw.CostOp, key string) {
			Expect(costops.Table().Name(op)).To(Equal(key))
		},
		Entry(nil, iface.CostFrameRx, "stack_eth_rx"),
		Entry(nil, iface.CostARP, "stack_arp"),
		Entry(nil, iface.CostIPRx, "stack_ip_rx"),
		Entry(nil, iface.CostIPTx, "stack_ip_tx"),
		Entry(nil, iface.CostUDPRx, "stack_udp_rx"),
		Entry(nil, iface.CostUDPTx, "stack_udp_tx"),
		Entry(nil, tcp.CostSegmentRx, "stack_tcp_rx"),
		Entry(nil, tcp.CostSegmentTx, "stack_tcp_tx"),
		Entry(nil, stackcost.Timer, "stack_timer"),
		Entry(nil, lstack.CostSocketCall, "stack_socket_call"),
		Entry(nil, lstack.CostRingOp, "ring_op"),
		Entry(nil, lstack.CostEpollWait, "epoll_wait_user"),
		Entry(nil, cost.KernelCopyByte, "kernel_copy_byte"),
		Entry(nil, cost.SoftirqPacket, "softirq_packet"),
		Entry(nil, cost.KernelTCPRx, "kernel_tcp_rx"),
		Entry(nil, cost.KernelTCPTx, "kernel_tcp_tx"),
		Entry(nil, cost.KernelIPRx, "kernel_ip_rx"),
		Entry(nil, cost.KernelIPTx, "kernel_ip_tx"),
		Entry(nil, cost.Interrupt, "interrupt"),
		Entry(nil, cost.LockContention, "lock_contention"),
		Entry(nil, cost.EpollWaitKernel, "epoll_wait_kernel"),
		Entry(nil, cost.CompactionPage, "compaction_page"),
		Entry(nil, cost.PageAlloc, "page_alloc"),
		Entry(nil, zlibshim.CostDeflateByteL1, "deflate_byte_l1"),
		Entry(nil, zlibshim.CostDeflateByteL2, "deflate_byte_l2"),
		Entry(nil, zlibshim.CostDeflateByteL3, "deflate_byte_l3"),
		Entry(nil, zlibshim.CostDeflateByteL4, "deflate_byte_l4"),
		Entry(nil, zlibshim.CostDeflateByteL5, "deflate_byte_l5"),
		Entry(nil, zlibshim.CostDeflateByteL6, "deflate_byte_l6"),
		Entry(nil, zlibshim.CostDeflateByteL7, "deflate_byte_l7"),
		Entry(nil, zlibshim.CostDeflateByteL8, "deflate_byte_l8"),
		Entry(nil, zlibshim.CostDeflateByteL9, "deflate_byte_l9"),
		Entry(nil, zlibshim.CostInflateByte, "inflate_byte"),
		Entry(nil, zlibshim.CostCRC32Byte, "crc32_byte"),
		Entry(nil, appcost.Nanos, "app_nanos"),
		Entry(nil, appcost.ParseByte, "parse_byte"),
		Entry(nil, redis.CostCommand, "resp_command"),
		Entry(nil, http.CostRequest, "http_request"),
		// The level function, clamped to 1..9.
		Entry(nil, zlibshim.DeflateByteOp(0), "deflate_byte_l1"),
		Entry(nil, zlibshim.DeflateByteOp(6), "deflate_byte_l6"),
		Entry(nil, zlibshim.DeflateByteOp(12), "deflate_byte_l9"),
	)
})

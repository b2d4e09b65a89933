package hw

// The names of the operations that moved to the layer that owns them,
// kept while call sites move over (internal/costops checks that each
// equals its owner's constant, by key). Each says where its op lives now.
const (
	// Deprecated: use iface.CostFrameRx (stack/iface).
	CostStackEthRx = OpsIface + 0
	// Deprecated: use iface.CostARP (stack/iface).
	CostStackARP = OpsIface + 1
	// Deprecated: use iface.CostIPRx (stack/iface).
	CostStackIPRx = OpsIface + 2
	// Deprecated: use iface.CostIPTx (stack/iface).
	CostStackIPTx = OpsIface + 3
	// Deprecated: use iface.CostUDPRx (stack/iface).
	CostStackUDPRx = OpsIface + 4
	// Deprecated: use iface.CostUDPTx (stack/iface).
	CostStackUDPTx = OpsIface + 5

	// Deprecated: use tcp.CostSegmentRx (stack/tcp).
	CostStackTCPRx = OpsTCP + 0
	// Deprecated: use tcp.CostSegmentTx (stack/tcp).
	CostStackTCPTx = OpsTCP + 1

	// Deprecated: use stackcost.Timer (stack/stackcost).
	CostStackTimer = OpsStack + 0

	// Deprecated: use lstack.CostSocketCall (stack/lstack).
	CostStackSocketCall = OpsLstack + 0
	// Deprecated: use lstack.CostRingOp (stack/lstack).
	CostRingOp = OpsLstack + 1
	// Deprecated: use lstack.CostEpollWait (stack/lstack).
	CostEpollWaitUser = OpsLstack + 2

	// Deprecated: use cost.KernelCopyByte (sim/cost).
	CostKernelCopyByte = OpsKernel + 0
	// Deprecated: use cost.SoftirqPacket (sim/cost).
	CostSoftirqPacket = OpsKernel + 1
	// Deprecated: use cost.KernelTCPRx (sim/cost).
	CostKernelTCPRx = OpsKernel + 2
	// Deprecated: use cost.KernelTCPTx (sim/cost).
	CostKernelTCPTx = OpsKernel + 3
	// Deprecated: use cost.KernelIPRx (sim/cost).
	CostKernelIPRx = OpsKernel + 4
	// Deprecated: use cost.KernelIPTx (sim/cost).
	CostKernelIPTx = OpsKernel + 5
	// Deprecated: use cost.Interrupt (sim/cost).
	CostInterrupt = OpsKernel + 6
	// Deprecated: use cost.LockContention (sim/cost).
	CostLockContention = OpsKernel + 7
	// Deprecated: use cost.EpollWaitKernel (sim/cost).
	CostEpollWaitKernel = OpsKernel + 8
	// Deprecated: use cost.CompactionPage (sim/cost).
	CostCompactionPage = OpsKernel + 9
	// Deprecated: use cost.PageAlloc (sim/cost).
	CostPageAlloc = OpsKernel + 10

	// Deprecated: use zlibshim.CostDeflateByteL1 (zlibshim).
	CostDeflateByteL1 = OpsZlib + 0
	// Deprecated: use zlibshim.CostDeflateByteL2 (zlibshim).
	CostDeflateByteL2 = OpsZlib + 1
	// Deprecated: use zlibshim.CostDeflateByteL3 (zlibshim).
	CostDeflateByteL3 = OpsZlib + 2
	// Deprecated: use zlibshim.CostDeflateByteL4 (zlibshim).
	CostDeflateByteL4 = OpsZlib + 3
	// Deprecated: use zlibshim.CostDeflateByteL5 (zlibshim).
	CostDeflateByteL5 = OpsZlib + 4
	// Deprecated: use zlibshim.CostDeflateByteL6 (zlibshim).
	CostDeflateByteL6 = OpsZlib + 5
	// Deprecated: use zlibshim.CostDeflateByteL7 (zlibshim).
	CostDeflateByteL7 = OpsZlib + 6
	// Deprecated: use zlibshim.CostDeflateByteL8 (zlibshim).
	CostDeflateByteL8 = OpsZlib + 7
	// Deprecated: use zlibshim.CostDeflateByteL9 (zlibshim).
	CostDeflateByteL9 = OpsZlib + 8
	// Deprecated: use zlibshim.CostInflateByte (zlibshim).
	CostInflateByte = OpsZlib + 9
	// Deprecated: use zlibshim.CostCRC32Byte (zlibshim).
	CostCRC32Byte = OpsZlib + 10

	// Deprecated: use appcost.Nanos (apps/appcost).
	CostAppNanos = OpsApps + 0
	// Deprecated: use appcost.ParseByte (apps/appcost).
	CostParseByte = OpsApps + 1
	// Deprecated: use redis.CostCommand (apps/redis).
	CostRESPCommand = OpsRedis + 0
	// Deprecated: use http.CostRequest (apps/http).
	CostHTTPRequest = OpsHTTP + 0
)

// DeflateByteOp returns the software-deflate op for a zlib level (1..9;
// out-of-range levels are clamped).
//
// Deprecated: use zlibshim.DeflateByteOp.
func DeflateByteOp(level int) CostOp {
	level = max(1, min(9, level))
	return CostDeflateByteL1 + CostOp(level-1)
}

// Name returns String(): hw no longer knows other owners' keys; the run's
// table (CostTable.Name) does.
//
// Deprecated: use String for a description, CostTable.Name for the key.
func (op CostOp) Name() string { return op.String() }

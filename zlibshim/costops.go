package zlibshim

import "github.com/savanna-sim/savanna/hw"

// The software compression path's operations (range hw.OpsZlib): what
// the shim's own deflate, inflate and CRC cost per byte when it does the
// work itself rather than submitting it to a device (whose costs are the
// machine's: hw.CostQATSubmit ...).
const (
	CostDeflateByteL1 = hw.OpsZlib + iota // software deflate at level 1, per byte of input
	CostDeflateByteL2                     // ... at level 2
	CostDeflateByteL3                     // ... at level 3
	CostDeflateByteL4                     // ... at level 4
	CostDeflateByteL5                     // ... at level 5
	CostDeflateByteL6                     // ... at level 6
	CostDeflateByteL7                     // ... at level 7
	CostDeflateByteL8                     // ... at level 8
	CostDeflateByteL9                     // ... at level 9
	CostInflateByte                       // software inflate, per byte of output
	CostCRC32Byte                         // software CRC32, per byte
)

// DeflateByteOp returns the software-deflate op for a zlib level (1..9;
// out-of-range levels are clamped).
func DeflateByteOp(level int) hw.CostOp {
	level = max(1, min(9, level))
	return CostDeflateByteL1 + hw.CostOp(level-1)
}

// CostOps returns the software compression path's operations for the
// run's table (internal/costops).
func CostOps() hw.CostOpSet {
	ops := make([]hw.CostOpInfo, 0, 11)
	for l := 1; l <= 9; l++ {
		ops = append(ops, hw.CostOpInfo{Op: DeflateByteOp(l), Key: "deflate_byte_l" + string(rune('0'+l)),
			Doc: "software deflate at level " + string(rune('0'+l)) + ", per byte of input"})
	}
	ops = append(ops,
		hw.CostOpInfo{Op: CostInflateByte, Key: "inflate_byte", Doc: "software inflate, per byte of output"},
		hw.CostOpInfo{Op: CostCRC32Byte, Key: "crc32_byte", Doc: "software CRC32, per byte"},
	)
	return hw.CostOpSet{Base: hw.OpsZlib, Ops: ops}
}

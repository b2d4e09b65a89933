package stackproc

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Layout constants, as preload/lib/svshm.h defines them (a spec checks
// that the C side and this agree through one mapping).
const (
	Magic   = 0x4c505653 // "SVPL"
	Version = 3
	line    = 64
	recSize = 64

	hMagic    = 0
	hVersion  = 4
	hSize     = 8
	hNSlots   = 16
	hRing     = 20
	hRecs     = 24
	hSlotOff  = 32
	hStride   = 40
	hReqOff   = 48
	hRespOff  = 56
	hAppPoll  = 64
	hStackGen = 128
	hCounters = 1024
	headerLen = 4096

	rHead    = 0
	rTail    = 64
	rEv      = 128
	rWaiters = 132
	rRecs    = 192

	sState   = 0
	sErr     = 4
	sFlags   = 8
	sEv      = 12
	sWaiters = 16
	sAccq    = 20
	sRxWait  = 24
	sTxWait  = 28
	sLPort   = 36
	sRPort   = 44
	sExcl    = 48
	sRxHead  = 64
	sRxTail  = 128
	sTxHead  = 192
	sTxTail  = 256
	sLAddr   = 320 // 16 bytes: IPv6, or IPv4-mapped (::ffff:a.b.c.d)
	sRAddr   = 336
	slotHdr  = 512

	// A hello is magic, version, pid and a fork token (0: none); the
	// answer is magic, version and errno.
	helloLen  = 20
	answerLen = 12
)

// Slot states (enum sv_state).
const (
	stFree uint32 = iota
	stSocket
	stBound
	stListen
	stConnecting
	stConnected
	stFailed
	stClosing
)

// Slot flags (SV_F_*).
const (
	fEOF   = 1
	fErr   = 2
	fWDone = 4
)

// Control operations (enum sv_op).
const (
	opSocket = 1 + iota
	opBind
	opListen
	opAccept
	opConnect
	opShutdown
	opClose
	opSetOpt
	opFork
)

// Request and response record offsets.
const (
	qSeq  = 0
	qOp   = 4
	qSlot = 8
	qArg  = 12
	qArg2 = 16
	qFam  = 24
	qPort = 26
	qAddr = 28

	pSeq    = 0
	pErrno  = 4
	pResult = 8
	pPort   = 18
	pAddr   = 20
)

// CallNames are the app's call counters by id (enum sv_call).
var CallNames = [...]string{"socket", "bind", "listen", "accept", "connect", "read", "write", "close",
	"shutdown", "setsockopt", "getsockopt", "name", "fcntl", "ioctl", "poll", "other",
	"dup", "sendmsg", "recvmsg", "sendfile", "sendmmsg", "recvmmsg", "splice"}

// Geometry is a memfd's shape.
type Geometry struct {
	// Slots is how many sockets a process may hold at once.
	Slots int
	// Ring is each data ring's size in bytes (a power of two).
	Ring int
	// Recs is each control ring's records (a power of two).
	Recs int
}

// DefaultGeometry is 1024 sockets of two 64 KiB rings (Gazelle's
// default send and receive ring sizes are in that range); the memfd is
// sparse, so only rings in use take memory.
var DefaultGeometry = Geometry{Slots: 1024, Ring: 64 << 10, Recs: 256}

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// Validate refuses a geometry the C side cannot use.
func (g Geometry) Validate() error {
	switch {
	case g.Slots < 1 || g.Slots > 1<<16:
		return fmt.Errorf("stackproc: slots %d: want 1 to 65536", g.Slots)
	case !pow2(g.Ring) || g.Ring < 4096 || g.Ring > 1<<24:
		return fmt.Errorf("stackproc: ring %d: want a power of two from 4 KiB to 16 MiB", g.Ring)
	case !pow2(g.Recs) || g.Recs < 4 || g.Recs > 1<<16:
		return fmt.Errorf("stackproc: records %d: want a power of two from 4 to 65536", g.Recs)
	}
	return nil
}

func (g Geometry) ctlLen() int      { return rRecs + g.Recs*recSize }
func (g Geometry) stride() int      { return slotHdr + 2*g.Ring }
func (g Geometry) reqOff() int      { return headerLen }
func (g Geometry) respOff() int     { return headerLen + g.ctlLen() }
func (g Geometry) slotOff() int     { return (g.respOff() + g.ctlLen() + 4095) &^ 4095 }
func (g Geometry) size() int        { return g.slotOff() + g.Slots*g.stride() }
func (g Geometry) slot(i int) int   { return g.slotOff() + i*g.stride() }
func (g Geometry) rxData(i int) int { return g.slot(i) + slotHdr }
func (g Geometry) txData(i int) int { return g.slot(i) + slotHdr + g.Ring }

// Mem is a mapping of a process's memfd with the layout's accessors. Its
// words are shared with another process: every access is atomic.
type Mem struct {
	b []byte
	g Geometry
}

func (m *Mem) u32(off int) *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&m.b[off])) }
func (m *Mem) i32(off int) *atomic.Int32  { return (*atomic.Int32)(unsafe.Pointer(&m.b[off])) }
func (m *Mem) u64(off int) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&m.b[off])) }

// initHeader writes the header a new process reads.
func (m *Mem) initHeader() {
	g := m.g
	m.u32(hVersion).Store(Version)
	m.u64(hSize).Store(uint64(g.size()))
	m.u32(hNSlots).Store(uint32(g.Slots))
	m.u32(hRing).Store(uint32(g.Ring))
	m.u32(hRecs).Store(uint32(g.Recs))
	m.u64(hSlotOff).Store(uint64(g.slotOff()))
	m.u64(hStride).Store(uint64(g.stride()))
	m.u64(hReqOff).Store(uint64(g.reqOff()))
	m.u64(hRespOff).Store(uint64(g.respOff()))
	m.u32(hMagic).Store(Magic) // last: the header is complete
}

// Counter returns the app's count of calls (refused false) or refused
// calls (refused true) of call id.
func (m *Mem) Counter(id int, refused bool) uint64 {
	off := hCounters + id*16
	if refused {
		off += 8
	}
	return m.u64(off).Load()
}

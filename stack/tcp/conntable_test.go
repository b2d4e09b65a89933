package tcp

import (
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("connTable's last-hit cache of IPv6 tuples", func() {
	v6 := func(k int) fourTuple {
		var a, b [16]byte
		a[0], a[15] = 0xfd, 1
		b[0], b[15] = 0xfd, 2
		return fourTuple{localAddr: IPFrom16(a), remoteAddr: IPFrom16(b), localPort: 5001, remotePort: uint16(40000 + k)}
	}
	v4 := func(k int) fourTuple {
		return fourTuple{localAddr: IPFrom4([4]byte{10, 0, 0, 1}), remoteAddr: IPFrom4([4]byte{10, 0, 0, 2}),
			localPort: 5001, remotePort: uint16(40000 + k)}
	}

	It("forgets a removed connection and follows a replaced one", func() {
		ct := newConnTable()
		get := func(id fourTuple) *Conn {
			c, ok := ct.get(id)
			Expect(ok).To(Equal(c != nil))
			return c
		}
		id := v6(1)
		c1, c2 := &Conn{}, &Conn{}
		ct.put(id, c1)
		Expect(get(id)).To(BeIdenticalTo(c1)) // fills the cache
		ct.remove(id)
		_, ok := ct.get(id)
		Expect(ok).To(BeFalse(), "a removed connection answered from the cache")
		ct.put(id, c1)
		Expect(get(id)).To(BeIdenticalTo(c1))
		ct.put(id, c2)
		Expect(get(id)).To(BeIdenticalTo(c2), "a replaced connection answered from the cache")
	})

	It("answers as a plain map over 20,000 random puts, removes and gets of both families", func() {
		rng := rand.New(rand.NewPCG(21, 38))
		ct := newConnTable()
		model := map[fourTuple]*Conn{}
		for range 20000 {
			id := v6(rng.IntN(6))
			if rng.IntN(4) == 0 {
				id = v4(rng.IntN(6))
			}
			switch rng.IntN(3) {
			case 0:
				c := &Conn{}
				ct.put(id, c)
				model[id] = c
			case 1:
				ct.remove(id)
				delete(model, id)
			default:
				c, ok := ct.get(id)
				want, wantOK := model[id]
				Expect(ok).To(Equal(wantOK))
				Expect(c).To(BeIdenticalTo(want))
			}
			Expect(ct.len()).To(Equal(len(model)))
		}
	})
})

package redis_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("Server", func() {
	var b *bed
	var srv *redis.Server

	BeforeEach(func() {
		b = newBed(1, nic.LinkConfig{})
		var err error
		srv, err = redis.NewServer(b.server.in, 6379, b.store)
		Expect(err).NotTo(HaveOccurred())
		b.server.core.Attach(srv)
	})

	It("answers SET, GET and PING in order and counts them", func() {
		c := newRawClient(b.client, b.remote, chunk{data: command("SET", "k", "hello") + command("GET", "k") + command("PING") + command("GET", "nope")})
		b.eng.RunUntil(20 * time.Millisecond)
		Expect(string(c.got)).To(Equal("+OK\r\n$5\r\nhello\r\n+PONG\r\n$-1\r\n"))
		st := srv.Stats()
		Expect(st.Accepted).To(Equal(uint64(1)))
		Expect(st.Commands).To(Equal(uint64(4)))
		Expect(st.Open).To(Equal(1))
		Expect(st.ProtocolErrors).To(BeZero())
	})

	It("waits for the rest of a command split over segments", func() {
		cmd := command("SET", "key", "value")
		c := newRawClient(b.client, b.remote, chunk{data: cmd[:9]}, chunk{after: 5 * time.Millisecond, data: cmd[9:]})
		b.eng.RunUntil(4 * time.Millisecond)
		Expect(c.got).To(BeEmpty())
		Expect(srv.Stats().Commands).To(BeZero())
		b.eng.RunUntil(20 * time.Millisecond)
		Expect(string(c.got)).To(Equal("+OK\r\n"))
	})

	It("answers a protocol error with an error reply and counts it", func() {
		c := newRawClient(b.client, b.remote, chunk{data: "*x\r\n"})
		b.eng.RunUntil(20 * time.Millisecond)
		Expect(string(c.got)).To(HavePrefix("-ERR"))
		Expect(srv.Stats().ProtocolErrors).To(Equal(uint64(1)))
	})

	It("closes its side when the client closes, and counts it", func() {
		c := newRawClient(b.client, b.remote, chunk{data: command("PING")}, chunk{after: 2 * time.Millisecond, close: true})
		b.eng.RunUntil(50 * time.Millisecond)
		Expect(string(c.got)).To(Equal("+PONG\r\n"))
		st := srv.Stats()
		Expect(st.Closed).To(Equal(uint64(1)))
		Expect(st.Open).To(BeZero())
	})

	It("counts from zero after ResetStats, keeping the connections open", func() {
		newRawClient(b.client, b.remote, chunk{data: command("PING")}, chunk{after: 10 * time.Millisecond, data: command("PING") + command("PING")})
		b.eng.RunUntil(5 * time.Millisecond)
		Expect(srv.Stats().Commands).To(Equal(uint64(1)))
		srv.ResetStats()
		b.eng.RunUntil(30 * time.Millisecond)
		st := srv.Stats()
		Expect(st.Commands).To(Equal(uint64(2)))
		Expect(st.Accepted).To(BeZero())
		Expect(st.Open).To(Equal(1))
	})

	It("shares its instance with another application, each seeing only its own events", func() {
		other, err := redis.NewServer(b.server.in, 6380, b.store)
		Expect(err).NotTo(HaveOccurred())
		b.server.core.Attach(other)
		c1 := newRawClient(b.client, b.remote, chunk{data: command("SET", "a", "1")}, chunk{after: 5 * time.Millisecond, data: command("GET", "b")})
		c2 := newRawClient(b.client, tcp.Addr{IP: b.remote.IP, Port: 6380}, chunk{data: command("SET", "b", "2")}, chunk{after: 5 * time.Millisecond, data: command("GET", "a")})
		b.eng.RunUntil(30 * time.Millisecond)
		Expect(string(c1.got)).To(Equal("+OK\r\n$1\r\n2\r\n"))
		Expect(string(c2.got)).To(Equal("+OK\r\n$1\r\n1\r\n"))
		Expect(srv.Stats().Commands).To(Equal(uint64(2)))
		Expect(other.Stats().Commands).To(Equal(uint64(2)))
	})
})

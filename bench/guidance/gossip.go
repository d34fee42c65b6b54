package guidance

import (
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
)

// GossipResult is the real gossip measurement of one size.
type GossipResult struct {
	Members, Periods int
	// TotalBps is the UDP payload every member sent per second, mean over
	// members; GuidanceBps the part that was guidance (user messages,
	// with their framing).
	TotalBps    float64 `json:"total_bytes_per_s_per_member"`
	GuidanceBps float64 `json:"guidance_bytes_per_s_per_member"`
	// InstalledFrac is the fraction of (member, version) pairs installed,
	// over the versions published in the measured periods but the last
	// two (still spreading).
	InstalledFrac float64 `json:"installed_fraction"`
	// FreshFrac is the fraction of members whose newest installed version
	// is at most StaleAfter periods old at the end: those that still
	// follow the coordinator under the default --guidance-stale.
	FreshFrac  float64 `json:"fresh_fraction"`
	StaleAfter int     `json:"stale_after_periods"`
}

// countingTransport counts what a member sends over UDP: everything, and
// the user messages (guidance) in it.
type countingTransport struct {
	*memberlist.NetTransport
	total, user *atomic.Int64
}

func (t *countingTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	t.count(b)
	return t.NetTransport.WriteToAddress(b, a)
}

func (t *countingTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	t.count(b)
	return t.NetTransport.WriteTo(b, addr)
}

// memberlist's message types (net.go) that the count looks into.
const (
	mlCompound = 7
	mlUser     = 8
	mlHasCRC   = 12
)

func (t *countingTransport) count(b []byte) {
	t.total.Add(int64(len(b)))
	if len(b) > 5 && b[0] == mlHasCRC {
		b = b[5:]
	}
	if len(b) == 0 {
		return
	}
	switch b[0] {
	case mlUser:
		t.user.Add(int64(len(b)))
	case mlCompound:
		if len(b) < 2 {
			return
		}
		n := int(b[1])
		if len(b) < 2+2*n {
			return
		}
		off := 2 + 2*n
		for i := range n {
			l := int(binary.BigEndian.Uint16(b[2+2*i:]))
			if off+l > len(b) {
				return
			}
			if l > 0 && b[off] == mlUser {
				t.user.Add(int64(l + 2))
			}
			off += l
		}
	}
}

// gossipMember is one in-process member: a node monitor's relay of the
// guidance (nodemonitor/coordinated.go does the same), or the coordinator.
type gossipMember struct {
	ml    *memberlist.Memberlist
	queue *memberlist.TransmitLimitedQueue
	total atomic.Int64
	user  atomic.Int64

	mu        sync.Mutex
	rx        fairgossip.Receiver
	installed map[uint64]bool
	newest    uint64
}

type namedMsg struct {
	key string
	b   []byte
}

func (m namedMsg) Name() string    { return m.key }
func (m namedMsg) Message() []byte { return m.b }
func (m namedMsg) Finished()       {}
func (m namedMsg) Invalidates(o memberlist.Broadcast) bool {
	n, ok := o.(memberlist.NamedBroadcast)
	return ok && n.Name() == m.key
}

type memberDelegate struct{ m *gossipMember }

func (d memberDelegate) NodeMeta(int) []byte { return nil }
func (d memberDelegate) NotifyMsg(b []byte) {
	msg := append([]byte(nil), b...)
	m := d.m
	m.mu.Lock()
	res, _ := m.rx.Add(msg)
	if res.Installed {
		m.installed[res.Guidance.Version] = true
		m.newest = max(m.newest, res.Guidance.Version)
	}
	m.mu.Unlock()
	if res.Fresh {
		m.queue.QueueBroadcast(namedMsg{key: res.Key, b: msg})
	}
}
func (d memberDelegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.m.queue.GetBroadcasts(overhead, limit)
}
func (d memberDelegate) LocalState(bool) []byte        { return nil }
func (d memberDelegate) MergeRemoteState([]byte, bool) {}

func startGossipMember(name string, mult int) (*gossipMember, error) {
	m := &gossipMember{installed: map[uint64]bool{}}
	mc := memberlist.DefaultLANConfig()
	mc.Name = name
	mc.BindAddr, mc.BindPort, mc.AdvertiseAddr = "127.0.0.1", 0, "127.0.0.1"
	mc.RetransmitMult = mult
	// The count reads memberlist's framing; compressed packets would hide
	// it. Guidance is varints and barely compresses.
	mc.EnableCompression = false
	mc.Logger = log.New(io.Discard, "", 0)
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{"127.0.0.1"}, BindPort: 0, Logger: mc.Logger})
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", name, err)
	}
	mc.AdvertisePort = nt.GetAutoBindPort()
	mc.Transport = &countingTransport{NetTransport: nt, total: &m.total, user: &m.user}
	mc.Delegate = memberDelegate{m}
	ml, err := memberlist.Create(mc)
	if err != nil {
		nt.Shutdown()
		return nil, fmt.Errorf("member %s: %w", name, err)
	}
	m.ml = ml
	m.queue = &memberlist.TransmitLimitedQueue{NumNodes: ml.NumMembers, RetransmitMult: mult}
	return m, nil
}

// MeasureGossip runs sz.Nodes relaying members and one coordinator member,
// in this process on loopback, publishing every second the guidance of the
// synthetic fleet with coordinator.Guide, and counts the bytes they send.
func MeasureGossip(sz Size, cfg Config, progress io.Writer) (GossipResult, error) {
	res := GossipResult{Members: sz.Nodes + 1, Periods: cfg.GossipPeriods, StaleAfter: 5}
	var members []*gossipMember
	defer func() {
		for _, m := range members {
			m.ml.Shutdown()
		}
	}()
	for i := range sz.Nodes + 1 {
		m, err := startGossipMember(fmt.Sprintf("m-%05d", i), cfg.RetransmitMult)
		if err != nil {
			return res, err
		}
		members = append(members, m)
		if i > 0 {
			// Join through the coordinator, which then knows everyone,
			// and a random member.
			seeds := []string{members[0].ml.LocalNode().Address(), members[rand.IntN(i)].ml.LocalNode().Address()}
			if _, err := m.ml.Join(seeds); err != nil {
				return res, fmt.Errorf("join: %w", err)
			}
		}
	}
	coord := members[0]
	const joinWait = 5 * time.Minute
	deadline, report := time.Now().Add(joinWait), time.Now()
	for {
		behind := 0
		for _, m := range members {
			if m.ml.NumMembers() != len(members) {
				behind++
			}
		}
		if behind == 0 {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("%d of %d members still miss others after %v", behind, len(members), joinWait)
		}
		if time.Since(report) > 10*time.Second {
			fmt.Fprintf(progress, "coordinator bench: %d of %d members still miss others\n", behind, len(members))
			report = time.Now()
		}
		time.Sleep(200 * time.Millisecond) // polling a condition, with a deadline
	}
	fmt.Fprintf(progress, "coordinator bench: %d members joined\n", len(members))
	reports, where, users, rng := synthWorkload(sz, cfg)
	pub := &fairgossip.Publisher{SnapshotEvery: cfg.SnapshotEvery, TableEvery: cfg.TableEvery}
	var versions []uint64
	var t0, u0 []int64
	start := time.Now()
	for p := range fairgossip.Warmup + cfg.GossipPeriods {
		if p == fairgossip.Warmup {
			start = time.Now()
			for _, m := range members {
				t0, u0 = append(t0, m.total.Load()), append(u0, m.user.Load())
			}
		}
		if p > 0 {
			churn(reports, users, where, cfg.Churn, rng)
		}
		version := uint64(time.Now().UnixNano())
		_, out, err := coordinator.Guide(reports, func(string) float64 { return 1 }, pub, version)
		if err != nil {
			return res, err
		}
		for _, m := range append(append([]fairgossip.Message{}, out.Table...), out.Guidance...) {
			coord.queue.QueueBroadcast(namedMsg{key: m.Key, b: m.Bytes})
		}
		if p >= fairgossip.Warmup {
			versions = append(versions, version)
		}
		time.Sleep(time.Until(start.Add(time.Duration(p-fairgossip.Warmup+1) * time.Second)))
		if p < fairgossip.Warmup {
			time.Sleep(time.Second)
		}
	}
	secs := time.Since(start).Seconds()
	var total, user float64
	installed, pairs, fresh := 0, 0, 0
	staleBelow := versions[max(0, len(versions)-res.StaleAfter)]
	for i, m := range members {
		total += float64(m.total.Load() - t0[i])
		user += float64(m.user.Load() - u0[i])
		if i == 0 {
			continue
		}
		m.mu.Lock()
		for _, v := range versions[:max(0, len(versions)-2)] {
			pairs++
			if m.installed[v] {
				installed++
			}
		}
		if m.newest >= staleBelow {
			fresh++
		}
		m.mu.Unlock()
	}
	n := float64(len(members))
	res.TotalBps, res.GuidanceBps = total/n/secs, user/n/secs
	if pairs > 0 {
		res.InstalledFrac = float64(installed) / float64(pairs)
	}
	res.FreshFrac = float64(fresh) / float64(len(members)-1)
	return res, nil
}

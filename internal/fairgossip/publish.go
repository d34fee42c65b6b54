package fairgossip

import (
	"fmt"
	"math"
	"sort"
)

// Defaults for Publisher's zero fields, in periods.
const (
	// DefaultSnapshotEvery bounds how long a member that missed the last
	// snapshot (or joined since) waits for the next one: below a node
	// monitor's default staleness (5 periods), so that one lost snapshot
	// chunk does not send it back to local weights.
	DefaultSnapshotEvery = 4
	// DefaultTableEvery bounds how long a member without the name table
	// waits for it to be sent again.
	DefaultTableEvery = 30
	// TableSends is how many periods in a row send a new name table: a
	// member that lost it gets it again in the next period instead of
	// TableEvery periods on.
	TableSends = 3
	// Warmup is how many first periods of a Publisher each send the name
	// table and a snapshot: members drop what they had when the active
	// coordinator changes (Receiver.Reset), possibly after the new one's
	// first period reached them.
	Warmup = 3
)

// Message is one broadcast: memberlist replaces a queued broadcast with
// the same key, so a newer version's chunk displaces the older one's.
type Message struct {
	Key   string
	Bytes []byte
}

// Publication is what one period sends.
type Publication struct {
	Version uint64
	// Epoch is the name table in use; Base 0 for a snapshot, else the
	// snapshot a delta applies to.
	Epoch, Base uint64
	// Table is the name table when it is (re)sent this period, else nil.
	Table []Message
	// Guidance is the period's snapshot or delta.
	Guidance []Message
	// Users and Types count the period's guidance; Entries the values
	// sent (all for a snapshot, the changed ones for a delta).
	Users, Types, Entries int
}

// Bytes is the size of everything the period sends.
func (p Publication) Bytes() int {
	n := 0
	for _, m := range p.Table {
		n += len(m.Bytes)
	}
	for _, m := range p.Guidance {
		n += len(m.Bytes)
	}
	return n
}

// Publisher encodes the coordinator's guidance period after period: a name
// table in TableSends periods in a row whenever the set of names grows
// (and every TableEvery periods, for members that missed it), a snapshot
// every SnapshotEvery periods (and with every new table), and in between
// deltas against the last snapshot.
// It holds the coordinator's side of the state and is not safe for
// concurrent use; the zero value uses the defaults.
type Publisher struct {
	SnapshotEvery, TableEvery int

	epoch            uint64
	users, types     []string
	userIdx, typeIdx map[string]uint32
	sinceTable       int
	tableSends       int    // periods left that send the newest table again
	last             uint64 // last version published
	periods          int    // publications so far

	snapVersion uint64
	snapRunning map[uint32]uint64
	snapWeights map[uint32]map[uint32]uint64
	sinceSnap   int
}

// Rewarm makes the next Warmup publications each carry the name table and
// a snapshot again, as a new publisher's do: for members that have just
// joined or come back from a partition, and hold no table or snapshot of
// this publisher's (they would otherwise wait for the next periodic
// table, TableEvery periods). A publisher already warming is unchanged.
func (p *Publisher) Rewarm() {
	if p.periods >= Warmup {
		p.periods = 0
	}
}

// Publish encodes one period's guidance: each user's cluster-wide
// running count, and per machine type the users' CMMF weights in slots
// (finite, >= 0). version must grow from period to period; takeover
// between coordinators relies on versions from a shared clock (the
// coordinator uses wall-clock nanoseconds), so that a new coordinator's
// versions and table epochs are newer than the old one's.
func (p *Publisher) Publish(version uint64, running map[string]uint64, weights map[string]map[string]float64) (Publication, error) {
	if version == 0 || version <= p.last {
		return Publication{}, fmt.Errorf("fairgossip: version %d after %d", version, p.last)
	}
	snapEvery, tableEvery := p.SnapshotEvery, p.TableEvery
	if snapEvery <= 0 {
		snapEvery = DefaultSnapshotEvery
	}
	if tableEvery <= 0 {
		tableEvery = DefaultTableEvery
	}
	out := Publication{Version: version}
	warm := p.periods < Warmup
	p.periods++
	newTable := p.epoch == 0 || !p.covers(running, weights)
	// Compact a table that has grown to twice the names in use, at the
	// next snapshot or resend.
	if !newTable && (p.sinceSnap+1 >= snapEvery || p.sinceTable+1 >= tableEvery) && len(p.users) > 2*len(running)+16 {
		newTable = true
	}
	if newTable {
		p.newTable(version, running, weights)
		// Every version from now on needs this table: a member that lost
		// its one sending could install nothing until the periodic
		// resend, TableEvery periods on, and meanwhile kept the old
		// guidance, which gives the newly named users the floor weight.
		p.tableSends = TableSends
	}
	resend := p.tableSends > 0
	if resend {
		p.tableSends--
	}
	if resend || warm || p.sinceTable+1 >= tableEvery {
		chunks, err := EncodeNames(p.epoch, p.users, p.types)
		if err != nil {
			return Publication{}, err
		}
		for i, c := range chunks {
			out.Table = append(out.Table, Message{Key: namesKey(uint32(i)), Bytes: c})
		}
		p.sinceTable = 0
	} else {
		p.sinceTable++
	}
	cur, curW, users := p.index(running, weights)
	out.Epoch, out.Users, out.Types = p.epoch, users, len(weights)
	snapshot := newTable || warm || p.snapVersion == 0 || p.sinceSnap+1 >= snapEvery
	fullR, fullW := sorted(cur), sortedW(curW)
	var rs []Entry
	var ws []TypeEntries
	if !snapshot {
		rs, ws = diff(p.snapRunning, cur, p.snapWeights, curW)
		// A delta as long as a snapshot is better sent as one.
		snapshot = entries(rs, ws) >= entries(fullR, fullW)
	}
	if snapshot {
		rs, ws = fullR, fullW
		p.snapVersion, p.snapRunning, p.snapWeights, p.sinceSnap = version, cur, curW, 0
		out.Base = 0
	} else {
		out.Base = p.snapVersion
		p.sinceSnap++
	}
	out.Entries = entries(rs, ws)
	chunks, err := EncodeIndexed(version, p.epoch, out.Base, rs, ws)
	if err != nil {
		return Publication{}, err
	}
	for i, c := range chunks {
		out.Guidance = append(out.Guidance, Message{Key: guidanceKey(out.Base, uint32(i)), Bytes: c})
	}
	p.last = version
	return out, nil
}

// covers reports whether the table names every user and type.
func (p *Publisher) covers(running map[string]uint64, weights map[string]map[string]float64) bool {
	for u := range running {
		if _, ok := p.userIdx[u]; !ok {
			return false
		}
	}
	for t, ws := range weights {
		if _, ok := p.typeIdx[t]; !ok {
			return false
		}
		for u := range ws {
			if _, ok := p.userIdx[u]; !ok {
				return false
			}
		}
	}
	return true
}

func (p *Publisher) newTable(epoch uint64, running map[string]uint64, weights map[string]map[string]float64) {
	us := map[string]bool{}
	for u := range running {
		us[u] = true
	}
	p.types = p.types[:0]
	for t, ws := range weights {
		p.types = append(p.types, t)
		for u := range ws {
			us[u] = true
		}
	}
	p.users = p.users[:0]
	for u := range us {
		p.users = append(p.users, u)
	}
	sort.Strings(p.users)
	sort.Strings(p.types)
	p.userIdx = make(map[string]uint32, len(p.users))
	for i, u := range p.users {
		p.userIdx[u] = uint32(i)
	}
	p.typeIdx = make(map[string]uint32, len(p.types))
	for i, t := range p.types {
		p.typeIdx[t] = uint32(i)
	}
	p.epoch, p.snapVersion = epoch, 0
}

// index turns the period's values into table indexes, dropping zeros
// (absent and zero mean the same to a receiver). It also counts users.
func (p *Publisher) index(running map[string]uint64, weights map[string]map[string]float64) (map[uint32]uint64, map[uint32]map[uint32]uint64, int) {
	cur := make(map[uint32]uint64, len(running))
	for u, v := range running {
		if v > 0 {
			cur[p.userIdx[u]] = v
		}
	}
	curW := make(map[uint32]map[uint32]uint64, len(weights))
	for t, ws := range weights {
		m := make(map[uint32]uint64, len(ws))
		for u, w := range ws {
			if q := QuantizeWeight(w); q > 0 {
				m[p.userIdx[u]] = q
			}
		}
		curW[p.typeIdx[t]] = m
	}
	return cur, curW, len(running)
}

// diff returns the values of cur that differ from base's, with 0 for
// values base has and cur does not.
func diff(base, cur map[uint32]uint64, baseW, curW map[uint32]map[uint32]uint64) ([]Entry, []TypeEntries) {
	rs := diffOne(base, cur)
	types := map[uint32]bool{}
	for t := range baseW {
		types[t] = true
	}
	for t := range curW {
		types[t] = true
	}
	var ws []TypeEntries
	for _, t := range sortedKeys32(types) {
		if es := diffOne(baseW[t], curW[t]); len(es) > 0 {
			ws = append(ws, TypeEntries{Type: t, Entries: es})
		}
	}
	return rs, ws
}

func diffOne(base, cur map[uint32]uint64) []Entry {
	var out []Entry
	for u, v := range cur {
		if base[u] != v {
			out = append(out, Entry{User: u, Value: v})
		}
	}
	for u := range base {
		if _, ok := cur[u]; !ok {
			out = append(out, Entry{User: u})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].User < out[j].User })
	return out
}

func sorted(m map[uint32]uint64) []Entry {
	out := make([]Entry, 0, len(m))
	for u, v := range m {
		out = append(out, Entry{User: u, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].User < out[j].User })
	return out
}

func sortedW(m map[uint32]map[uint32]uint64) []TypeEntries {
	var out []TypeEntries
	for _, t := range sortedKeys32(m) {
		if len(m[t]) > 0 {
			out = append(out, TypeEntries{Type: t, Entries: sorted(m[t])})
		}
	}
	return out
}

func sortedKeys32[V any](m map[uint32]V) []uint32 {
	out := make([]uint32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func entries(rs []Entry, ws []TypeEntries) int {
	n := len(rs)
	for _, te := range ws {
		n += len(te.Entries)
	}
	return n
}

// LANGossipBudget is about what memberlist's LAN timing lets one member
// piggyback per second: 3 gossip targets every 200 ms, one packet of
// 1,400 bytes less its 2-byte compound header each (probes add a little).
const LANGossipBudget = 3 * (1400 - 2) * 5

// GossipLoad estimates the bytes per second every member sends to spread
// p by gossip when all members relay it: each message, with memberlist's 3
// bytes of framing (message type, compound length), goes out
// retransmitMult x ceil(log10(members+1)) times per member (memberlist's
// retransmit limit), once per period of the given seconds.
func (p Publication) GossipLoad(members, retransmitMult int, periodSeconds float64) float64 {
	limit := float64(retransmitMult) * math.Ceil(math.Log10(float64(members+1)))
	framed := float64(p.Bytes() + 3*(len(p.Table)+len(p.Guidance)))
	return framed * limit / periodSeconds
}

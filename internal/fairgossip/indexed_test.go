package fairgossip

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestNamesRoundTrip(t *testing.T) {
	long := func(c byte) string {
		b := make([]byte, maxName)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("user-%05d", i)
	}
	tests := []struct {
		name         string
		users, types []string
	}{
		{"empty", nil, nil},
		{"types only", nil, []string{"default"}},
		{"longest names", []string{long('a'), long('b'), long('b')[:200] + "c"}, []string{long('t')}},
		{"5000 users", many, []string{"gpu=yes", "mem=high"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks, err := EncodeNames(9, tt.users, tt.types)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			var got []string
			for i, b := range chunks {
				if len(b) > MaxMessage {
					t.Fatalf("chunk %d of %d bytes, over %d", i, len(b), MaxMessage)
				}
				total += len(b)
				c, err := DecodeNames(b)
				if err != nil {
					t.Fatal(err)
				}
				if c.Epoch != 9 || c.Index != uint32(i) || c.Count != uint32(len(chunks)) || int(c.Start) != len(got) ||
					int(c.Users) != len(tt.users) || int(c.Types) != len(tt.types) {
					t.Fatalf("chunk %d header %+v", i, c)
				}
				got = append(got, c.Names...)
			}
			want := append(append([]string{}, tt.users...), tt.types...)
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Fatalf("decoded %d names, want %d", len(got), len(want))
			}
			t.Logf("%d users, %d types: %d chunks, %d bytes", len(tt.users), len(tt.types), len(chunks), total)
		})
	}
}

func TestEncodeRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"names epoch 0", func() error { _, err := EncodeNames(0, nil, nil); return err }()},
		{"names unsorted", func() error { _, err := EncodeNames(1, []string{"b", "a"}, nil); return err }()},
		{"names duplicated", func() error { _, err := EncodeNames(1, nil, []string{"t", "t"}); return err }()},
		{"guidance base not older", func() error { _, err := EncodeIndexed(2, 1, 2, nil, nil); return err }()},
		{"guidance unsorted", func() error {
			_, err := EncodeIndexed(2, 1, 0, []Entry{{User: 2}, {User: 1}}, nil)
			return err
		}()},
		{"guidance types unsorted", func() error {
			_, err := EncodeIndexed(2, 1, 0, nil, []TypeEntries{{Type: 1}, {Type: 1}})
			return err
		}()},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestIndexedRoundTripAndChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 700, 5000} {
		t.Run(fmt.Sprint(n, " users"), func(t *testing.T) {
			var rs []Entry
			ws := make([]TypeEntries, 4)
			for u := range n {
				if rng.IntN(3) > 0 {
					rs = append(rs, Entry{User: uint32(u), Value: uint64(rng.IntN(5000))})
				}
				typ := rng.IntN(4)
				ws[typ].Entries = append(ws[typ].Entries, Entry{User: uint32(u), Value: uint64(1 + rng.IntN(1<<20))})
			}
			for i := range ws {
				ws[i].Type = uint32(i * 3)
			}
			chunks, err := EncodeIndexed(100, 50, 40, rs, ws)
			if err != nil {
				t.Fatal(err)
			}
			var gotR []Entry
			gotW := map[uint32][]Entry{}
			total := 0
			for i, b := range chunks {
				if len(b) > MaxMessage {
					t.Fatalf("chunk %d of %d bytes, over %d", i, len(b), MaxMessage)
				}
				total += len(b)
				c, err := DecodeIndexed(b)
				if err != nil {
					t.Fatal(err)
				}
				if c.Version != 100 || c.Epoch != 50 || c.Base != 40 || c.Index != uint32(i) || c.Count != uint32(len(chunks)) {
					t.Fatalf("chunk %d header %+v", i, c)
				}
				gotR = append(gotR, c.Running...)
				for _, te := range c.Weights {
					gotW[te.Type] = append(gotW[te.Type], te.Entries...)
				}
			}
			if len(gotR) != len(rs) || (len(rs) > 0 && !reflect.DeepEqual(gotR, rs)) {
				t.Fatalf("running counts changed: %d entries, want %d", len(gotR), len(rs))
			}
			for _, te := range ws {
				if len(gotW[te.Type]) != len(te.Entries) || (len(te.Entries) > 0 && !reflect.DeepEqual(gotW[te.Type], te.Entries)) {
					t.Fatalf("weights of type %d changed", te.Type)
				}
			}
			t.Logf("%d users: %d chunks, %d bytes", n, len(chunks), total)
		})
	}
}

func TestQuantizeWeight(t *testing.T) {
	tests := []struct {
		w    float64
		want uint64
	}{
		{0, 0}, {-1, 0}, {math.NaN(), 0}, {1e-9, 1}, {1.0 / 32, 1}, {1, 16}, {2.49 / 16, 2}, {1e12, math.MaxUint32},
	}
	for _, tt := range tests {
		if got := QuantizeWeight(tt.w); got != tt.want {
			t.Errorf("QuantizeWeight(%v) = %d, want %d", tt.w, got, tt.want)
		}
	}
}

// period is one period's true guidance in the publisher test.
type period struct {
	running map[string]uint64
	weights map[string]map[string]float64
}

// evolve makes a sequence of periods: users come and go, running counts
// and weights drift, as a busy fleet's would.
func evolve(rng *rand.Rand, periods, users int) []period {
	types := []string{"default", "gpu=yes", "mem=high"}
	next := users
	active := map[string]bool{}
	for i := range users {
		active[fmt.Sprintf("u%04d", i)] = true
	}
	cur := period{running: map[string]uint64{}, weights: map[string]map[string]float64{}}
	var out []period
	for range periods {
		p := period{running: map[string]uint64{}, weights: map[string]map[string]float64{}}
		if rng.IntN(4) == 0 { // a user leaves
			for u := range active {
				delete(active, u)
				break
			}
		}
		if rng.IntN(5) == 0 { // a user arrives
			active[fmt.Sprintf("u%04d", next)] = true
			next++
		}
		for u := range active {
			n := cur.running[u]
			if rng.IntN(4) == 0 {
				n = uint64(rng.IntN(40))
			}
			p.running[u] = n
			for _, t := range types {
				w := cur.weights[t][u]
				if rng.IntN(6) == 0 {
					w = float64(rng.IntN(3)) * rng.Float64() * 20
				}
				if w > 0 {
					if p.weights[t] == nil {
						p.weights[t] = map[string]float64{}
					}
					p.weights[t][u] = w
				}
			}
		}
		out = append(out, p)
		cur = p
	}
	return out
}

// expected is the oracle: what a receiver must install for a period,
// computed without the package's quantizer.
func expected(p period, typ string) Guidance {
	g := Guidance{Running: map[string]uint64{}, Weights: map[string]map[string]float64{}}
	for u, n := range p.running {
		if n > 0 {
			g.Running[u] = n
		}
	}
	for t, ws := range p.weights {
		if typ != "" && t != typ {
			continue
		}
		m := map[string]float64{}
		for u, w := range ws {
			q := math.Max(1, math.Round(w*16))
			m[u] = q / 16
		}
		g.Weights[t] = m
	}
	return g
}

func sameGuidance(a, b Guidance) bool {
	if len(a.Running) != len(b.Running) || !reflect.DeepEqual(a.Running, b.Running) {
		return false
	}
	// Types without weights may be absent or empty.
	for _, m := range []map[string]map[string]float64{a.Weights, b.Weights} {
		for t, ws := range m {
			if len(ws) == 0 {
				delete(m, t)
			}
		}
	}
	return reflect.DeepEqual(a.Weights, b.Weights)
}

// TestPublisherToReceivers checks the publisher against receivers that
// get every message, join late, lose messages or keep one type, against
// the oracle: whatever a receiver installs is exactly that version's
// guidance, and receivers that miss nothing follow every version.
func TestPublisherToReceivers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	periods := evolve(rng, 120, 40)
	pub := Publisher{SnapshotEvery: 4, TableEvery: 7}
	type rx struct {
		name      string
		r         Receiver
		from      int     // first period it hears
		loss      float64 // fraction of messages lost
		installed int
		firstAt   int // period of the first install
		lastAt    int // period of the last install
	}
	rxs := []*rx{
		{name: "all"}, {name: "late", from: 50}, {name: "lossy", loss: 0.15},
		{name: "one type", r: Receiver{Type: "gpu=yes"}},
	}
	deltas, tables := 0, 0
	byVersion := map[uint64]int{}
	for i, p := range periods {
		version := uint64(1000 + 10*i)
		byVersion[version] = i
		out, err := pub.Publish(version, p.running, p.weights)
		if err != nil {
			t.Fatal(err)
		}
		if out.Base != 0 {
			deltas++
		}
		if out.Table != nil {
			tables++
		}
		var msgs []Message
		msgs = append(append(msgs, out.Table...), out.Guidance...)
		for _, x := range rxs {
			if i < x.from {
				continue
			}
			order := rng.Perm(len(msgs))
			for _, k := range order {
				if rng.Float64() < x.loss {
					continue
				}
				res, err := x.r.Add(msgs[k].Bytes)
				if err != nil {
					t.Fatalf("%s: period %d: %v", x.name, i, err)
				}
				// Every chunk of a new version is fresh (a resent table is not).
				isGuidance := Kind(msgs[k].Bytes) == "guidance"
				if (res.Fresh && res.Key != msgs[k].Key) || (isGuidance && x.loss == 0 && !res.Fresh) {
					t.Fatalf("%s: period %d: a new message was fresh=%v under key %q, want %q", x.name, i, res.Fresh, res.Key, msgs[k].Key)
				}
				if again, _ := x.r.Add(msgs[k].Bytes); again.Fresh || again.Installed {
					t.Fatalf("%s: a duplicate was fresh or installed", x.name)
				}
				if !res.Installed {
					continue
				}
				at, ok := byVersion[res.Guidance.Version]
				if !ok {
					t.Fatalf("%s: installed unknown version %d", x.name, res.Guidance.Version)
				}
				if want := expected(periods[at], x.r.Type); !sameGuidance(res.Guidance, want) {
					t.Fatalf("%s: version of period %d installed as %v, want %v", x.name, at, res.Guidance, want)
				}
				if x.installed == 0 {
					x.firstAt = i
				}
				x.installed++
				x.lastAt = i
			}
		}
		if i == 49+7+4 && rxs[1].installed == 0 {
			t.Fatal("a late receiver did not catch up within TableEvery + SnapshotEvery periods")
		}
	}
	if deltas < len(periods)/2 || tables < len(periods)/7 {
		t.Fatalf("%d deltas and %d tables in %d periods", deltas, tables, len(periods))
	}
	for _, x := range rxs {
		t.Logf("%s: %d versions installed, the first in period %d", x.name, x.installed, x.firstAt)
		if x.loss == 0 && x.installed != len(periods)-x.firstAt {
			t.Errorf("%s: installed %d of the %d versions since its first", x.name, x.installed, len(periods)-x.firstAt)
		}
		if x.installed == 0 || x.lastAt < len(periods)-10 {
			t.Errorf("%s: last install at period %d of %d", x.name, x.lastAt, len(periods))
		}
	}
}

func TestPublisherVersionsGrow(t *testing.T) {
	var p Publisher
	if _, err := p.Publish(5, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Publish(5, nil, nil); err == nil {
		t.Fatal("a repeated version was published")
	}
}

func TestReceiverOrderAndReset(t *testing.T) {
	table, _ := EncodeNames(10, []string{"a", "b"}, []string{"t"})
	snap := func(v uint64, n uint64) []byte {
		b, _ := EncodeIndexed(v, 10, 0, []Entry{{User: 0, Value: n}}, nil)
		return b[0]
	}
	delta := func(v, base, n uint64) []byte {
		b, _ := EncodeIndexed(v, 10, base, []Entry{{User: 1, Value: n}}, nil)
		return b[0]
	}
	var r Receiver
	add := func(b []byte) Result {
		t.Helper()
		res, err := r.Add(b)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// Guidance before its table is held back, then installed with it.
	if res := add(snap(20, 3)); res.Installed || !res.Fresh {
		t.Fatalf("snapshot without a table: %+v", res)
	}
	// So is a delta on it: the newest complete version wins.
	add(delta(21, 20, 4))
	res := add(table[0])
	if !res.Installed || res.Guidance.Version != 21 || res.Guidance.Running["a"] != 3 || res.Guidance.Running["b"] != 4 {
		t.Fatalf("table completing held versions: %+v", res)
	}
	// Older versions are ignored and not relayed.
	if res := add(snap(19, 9)); res.Fresh || res.Installed {
		t.Fatalf("an older snapshot: %+v", res)
	}
	// A delta against a snapshot not held waits for it.
	if res := add(delta(31, 30, 7)); res.Installed {
		t.Fatalf("a delta without its snapshot installed: %+v", res)
	}
	if res := add(snap(30, 1)); !res.Installed || res.Guidance.Version != 31 || res.Guidance.Running["b"] != 7 {
		t.Fatalf("snapshot then held delta: %+v", res)
	}
	// A delta removing a user (value 0).
	if res := add(delta(32, 30, 0)); !res.Installed || len(res.Guidance.Running) != 1 {
		t.Fatalf("delta removing b: %+v", res)
	}
	r.Reset()
	if res := add(snap(5, 1)); res.Installed {
		t.Fatal("installed without a table after Reset")
	}
	if res := add(table[0]); !res.Installed || res.Guidance.Version != 5 {
		t.Fatalf("after Reset a low version was refused: %+v", res)
	}
}

func TestReceiverRefusesIndexesPastTheTable(t *testing.T) {
	table, _ := EncodeNames(1, []string{"a"}, []string{"t"})
	badUser, _ := EncodeIndexed(2, 1, 0, []Entry{{User: 3, Value: 1}}, nil)
	badType, _ := EncodeIndexed(3, 1, 0, nil, []TypeEntries{{Type: 1, Entries: []Entry{{User: 0, Value: 1}}}})
	badWeightUser, _ := EncodeIndexed(4, 1, 0, nil, []TypeEntries{{Type: 0, Entries: []Entry{{User: 1, Value: 1}}}})
	for name, b := range map[string][]byte{"user": badUser[0], "type": badType[0], "weight user": badWeightUser[0]} {
		t.Run(name, func(t *testing.T) {
			for _, typ := range []string{"", "other"} {
				r := Receiver{Type: typ}
				if _, err := r.Add(table[0]); err != nil {
					t.Fatal(err)
				}
				res, err := r.Add(b)
				if !errors.Is(err, ErrMalformed) || res.Installed {
					t.Fatalf("type filter %q: err %v, installed %v; want ErrMalformed", typ, err, res.Installed)
				}
			}
		})
	}
}

// TestReceiverForget: after Forget (a takeover, or stale guidance) a
// receiver takes a coordinator whose clock is behind, and still installs
// guidance on the table and snapshot it kept.
func TestReceiverForget(t *testing.T) {
	var r Receiver
	tableA, _ := EncodeNames(100, []string{"a"}, nil)
	snapA, _ := EncodeIndexed(200, 100, 0, []Entry{{User: 0, Value: 1}}, nil)
	for _, b := range [][]byte{tableA[0], snapA[0]} {
		if _, err := r.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	r.Forget()
	onKept, _ := EncodeIndexed(201, 100, 200, []Entry{{User: 0, Value: 4}}, nil)
	if res, err := r.Add(onKept[0]); err != nil || !res.Installed || res.Guidance.Running["a"] != 4 {
		t.Fatalf("delta on the kept snapshot: %+v, %v", res, err)
	}
	r.Forget()
	kept, _ := EncodeIndexed(150, 100, 0, []Entry{{User: 0, Value: 2}}, nil)
	if res, err := r.Add(kept[0]); err != nil || !res.Installed || res.Guidance.Running["a"] != 2 {
		t.Fatalf("guidance on the kept table: %+v, %v", res, err)
	}
	tableB, _ := EncodeNames(50, []string{"b"}, nil)
	snapB, _ := EncodeIndexed(160, 50, 0, []Entry{{User: 0, Value: 3}}, nil)
	if res, _ := r.Add(snapB[0]); res.Installed || !res.Fresh {
		t.Fatalf("snapshot before its lower-epoch table: %+v", res)
	}
	if res, err := r.Add(tableB[0]); err != nil || !res.Installed || res.Guidance.Running["b"] != 3 {
		t.Fatalf("lower-epoch table after Forget: %+v, %v", res, err)
	}
	// Once it completes, lower epochs are refused again.
	tableC, _ := EncodeNames(40, []string{"c"}, nil)
	if res, _ := r.Add(tableC[0]); res.Fresh {
		t.Fatal("an older table was taken after the new one completed")
	}
}

func TestGossipLoad(t *testing.T) {
	p := Publication{Guidance: []Message{{Bytes: make([]byte, 997)}}, Table: []Message{{Bytes: make([]byte, 97)}}}
	tests := []struct {
		members, mult int
		period, want  float64
	}{
		{9, 4, 1, 1100 * 4},        // ceil(log10(10)) = 1
		{10, 4, 1, 1100 * 8},       // ceil(log10(11)) = 2
		{10000, 4, 1, 1100 * 20},   // ceil(log10(10001)) = 5
		{10000, 4, 10, 1100 * 2.0}, // a 10 s period
	}
	for _, tt := range tests {
		if got := p.GossipLoad(tt.members, tt.mult, tt.period); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("GossipLoad(%d members, mult %d, %v s) = %v, want %v", tt.members, tt.mult, tt.period, got, tt.want)
		}
	}
}

// TestPublisherRewarm: once warmed up, a publisher sends deltas without
// the table; after Rewarm (a member joined or came back from a partition)
// its next Warmup publications carry the table and a snapshot again.
// changingPeriods returns a function that publishes p's next period, of
// users a and b with a's running count changing every period, so that
// deltas are never empty, and the maps it publishes, to change between
// periods.
func changingPeriods(t *testing.T, p *Publisher) (next func() Publication, running map[string]uint64, weights map[string]map[string]float64) {
	running = map[string]uint64{"a": 1, "b": 2}
	weights = map[string]map[string]float64{"t": {"a": 1, "b": 1}}
	v := uint64(0)
	next = func() Publication {
		t.Helper()
		v++
		running["a"] = v
		pub, err := p.Publish(v, running, weights)
		if err != nil {
			t.Fatal(err)
		}
		return pub
	}
	return next, running, weights
}

func TestPublisherRewarm(t *testing.T) {
	p := &Publisher{SnapshotEvery: 100, TableEvery: 100}
	publish, _, _ := changingPeriods(t, p)
	for range Warmup {
		if pub := publish(); pub.Table == nil || pub.Base != 0 {
			t.Fatalf("warm-up period %d: table %v, base %d; want the table and a snapshot", pub.Version, pub.Table != nil, pub.Base)
		}
	}
	if pub := publish(); pub.Table != nil || pub.Base == 0 {
		t.Fatalf("after warm-up: table %v, base %d; want a delta without the table", pub.Table != nil, pub.Base)
	}
	p.Rewarm()
	for range Warmup {
		if pub := publish(); pub.Table == nil || pub.Base != 0 {
			t.Fatalf("after Rewarm, period %d: table %v, base %d; want the table and a snapshot", pub.Version, pub.Table != nil, pub.Base)
		}
	}
	if pub := publish(); pub.Table != nil {
		t.Fatal("Rewarm lasted beyond Warmup periods")
	}
}

// TestNewTableSurvivesALostSending: a member that loses every message of
// the period that names a new user installs guidance again at the next
// snapshot, which it could not before the table's periodic resend if the
// table went out once; the new table goes out in TableSends periods, then
// stops.
func TestNewTableSurvivesALostSending(t *testing.T) {
	const snapEvery = 4
	next, running, weights := changingPeriods(t, &Publisher{SnapshotEvery: snapEvery, TableEvery: 100})
	var r Receiver
	// publish sends one period to r, unless lost, and returns what it
	// sent and whether r installed that period's version.
	publish := func(lost bool) (Publication, bool) {
		t.Helper()
		pub := next()
		installed := false
		if !lost {
			for _, m := range append(append([]Message{}, pub.Table...), pub.Guidance...) {
				res, err := r.Add(m.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				if res.Installed {
					installed = res.Guidance.Version == pub.Version
				}
			}
		}
		return pub, installed
	}
	for range Warmup + 2 {
		if pub, ok := publish(false); !ok {
			t.Fatalf("version %d not installed", pub.Version)
		}
	}
	running["c"] = 3
	weights["t"]["c"] = 2
	if pub, _ := publish(true); pub.Table == nil || pub.Base != 0 {
		t.Fatalf("a new user's period: table %v, base %d; want the table and a snapshot", pub.Table != nil, pub.Base)
	}
	tables, installedAt := 1, 0
	for k := 1; k <= 2*snapEvery; k++ {
		pub, ok := publish(false)
		if pub.Table != nil {
			tables++
			if k >= TableSends {
				t.Fatalf("period %d after a new table sent it again", k)
			}
		}
		if ok && installedAt == 0 {
			installedAt = k
		}
	}
	if tables != TableSends {
		t.Errorf("a new table went out in %d periods; want %d", tables, TableSends)
	}
	if installedAt == 0 || installedAt > snapEvery {
		t.Errorf("after a lost new table, the first version installed %d periods on; want within %d", installedAt, snapEvery)
	}
}

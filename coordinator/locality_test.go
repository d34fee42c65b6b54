package coordinator

import (
	"fmt"
	"maps"
	"testing"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/pricegossip"
)

// TestLocalityPeriod: reports in the wire format become node loads (users
// summed, the rack from the report or else from gossip metadata), and the
// period's prices, encoded, reach a scheduler as the solve computed them:
// the hot node dearer than its rack by at most the rack transfer, the idle
// rack cheapest.
func TestLocalityPeriod(t *testing.T) {
	reports := map[string]fairgossip.Report{}
	add := func(r fairgossip.Report) {
		b, err := fairgossip.EncodeReport(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fairgossip.DecodeReport(b)
		if err != nil {
			t.Fatal(err)
		}
		reports[got.Node] = got
	}
	// Rack r1: nm-0 is hot (4 slots busy, 30 queued over two users),
	// nm-1 and nm-2 idle. Rack r2: nm-3 reports no rack (an older node
	// monitor); its metadata says r2.
	add(fairgossip.Report{Node: "nm-0", Slots: 4, Rack: "r1", TaskMillis: 1000,
		Users: []fairgossip.Usage{{User: "a", Queued: 20, Running: 3}, {User: "b", Queued: 10, Running: 1}}})
	add(fairgossip.Report{Node: "nm-1", Slots: 4, Rack: "r1", TaskMillis: 900})
	add(fairgossip.Report{Node: "nm-2", Slots: 4, Rack: "r1"})
	add(fairgossip.Report{Node: "nm-3", Slots: 4, Users: []fairgossip.Usage{{User: "a", Running: 1}}})
	attrs := map[string]map[string]string{"nm-0": {"rack": "r9"}, "nm-3": {"rack": "r2"}}

	loads := localitySnapshot(reports, attrs)
	byName := map[string]locality.NodeLoad{}
	for _, l := range loads {
		byName[l.Name] = l
	}
	if l := byName["nm-0"]; l.Rack != "r1" || l.Queued != 30 || l.Running != 4 || l.Slots != 4 || l.TaskMillis != 1000 {
		t.Fatalf("nm-0 load %+v", l)
	}
	if l := byName["nm-3"]; l.Rack != "r2" || l.Running != 1 {
		t.Fatalf("nm-3 load %+v: want rack r2 from metadata", l)
	}

	p := locality.DefaultParams()
	p.InputBytes = locality.GB // a rack move costs 1000, the core 2000
	out, msg, err := PriceLocality(loads, p, 42)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pricegossip.Decode(msg)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 42 || !maps.Equal(got.Node, out.Prices.Node) || !maps.Equal(got.Rack, out.Prices.Rack) || got.Cluster != out.Prices.Cluster {
		t.Fatalf("decoded %+v, solved %+v", got, out.Prices)
	}
	t.Logf("prices %+v; %d local, %d rack, %d core", got, out.Local, out.Rack, out.Core)
	hot, r1 := got.Node["nm-0"], got.Rack["r1"]
	if hot <= r1 || hot-r1 > p.RackCost() {
		t.Fatalf("hot node %d, its rack %d: want dearer by at most %d", hot, r1, p.RackCost())
	}
	if out.Rack == 0 {
		t.Fatalf("the flow moved none of nm-0's 30 queued tasks to its idle rack-mates")
	}
	if got.Cluster > r1 || got.Cluster > got.Rack["r2"] {
		t.Fatalf("cluster price %d above a rack's (%v)", got.Cluster, got.Rack)
	}
}

// TestLocalityPeriodScales: a thousand nodes' period encodes to a few
// bytes a node.
func TestLocalityPeriodScales(t *testing.T) {
	reports := map[string]fairgossip.Report{}
	for i := range 1000 {
		r := fairgossip.Report{Node: fmt.Sprintf("nm-%04d", i), Slots: 8, Rack: fmt.Sprintf("rack-%02d", i/40), TaskMillis: 100}
		r.Users = []fairgossip.Usage{{User: "u", Running: uint64(i % 9), Queued: uint64(i % 7 * (i % 3))}}
		reports[r.Node] = r
	}
	out, msg, err := PriceLocality(localitySnapshot(reports, nil), locality.DefaultParams(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Prices.Node) != 1000 || len(out.Prices.Rack) != 25 {
		t.Fatalf("%d node and %d rack prices", len(out.Prices.Node), len(out.Prices.Rack))
	}
	if len(msg) > 8*1000 {
		t.Fatalf("%d bytes for 1,000 nodes", len(msg))
	}
}

// TestPricePeriodsOnOnePricer: the locality loop's Pricer, kept across
// periods, prices each period as a new one does (PriceLocality), and the
// message carries the period's version.
func TestPricePeriodsOnOnePricer(t *testing.T) {
	p := locality.DefaultParams()
	pr, err := locality.NewPricer(p)
	if err != nil {
		t.Fatal(err)
	}
	hot := func(queued int) []locality.NodeLoad {
		return []locality.NodeLoad{
			{Name: "nm-0", Rack: "r1", Slots: 4, Running: 4, Queued: queued, TaskMillis: 1000},
			{Name: "nm-1", Rack: "r1", Slots: 4, Running: 1, TaskMillis: 900},
			{Name: "nm-2", Rack: "r2", Slots: 4, TaskMillis: 100},
		}
	}
	for k, tc := range []struct {
		name  string
		loads []locality.NodeLoad
	}{
		{"hot node", hot(30)},
		{"hotter", hot(90)},
		{"drained", hot(0)},
		{"rack-mate gone", hot(30)[0:1:1]},
		{"back", hot(12)},
	} {
		version := uint64(k + 1)
		got, msg, err := pricePeriod(pr, tc.loads, version)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want, _, err := PriceLocality(tc.loads, p, version)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Cost != want.Cost || got.Prices.Cluster != want.Prices.Cluster ||
			!maps.Equal(got.Prices.Node, want.Prices.Node) || !maps.Equal(got.Prices.Rack, want.Prices.Rack) {
			t.Fatalf("%s: kept pricer %+v, new one %+v", tc.name, got, want)
		}
		dec, err := pricegossip.Decode(msg)
		if err != nil || dec.Version != version || !maps.Equal(dec.Node, got.Prices.Node) {
			t.Fatalf("%s: decoded %+v (%v)", tc.name, dec, err)
		}
	}
}

func TestStartRefusesBadLocalityParams(t *testing.T) {
	_, err := Start(Config{Locality: true, LocalityParams: locality.Params{MaxWaves: 0, RackPerGB: 5}})
	if err == nil {
		t.Fatal("started with MaxWaves 0")
	}
	t.Log(err)
}

// BenchmarkPriceLocality times a locality period without the sends
// (snapshot, build, solve, encode) at 100 to 10,000 node monitors of 8
// slots in racks of 40, one in ten hot, and reports the message size.
func BenchmarkPriceLocality(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			reports := map[string]fairgossip.Report{}
			for i := range n {
				r := fairgossip.Report{Node: fmt.Sprintf("nm-%05d", i), Slots: 8, Rack: fmt.Sprintf("rack-%03d", i/40), TaskMillis: uint64(50 + i%100)}
				q := uint64(0)
				if i%10 == 0 {
					q = uint64(8 + i%40)
				}
				r.Users = []fairgossip.Usage{{User: "u", Running: uint64(min(8, i%9+int(q))), Queued: q}}
				reports[r.Node] = r
			}
			var msg []byte
			for b.Loop() {
				var err error
				if _, msg, err = PriceLocality(localitySnapshot(reports, nil), locality.DefaultParams(), 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(msg)), "bytes")
		})
	}
}

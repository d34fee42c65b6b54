package guidance

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// ParseGossip parses --gossip: the node counts, comma separated, at which
// MeasureGossip also runs real members. "" is none.
func ParseGossip(s string) (map[int]bool, error) {
	at := map[int]bool{}
	if s == "" {
		return at, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("--gossip: %q is not a member count >= 2", f)
		}
		at[n] = true
	}
	return at, nil
}

// Report is the benchmark's result: a row per size, printed as Print
// does; its JSON is the rows.
type Report struct {
	Config  Config
	Results []Result
}

// WriteTable prints the rows as Print does.
func (r Report) WriteTable(w io.Writer) error {
	Print(w, r.Results, r.Config)
	return nil
}

// MarshalJSON encodes the rows as one array.
func (r Report) MarshalJSON() ([]byte, error) { return json.Marshal(r.Results) }

// MeasureAll measures every size in turn, with real gossip at the node
// counts in gossipAt, saying what it starts on progress.
func MeasureAll(sizes []Size, gossipAt map[int]bool, cfg Config, progress io.Writer) (Report, error) {
	rep := Report{Config: cfg}
	for _, sz := range sizes {
		fmt.Fprintf(progress, "coordinator bench: %d nodes, %d types, %d users: %d periods\n", sz.Nodes, sz.Types, sz.Users, cfg.Periods)
		r, err := Measure(sz, cfg)
		if err != nil {
			return rep, err
		}
		if gossipAt[sz.Nodes] {
			fmt.Fprintf(progress, "coordinator bench: %d in-process memberlist members, %d periods of 1 s\n", sz.Nodes, cfg.GossipPeriods)
			g, err := MeasureGossip(sz, cfg, progress)
			if err != nil {
				return rep, err
			}
			r.Gossip = &g
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// Options are `sparrow bench coordinator`: Config, the sizes and the
// real-gossip node counts as the lists the command takes, and the output.
type Options struct {
	Config
	Sizes, Gossip string
	// JSON also prints the rows as one JSON array on the last line.
	JSON bool
}

// Run parses the lists, checks Config, measures every size (MeasureAll)
// with notes on progress, and prints the table on out.
func (o Options) Run(out, progress io.Writer) error {
	sizes, err := ParseSizes(o.Sizes)
	if err != nil {
		return err
	}
	gossipAt, err := ParseGossip(o.Gossip)
	if err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	rep, err := MeasureAll(sizes, gossipAt, o.Config, progress)
	if err != nil {
		return err
	}
	return report.Print(out, rep, report.If(o.JSON, report.TableThenJSON))
}

// AddFlags declares `sparrow bench coordinator`'s flags on fs, with their
// defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Sizes, "sizes", "100:4:20,1000:20:200,10000:100:5000", "fleet sizes as nodes:types:users, comma separated")
	fs.IntVar(&o.Periods, "periods", 12, "periods measured per size (after the warm-up periods)")
	fs.IntVar(&o.Slots, "slots", 8, "slots per node")
	fs.Float64Var(&o.Churn, "churn", 0.1, "fraction of users whose work changes each period")
	fs.IntVar(&o.RetransmitMult, "retransmit-mult", 4, "memberlist RetransmitMult (4 in the lan and local profiles)")
	fs.IntVar(&o.SnapshotEvery, "snapshot-every", fairgossip.DefaultSnapshotEvery, "periods between snapshots")
	fs.IntVar(&o.TableEvery, "table-every", fairgossip.DefaultTableEvery, "periods between resends of the name table")
	fs.StringVar(&o.Gossip, "gossip", "", "also measure with real in-process memberlist members at these sizes' node counts (comma separated, e.g. 100)")
	fs.IntVar(&o.GossipPeriods, "gossip-periods", 20, "periods (1 s each) of the real gossip measurement")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the synthetic reports")
	fs.BoolVar(&o.JSON, "json", false, "also print the results as one JSON array on the last line")
}

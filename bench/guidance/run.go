package guidance

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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

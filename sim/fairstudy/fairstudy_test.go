package fairstudy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/sim/constrained"
)

// TestRunTwoSeeds runs a tiny study over two seeds: every policy is
// summarised in order, offline's RMSE against itself is 0, the JSON holds
// both seeds, progress is written, and both charts draw.
func TestRunTwoSeeds(t *testing.T) {
	cfg := constrained.DefaultConfig()
	cfg.Nodes, cfg.Slots, cfg.Jobs, cfg.Duration, cfg.TaskMean = 40, 2, 15, 100, 3
	policies, err := constrained.ParsePolicies("all")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	st, err := Run(Config{Base: cfg, Policies: policies, Seeds: 2, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"fair", "choosy", "choosy-exact", "offline"} {
		if st.Summary[i].Policy != want {
			t.Errorf("summary %d is %s, want %s", i, st.Summary[i].Policy, want)
		}
	}
	if v := st.Summary[3].RMSEMean; v != 0 {
		t.Errorf("offline's RMSE against itself = %v, want 0", v)
	}
	b, err := json.Marshal(st.JSON(map[string]any{"seeds": 2}))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Runs []struct {
			Seed uint64 `json:"seed"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Runs) != 2 || out.Runs[1].Seed != cfg.Seed+1 {
		t.Errorf("JSON runs %+v (%v), want seeds %d and %d", out.Runs, err, cfg.Seed, cfg.Seed+1)
	}
	if !strings.Contains(progress.String(), "offline      done") {
		t.Errorf("progress missing:\n%s", progress.String())
	}
	dir := t.TempDir()
	for name, c := range map[string]interface{ Save(string) error }{"r.svg": st.RMSEChart(), "c.svg": st.ResponseChart()} {
		p := filepath.Join(dir, name)
		if err := c.Save(p); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || !bytes.Contains(b, []byte(">choosy<")) {
			t.Errorf("chart %s: %v", name, err)
		}
	}
}

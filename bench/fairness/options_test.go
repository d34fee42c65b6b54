package fairness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := Config{NodesPerType: 4, Slots: 4, TasksPerJob: 8, TaskDuration: 200 * time.Millisecond, Backlog: 4, Scale: 0.2,
		Period: time.Second, Bin: 500 * time.Millisecond, Settle: 2 * time.Second, Tolerance: 0.05}
	for _, c := range []struct {
		name    string
		o       Options
		want    string
		wantSet []string
	}{
		{name: "all three", o: Options{Config: ok, Setups: "fair, choosy,cmmf-weights", OutDir: filepath.Join(dir, "out")},
			wantSet: []string{"fair", "choosy", "cmmf-weights"}},
		{name: "unknown setup", o: Options{Config: ok, Setups: "bogus", OutDir: dir}, want: `--setups: unknown setup "bogus"`},
		{name: "empty setup", o: Options{Config: ok, Setups: "fair,,choosy", OutDir: dir}, want: `--setups: unknown setup ""`},
		{name: "bad config", o: Options{Config: Config{Scale: 0.2}, Setups: "fair", OutDir: dir}, want: "--nodes-per-type"},
		{name: "out dir under a file", o: Options{Config: ok, Setups: "fair", OutDir: filepath.Join(file, "x")}, want: "--out-dir"},
	} {
		err := c.o.Validate()
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var names []string
		for _, s := range c.o.setups {
			names = append(names, s.Name)
		}
		if strings.Join(names, ",") != strings.Join(c.wantSet, ",") {
			t.Errorf("%s: setups %v, want %v", c.name, names, c.wantSet)
		}
		if st, err := os.Stat(c.o.OutDir); err != nil || !st.IsDir() {
			t.Errorf("%s: out dir not created: %v", c.name, err)
		}
	}
}

package planreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	cyclic := filepath.Join(dir, "cyclic.json")
	if err := os.WriteFile(cyclic, []byte(`{"graph":{"tasks":[{"name":"A","type":"u"},{"name":"B","type":"u"}],
"arcs":[{"from":"A","to":"B"},{"from":"B","to":"A"}]},
"machines":[{"name":"m","cores":1,"ghz":1,"disk_read":1,"disk_write":1,"net":1}],
"models":{"u":{"type":"u","ref":{"name":"r","cores":1,"ghz":1,"disk_read":1,"disk_write":1,"net":1},
"groups":[{"label":"w","kind":2,"phases":1,"cpu":[1]}]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                string
		example, file, plot string
		want                string
	}{
		{name: "nothing", want: "give --problem"},
		{name: "unknown example", example: "sort", want: `--example "sort"`},
		{name: "missing file", file: filepath.Join(dir, "missing.json"), want: "no such file"},
		{name: "cycle", file: cyclic, want: "cycle A → B → A"},
		{name: "gif plot", example: "join", plot: filepath.Join(dir, "x.gif"), want: ".svg or .png"},
		{name: "join", example: "join", plot: filepath.Join(dir, "gantt.svg")},
	} {
		p, err := Load(c.example, c.file, c.plot)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.want)
			}
			continue
		}
		if err != nil || len(p.Graph.Tasks) == 0 || len(p.Machines) == 0 {
			t.Errorf("%s: %d tasks on %d machines, %v", c.name, len(p.Graph.Tasks), len(p.Machines), err)
		}
	}
}

// TestCommandRun runs `sparrow plan` as its flags give it: the dump is the
// problem, and the plan is reported as JSON within the budget.
func TestCommandRun(t *testing.T) {
	for _, c := range []struct {
		args []string
		key  string
	}{
		{[]string{"--example", "join", "--dump"}, `"machines"`},
		{[]string{"--example", "join", "--max-nodes", "20000", "--time-limit", "0"}, `"makespan_s"`},
	} {
		var cmd Command
		fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
		cmd.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		var out, progress bytes.Buffer
		if err := cmd.Run(context.Background(), &out, &progress); err != nil || !strings.Contains(out.String(), c.key) {
			t.Errorf("%v: %v\n%s", c.args, err, out.String())
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestRunPlanErrors(t *testing.T) {
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
		f    planFlags
		want string
	}{
		{planFlags{}, "give --problem"},
		{planFlags{example: "sort"}, `--example "sort"`},
		{planFlags{problem: filepath.Join(dir, "missing.json")}, "no such file"},
		{planFlags{problem: cyclic}, "cycle A → B → A"},
	} {
		err := runPlan(c.f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.f, err, c.want)
		}
	}
}

func TestRunPlanJoin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gantt.svg")
	if err := runPlan(planFlags{example: "join", maxNodes: 100000, plot: out}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("gantt chart not written: %v", err)
	}
	if err := runPlan(planFlags{example: "join", plot: filepath.Join(t.TempDir(), "x.gif")}); err == nil {
		t.Error("a .gif plot path was accepted")
	}
}

func TestPlanFlagsHaveHelp(t *testing.T) {
	n := 0
	newPlanCmd().Flags().VisitAll(func(f *pflag.Flag) {
		n++
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("plan --%s has no help", f.Name)
		}
	})
	if n < 7 {
		t.Errorf("plan has %d flags, want at least 7", n)
	}
}

package flowbench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/flow"
)

func TestGenOptionsParams(t *testing.T) {
	for _, c := range []struct {
		o         GenOptions
		racks     int
		xi        int64
		fair      bool
		computers int
	}{
		{GenOptions{Xi: 2}, 9, 2, true, 243},
		{GenOptions{Racks: 2, Xi: 20, Unfair: true}, 2, 20, false, 243},
		{GenOptions{Xi: 2}, 1, 2, true, 20},
	} {
		p := c.o.Params(c.computers, 10, 100)
		if p.Racks != c.racks || p.Xi != c.xi || p.Fair != c.fair || p.Computers != c.computers || p.Jobs != 10 || p.Tasks != 100 {
			t.Errorf("%+v: %+v", c.o, p)
		}
	}
}

// TestGenAndSolveRoundTrip writes a generated graph and core/quincy's
// graph as DIMACS, reads them back from a file and from stdin, and
// times them.
func TestGenAndSolveRoundTrip(t *testing.T) {
	o := GenOptions{Xi: 2, Seed: 1}
	var a, b bytes.Buffer
	if err := flow.WriteDIMACS(&a, o.Quincy(20, 2, 30).Net); err != nil {
		t.Fatal(err)
	}
	if err := o.WriteSynthetic(&b, "243", "QFP"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "q.min")
	if err := os.WriteFile(file, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := Options{Gen: o, Reps: 1}.Run([]string{file, "-"}, &b, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Instance != file || rows[1].Instance != "-" || rows[1].Cost == 0 {
		t.Errorf("rows %+v", rows)
	}
	var table bytes.Buffer
	if err := rows.WriteTable(&table); err != nil || !strings.Contains(table.String(), file) {
		t.Errorf("table %v:\n%s", err, table.String())
	}
}

func TestOptionsErrors(t *testing.T) {
	o := GenOptions{Xi: 2, Seed: 1}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"bad size", func() error {
			_, err := (Options{Gen: o, Sizes: "bogus", Reps: 1}).Run(nil, nil, &bytes.Buffer{})
			return err
		}(), `--sizes "bogus": want COMPUTERSxJOBSxTASKS`},
		{"missing file", func() error { _, err := ReadFile(filepath.Join(t.TempDir(), "none"), nil); return err }(), "no such file"},
		{"malformed", func() error { _, err := ReadFile("-", strings.NewReader("p min x\n")); return err }(), "-: "},
		{"synthetic size", o.WriteSynthetic(&bytes.Buffer{}, "bogus", "QFP"), "--quincy"},
		{"synthetic policy", o.WriteSynthetic(&bytes.Buffer{}, "243", "bogus"), "--policy"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, c.err, c.want)
		}
	}
}

// TestGenSolveAndPrint runs `sparrow flow gen`, `solve` and `bench` as
// their flags give them: a generated graph, solved from stdin, and timed
// with its rows printed as JSON.
func TestGenSolveAndPrint(t *testing.T) {
	for _, args := range [][]string{
		{"--computers", "20", "--jobs", "2", "--tasks", "30", "--racks", "2", "--xi", "5", "--unfair"},
		{"--quincy", "243", "--policy", "QP"},
	} {
		var g Gen
		fs := pflag.NewFlagSet("gen", pflag.ContinueOnError)
		g.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var problem, solution bytes.Buffer
		if err := g.Write(&problem); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := Solve("-", bytes.NewReader(problem.Bytes()), &solution); err != nil || !strings.HasPrefix(solution.String(), "s ") {
			t.Fatalf("%v: solution %q, %v", args, solution.String(), err)
		}
	}
	if err := Solve("-", strings.NewReader("p min 2 0\nn 1 1\nn 2 -1\n"), &bytes.Buffer{}); err == nil || !strings.HasPrefix(err.Error(), "-: ") {
		t.Errorf("infeasible problem: error %v, want one naming the file", err)
	}
	var o Options
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--sizes", "20x2x30", "--reps", "1", "--json"}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := o.Print(nil, nil, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), `"instance": "quincy 20x2x30"`) {
		t.Errorf("bench JSON %q, %v", out.String(), err)
	}
}

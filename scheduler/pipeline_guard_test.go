package scheduler

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// guardedCall is a call only some functions of the package may make.
type guardedCall struct {
	// qual is the package qualifier of a function ("placement" for
	// placement.Filter); empty for a method, matched by name on any
	// receiver.
	qual, name string
	// args, when > 0, is the number of arguments that tells this method
	// from another of the same name.
	args int
	// recv, for a method declared in this package, is its receiver type:
	// the guard checks that no other type declares a method of that
	// name, so that matching calls by name is exact.
	recv string
	// callers are the functions allowed to make the call: "T.*" for every
	// method of T, "T.m" for one.
	callers []string
}

func (g guardedCall) String() string {
	switch {
	case g.qual != "":
		return g.qual + "." + g.name
	case g.recv != "":
		return g.recv + "." + g.name
	}
	return "." + g.name
}

// pipelineOnly are the stages of placement: only the pipeline filters by
// constraints, steers by class or user, and plans; and only the parts'
// wrappers call the core functions behind their stages.
var pipelineOnly = []guardedCall{
	{qual: "placement", name: "Filter", callers: []string{"placementPipeline.*"}},
	{name: "Plan", callers: []string{"placementPipeline.*"}},
	{name: "PlanWidened", callers: []string{"placementPipeline.*"}},
	{name: "PlanPicks", callers: []string{"placementPipeline.*"}},
	{name: "steer", recv: "shortPolicy", callers: []string{"placementPipeline.*"}},
	{name: "candidates", recv: "steerBook", callers: []string{"placementPipeline.*"}},
	{name: "serving", recv: "steerBook", callers: []string{"placementPipeline.*"}},
	{qual: "shortjobs", name: "Steer", callers: []string{"shortPolicy.steer"}},
	{qual: "shortjobs", name: "SteerLong", callers: []string{"shortPolicy.steer"}},
	// placement.Steer's Serving(user, nodes, now) and Candidates(rng,
	// user, nodes, now), told by their arguments from httpapi.Serving and
	// NodeView.Candidates.
	{name: "Serving", args: 3, callers: []string{"steerBook.serving"}},
	{name: "Candidates", args: 4, callers: []string{"steerBook.candidates"}},
}

// guardFinding is one guarded call found, and by which function.
type guardFinding struct {
	call   guardedCall
	caller string
	pos    token.Position
}

// guardedCalls returns every guarded call in files, with the function
// making it ("T.m" for a method of T, "f" for a function).
func guardedCalls(fset *token.FileSet, files []*ast.File, guards []guardedCall) []guardFinding {
	var out []guardFinding
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			caller := funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				for _, g := range guards {
					if sel.Sel.Name != g.name || (g.args > 0 && len(call.Args) != g.args) {
						continue
					}
					x, isIdent := sel.X.(*ast.Ident)
					if g.qual != "" && (!isIdent || x.Name != g.qual) {
						continue
					}
					out = append(out, guardFinding{call: g, caller: caller, pos: fset.Position(call.Pos())})
				}
				return true
			})
		}
	}
	return out
}

// funcName is "T.m" for a method of T (or *T), else the function's name.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// allowed reports whether caller may make g.
func (g guardedCall) allowed(caller string) bool {
	recv, _, _ := strings.Cut(caller, ".")
	return slices.Contains(g.callers, caller) || slices.Contains(g.callers, recv+".*")
}

// bypasses returns the guarded calls in files made by functions not
// allowed to make them.
func bypasses(fset *token.FileSet, files []*ast.File, guards []guardedCall) []string {
	var out []string
	for _, f := range guardedCalls(fset, files, guards) {
		if !f.call.allowed(f.caller) {
			out = append(out, fmt.Sprintf("%s: %s calls %s; only %v may", f.pos, f.caller, f.call, f.call.callers))
		}
	}
	return out
}

// packageFiles parses the package's non-test Go files.
func packageFiles(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatal("no package files found")
	}
	return fset, files
}

// Every placement in the package goes through the pipeline: no function
// but the pipeline's own filters, steers or plans. The guard is checked
// to see the real calls (each guarded call is made somewhere, by an
// allowed caller) and to name methods exactly (a guarded method name is
// declared by its type alone).
func TestPlacementGoesThroughThePipeline(t *testing.T) {
	fset, files := packageFiles(t)
	for _, b := range bypasses(fset, files, pipelineOnly) {
		t.Error(b)
	}
	made := map[string]bool{}
	for _, f := range guardedCalls(fset, files, pipelineOnly) {
		made[f.call.String()] = true
	}
	for _, g := range pipelineOnly {
		if g.name == "PlanPicks" {
			continue // the pipeline uses Plan; PlanPicks is guarded for the future
		}
		if !made[g.String()] {
			t.Errorf("no call of %s found: the guard no longer matches the code", g)
		}
	}
	for _, g := range pipelineOnly {
		if g.recv == "" {
			continue
		}
		var recvs []string
		for _, f := range files {
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == g.name {
					recvs = append(recvs, funcName(fn))
				}
			}
		}
		if want := []string{g.recv + "." + g.name}; !slices.Equal(recvs, want) {
			t.Errorf("functions named %s: %v, want only %v; calls by that name would be ambiguous to the guard", g.name, recvs, want)
		}
	}
}

// The guard catches each kind of bypass, and lets the pipeline and the
// wrappers be.
func TestPipelineGuardCatchesBypasses(t *testing.T) {
	tests := []struct {
		name, src string
		want      int // bypasses found
	}{
		{"a site planning itself",
			`func (s *Scheduler) sweepOne(r *request) { s.place.sampler.Plan(s.place.rng, nil, nil, 1) }`, 1},
		{"a site filtering by constraints",
			`func (s *Scheduler) reprobe(r *request) { placement.Filter(nil, r.cons) }`, 1},
		{"a site steering by class and by user",
			`func (s *Scheduler) round(r *request) { s.short.steer(r.app, nil, 0, 1, 2, s.view); s.steer.candidates(nil, "u", nil, time.Time{}) }`, 2},
		{"a closure inside a site",
			`func (s *Scheduler) relax(r *request) { f := func() { s.place.sampler.PlanWidened(nil, nil, nil, 1, nil) }; f() }`, 1},
		{"a function, not a method",
			`func helper(p *placement.Sampler) { p.PlanPicks(nil, nil, nil, nil, 1) }`, 1},
		{"the core steering outside its wrapper",
			`func (s *Scheduler) x() { shortjobs.Steer(nil, 0, 1, nil, nil); s.steer.steer.Serving("u", nil, time.Time{}) }`, 2},
		{"the core's long-job steering outside its wrapper",
			`func (s *Scheduler) x() { shortjobs.SteerLong(nil, 2, nil, nil) }`, 1},
		{"the pipeline itself",
			`func (p *placementPipeline) place(r *request) { placement.Filter(nil, nil); p.rand.sampler.Plan(nil, nil, nil, 1); p.short.steer("a", nil, 0, 1, 2, nil) }`, 0},
		{"the wrappers",
			`func (p *shortPolicy) steer() { shortjobs.Steer(nil, 0, 1, nil, nil); shortjobs.SteerLong(nil, 2, nil, nil) }
func (b *steerBook) candidates() { b.steer.Candidates(nil, "u", nil, time.Time{}) }`, 0},
		{"the view's Candidates and other Filters",
			`func (s *Scheduler) y() { s.view.Candidates("a"); slices.DeleteFunc(nil, nil); other.Filter(nil); httpapi.Serving(s.ok) }`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "x.go", "package scheduler\n"+tt.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := bypasses(fset, []*ast.File{f}, pipelineOnly); len(got) != tt.want {
				t.Errorf("%d bypasses %v, want %d", len(got), got, tt.want)
			}
		})
	}
}

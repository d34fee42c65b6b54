package integration

import (
	"os/exec"
	"strings"
	"testing"
)

// module is this repository's Go module path.
const module = "github.com/sparrowfleet/sparrow/"

// layoutRules say which of the module's own packages each kind of package
// may import (non-test code), so that the tree keeps showing the
// architecture: the deterministic core depends on nothing but itself and
// the standard library; plumbing never reaches up into daemons or
// harnesses; daemons and the client library never import experiment
// harnesses. There are no exceptions.
var layoutRules = []struct {
	kind    string   // path prefix within the module
	forbid  []string // module path prefixes it must not import
	onlyStd bool     // may import only the standard library and core/
}{
	{kind: "core/", onlyStd: true},
	{kind: "internal/", forbid: []string{"scheduler", "nodemonitor", "coordinator", "client", "bench/", "sim", "cmd/"}},
	{kind: "coordinator", forbid: []string{"bench/", "sim", "cmd/", "scheduler", "nodemonitor", "client"}},
	{kind: "scheduler", forbid: []string{"bench/", "sim", "cmd/", "nodemonitor", "client"}},
	{kind: "nodemonitor", forbid: []string{"bench/", "sim", "cmd/", "scheduler", "client"}},
	{kind: "client", forbid: []string{"bench/", "sim", "cmd/", "scheduler", "nodemonitor"}},
	{kind: "sim", forbid: []string{"bench/", "cmd/", "scheduler", "nodemonitor", "client"}},
}

func TestLayoutImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, r := range layoutRules {
			if pkg != strings.TrimSuffix(r.kind, "/") && !strings.HasPrefix(pkg, r.kind) {
				continue
			}
			checked++
			for _, imp := range fields[1:] {
				own, ok := strings.CutPrefix(imp, module)
				if r.onlyStd {
					if strings.Contains(strings.Split(imp, "/")[0], ".") && (!ok || !strings.HasPrefix(own, "core/")) {
						t.Errorf("%s imports %s: the core may import only the standard library and core/", pkg, imp)
					}
					continue
				}
				if !ok {
					continue
				}
				for _, f := range r.forbid {
					if own == strings.TrimSuffix(f, "/") || strings.HasPrefix(own, f) {
						t.Errorf("%s imports %s: a %s package must not import %s", pkg, own, r.kind, f)
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d packages matched a rule; is the tree laid out as expected?", checked)
	}
}

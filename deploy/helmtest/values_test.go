package helmtest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// valuePaths lists the leaf values of v as dotted paths; list items are
// written "[]".
func valuePaths(prefix string, v any) []string {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			return []string{prefix}
		}
		var out []string
		for k, sub := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out = append(out, valuePaths(p, sub)...)
		}
		return out
	case []any:
		var out []string
		for _, item := range v {
			out = append(out, valuePaths(prefix+"[]", item)...)
		}
		if len(out) == 0 {
			out = []string{prefix}
		}
		return out
	}
	return []string{prefix}
}

// documented reports whether readme describes path or a value enclosing
// it (`scheduler.resources` covers scheduler.resources.requests.cpu).
func documented(readme, path string) bool {
	for p := path; p != ""; {
		if strings.Contains(readme, "`"+p+"`") {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
	return false
}

func TestValuePaths(t *testing.T) {
	got := valuePaths("", map[string]any{
		"a": map[string]any{"b": 1, "c": map[string]any{}},
		"l": []any{map[string]any{"x": 1}},
		"e": []any{},
	})
	sort.Strings(got)
	want := []string{"a.b", "a.c", "e", "l[].x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("valuePaths = %v, want %v", got, want)
	}
	readme := "`a.b` and `l[].x`, `a`"
	for path, want := range map[string]bool{"a.b": true, "a.c.d": true, "l[].x": true, "e": false} {
		if documented(readme, path) != want {
			t.Errorf("documented(%q) = %v, want %v", path, !want, want)
		}
	}
}

// Every value in values.yaml is described in the chart's README.
func TestEveryValueIsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	paths := valuePaths("", values)
	sort.Strings(paths)
	for _, p := range paths {
		if !documented(string(readme), p) {
			t.Errorf("value %s is not described in the chart's README.md", p)
		}
	}
}

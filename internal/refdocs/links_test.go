package refdocs

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDocLinksResolve checks every relative link and #anchor in README.md
// and docs/**/*.md: the file it names exists, and the heading it names is
// in that file.
func TestDocLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			files = append(files, rel)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := BrokenLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
	if len(files) < 10 {
		t.Errorf("checked only %d files: %v", len(files), files)
	}
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"9. Operator HTTP endpoints", "9-operator-http-endpoints"},
		{"`sparrow_scheduler_*`", "sparrow_scheduler_"},
		{"Draining and rolling upgrades", "draining-and-rolling-upgrades"},
		{"What's new? (v2)", "whats-new-v2"},
		{"Late binding & probes", "late-binding--probes"},
	} {
		if got := Slug(tc.text); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestLinksAndAnchors(t *testing.T) {
	md := strings.Join([]string{
		"# Title",
		"See [a](a.md#x), ![img](img/p.svg \"t\") and `[not](code.md)`.",
		"```",
		"[nor](fenced.md)",
		"## Fenced heading is not one",
		"```",
		"[ref]: other.md#y",
		`<img src="img/q.png"> <a name="custom"></a>`,
		"## Title",
		"## [Linked](z.md) heading",
		"#not-a-heading",
		"a link [whose text",
		"wraps](w.md#z).",
	}, "\n")
	links := Links(md)
	want := []Link{{2, "a.md#x"}, {2, "img/p.svg"}, {7, "other.md#y"}, {8, "img/q.png"}, {10, "z.md"}, {13, "w.md#z"}}
	if !reflect.DeepEqual(links, want) {
		t.Errorf("Links = %v, want %v", links, want)
	}
	anchors := Anchors(md)
	wantAnchors := map[string]bool{"title": true, "title-1": true, "linked-heading": true, "custom": true}
	if !reflect.DeepEqual(anchors, wantAnchors) {
		t.Errorf("Anchors = %v, want %v", anchors, wantAnchors)
	}
}

// FuzzLinks checks the Markdown scanners never panic, and that every
// link they report is non-empty and on a line of the document.
func FuzzLinks(f *testing.F) {
	for _, s := range []string{"# A\n[b](c.md#d)", "```\n[x](y)\n```", "[r]: <t>", "## [](x)", "<a id=\"q\">"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		lines := strings.Count(md, "\n") + 1
		for _, l := range Links(md) {
			if l.Target == "" || l.Line < 1 || l.Line > lines {
				t.Errorf("Links(%q) reported %+v", md, l)
			}
		}
		Anchors(md)
	})
}

// TestBrokenLinks checks what BrokenLinks reports in a small tree.
func TestBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n## Quick start\n")
	write("docs/img/a.svg", "<svg/>")
	write("docs/a.md", strings.Join([]string{
		"# A",
		"[ok](../README.md#quick-start) [ok](img/a.svg) [ok](#a) [ok](https://example.com/x#y) [ok](img/)",
		"[gone](../README.md#compatibility)",
		"[missing](b.md)",
		"[self](#nowhere)",
		"[out](../../etc/passwd)",
	}, "\n"))
	got, err := BrokenLinks(root, []string{"README.md", filepath.Join("docs", "a.md")})
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join("docs", "a.md")
	want := []string{
		a + ":3: ../README.md#compatibility: no such anchor",
		a + ":4: b.md: no such file",
		a + ":5: #nowhere: no such anchor",
		a + ":6: ../../etc/passwd: outside the repository",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("BrokenLinks = %q, want %q", got, want)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

type result struct {
	Name string `json:"name"`
}

func (r result) WriteTable(w io.Writer) error {
	_, err := io.WriteString(w, "name\n"+r.Name+"\n")
	return err
}

type charted struct{ result }

func (charted) Chart() *plot.Chart {
	return &plot.Chart{Title: "t", Series: []plot.Series{{Name: "s", Points: []plot.Point{{X: 0, Y: 1}, {X: 1, Y: 2}}}}}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	r := result{Name: "a"}
	for _, c := range []struct {
		name     string
		r        Table
		f        Format
		plot     string
		want     string
		progress string
		wantErr  string
	}{
		{name: "table", r: r, f: TableOnly, want: "name\na\n"},
		{name: "table then JSON", r: r, f: TableThenJSON, want: "name\na\n{\"name\":\"a\"}\n"},
		{name: "JSON line", r: r, f: JSONLine, want: "{\"name\":\"a\"}\n"},
		{name: "indented JSON", r: r, f: IndentedJSON, want: "{\n  \"name\": \"a\"\n}\n"},
		{name: "plot before the JSON line", r: charted{r}, f: TableThenJSON, plot: filepath.Join(dir, "a.svg"),
			want: "name\na\n{\"name\":\"a\"}\n", progress: "plot written to " + filepath.Join(dir, "a.svg") + "\n"},
		{name: "plot with JSON instead", r: charted{r}, f: JSONLine, plot: filepath.Join(dir, "b.png"),
			want: "{\"name\":\"a\"}\n", progress: "plot written to " + filepath.Join(dir, "b.png") + "\n"},
		{name: "no chart", r: r, f: TableThenJSON, plot: filepath.Join(dir, "c.svg"), want: "name\na\n", wantErr: "no chart"},
		{name: "bad plot name", r: charted{r}, f: TableOnly, plot: filepath.Join(dir, "d.pdf"), want: "name\na\n", wantErr: ".svg or .png"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, progress bytes.Buffer
			err := Write(&out, &progress, c.r, c.f, c.plot)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want || progress.String() != c.progress {
				t.Errorf("wrote %q and %q, want %q and %q", out.String(), progress.String(), c.want, c.progress)
			}
			if c.plot != "" && c.wantErr == "" {
				if st, err := os.Stat(c.plot); err != nil || st.Size() == 0 {
					t.Errorf("plot not written: %v", err)
				}
			}
		})
	}
}

func TestIfAndPrint(t *testing.T) {
	for _, c := range []struct {
		on   bool
		want string
	}{{false, "name\na\n"}, {true, "name\na\n{\"name\":\"a\"}\n"}} {
		var out bytes.Buffer
		if err := Print(&out, result{Name: "a"}, If(c.on, TableThenJSON)); err != nil || out.String() != c.want {
			t.Errorf("--json %v: %q, %v; want %q", c.on, out.String(), err, c.want)
		}
	}
}

func TestWriteJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "r.json")
	if err := WriteJSONFile(path, result{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	var got result
	if err != nil || json.Unmarshal(b, &got) != nil || got.Name != "a" || !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("file %q, %v", b, err)
	}
}

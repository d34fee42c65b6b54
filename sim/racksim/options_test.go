package racksim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOptionsRejects: a bad experiment list or output directory fails
// before any run.
func TestOptionsRejects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Experiment: "bogus"}, "--experiment"},
		{Options{Experiment: "table2", OutDir: filepath.Join(file, "x")}, "--out-dir"},
	} {
		c.o.Base = DefaultConfig()
		if err := c.o.Run(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.o, err, c.want)
		}
	}
}

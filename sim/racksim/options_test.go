package racksim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestOptionsRejects: a bad experiment list or output directory fails
// before any run.
func TestOptionsRejects(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--experiment", "bogus"}, "--experiment"},
		{[]string{"--experiment", "table2", "--out-dir", filepath.Join(file, "x")}, "--out-dir"},
	} {
		var o Options
		fs := pflag.NewFlagSet("quincy", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

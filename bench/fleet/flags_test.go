package fleet

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The flags' defaults are a valid run, every flag has help, and each
// setting Validate refuses is named by its flag.
func TestRunConfigFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{args: nil},
		{args: []string{"--schedulers=0"}, err: "--schedulers"},
		{args: []string{"--nodes=0"}, err: "--nodes"},
		{args: []string{"--slots=0"}, err: "--slots"},
		{args: []string{"--duration=0s"}, err: "--duration"},
	} {
		var c RunConfig
		fs := pflag.NewFlagSet("fleet", pflag.ContinueOnError)
		c.RegisterFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := c.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: Validate() = %v, want %q", tc.args, err, tc.err)
		}
		fs.VisitAll(func(f *pflag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("--%s has no help", f.Name)
			}
		})
	}
}

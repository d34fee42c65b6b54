package locality

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Write prints the report as a table (or as JSON, with asJSON) on out,
// and writes the JSON as dir/locality.json and the plots beside it,
// naming each file on progress.
func (rep Report) Write(dir string, asJSON bool, out, progress io.Writer) error {
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	b = append(b, '\n')
	if asJSON {
		if _, err := out.Write(b); err != nil {
			return err
		}
	} else if err := rep.WriteTable(out); err != nil {
		return err
	}
	path := filepath.Join(dir, "locality.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "results written to %s\n", path)
	for _, c := range []struct {
		name  string
		chart *plot.Chart
	}{{"locality-fractions", rep.LocalityChart()}, {"locality-response", rep.ResponseChart()}} {
		for _, ext := range []string{"svg", "png"} {
			p := filepath.Join(dir, c.name+"."+ext)
			if err := c.chart.Save(p); err != nil {
				return err
			}
			fmt.Fprintf(progress, "plot written to %s\n", p)
		}
	}
	return nil
}

// MuteWriter drops everything written while muted (Config.Mute sets it,
// so that a fleet's teardown does not flood the logs). Safe for
// concurrent use.
type MuteWriter struct {
	W     io.Writer
	Muted atomic.Bool
}

func (m *MuteWriter) Write(p []byte) (int, error) {
	if m.Muted.Load() {
		return len(p), nil
	}
	return m.W.Write(p)
}

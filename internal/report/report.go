package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Table is a result that prints itself as a text table.
type Table interface {
	WriteTable(io.Writer) error
}

// Charted is a result that also draws itself as a plot.
type Charted interface {
	Table
	Chart() *plot.Chart
}

// Format says how a result is printed.
type Format int

const (
	// TableOnly prints the table.
	TableOnly Format = iota
	// TableThenJSON prints the table, then the result as one JSON line,
	// so that scripts read the last line.
	TableThenJSON
	// JSONLine prints the result as one JSON line instead of the table.
	JSONLine
	// IndentedJSON prints the result as indented JSON instead of the
	// table.
	IndentedJSON
)

// If is f when on (a command's --json is set), and TableOnly otherwise.
func If(on bool, f Format) Format {
	if on {
		return f
	}
	return TableOnly
}

// Print writes r to w as f says.
func Print(w io.Writer, r Table, f Format) error {
	return Write(w, nil, r, f, "")
}

// Write writes r to w as f says and, when plotPath is not empty, r's
// chart to plotPath (r must then be Charted), naming the file on
// progress. The plot is written after the table and before a trailing
// JSON line, so that the JSON stays last.
func Write(w, progress io.Writer, r Table, f Format, plotPath string) error {
	switch f {
	case JSONLine, IndentedJSON:
		if err := savePlot(progress, r, plotPath); err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		if f == IndentedJSON {
			enc.SetIndent("", "  ")
		}
		return enc.Encode(r)
	}
	if err := r.WriteTable(w); err != nil {
		return err
	}
	if err := savePlot(progress, r, plotPath); err != nil {
		return err
	}
	if f != TableThenJSON {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func savePlot(progress io.Writer, r Table, path string) error {
	if path == "" {
		return nil
	}
	c, ok := r.(Charted)
	if !ok {
		return fmt.Errorf("plot %s: this result has no chart", path)
	}
	if err := c.Chart().Save(path); err != nil {
		return err
	}
	if progress != nil {
		fmt.Fprintf(progress, "plot written to %s\n", path)
	}
	return nil
}

// WriteJSONFile writes v, indented, to path, creating its directory.
func WriteJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results dir: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package refdocs

import "github.com/spf13/cobra"

// Reference is the whole generated reference, keyed by path relative to
// the reference directory: the CLI pages of root's commands and
// metrics.md of cs.
func Reference(root *cobra.Command, cs []Collector) (map[string][]byte, error) {
	files, err := CLI(root)
	if err != nil {
		return nil, err
	}
	m, err := Metrics(cs)
	if err != nil {
		return nil, err
	}
	files["metrics.md"] = m
	return files, nil
}

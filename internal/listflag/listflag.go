// Package listflag parses the comma-separated lists the harnesses'
// commands take as flag values (loads, rates, multiples), with errors
// that name the flag.
package listflag

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Positive parses list, the value of flag, as comma-separated finite
// numbers above zero. Empty items are skipped; at least one number is
// needed.
func Positive(flag, list string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("%s: %q is not a positive number", flag, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no values", flag)
	}
	return out, nil
}

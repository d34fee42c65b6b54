package main

import (
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/weightfile"
)

// loadWeights merges --weight flags over a weights file.
var loadWeights = weightfile.Load

// reloadWeightsOnSIGHUP re-reads the weights (file and flags, as at start)
// on every SIGHUP and hands them to set, so shares change without a
// restart; a bad file keeps the old weights and says why. It returns the
// function that stops listening.
func reloadWeightsOnSIGHUP(log zerolog.Logger, file string, flags []string, set func(map[string]float64) error) (stop func()) {
	return onSIGHUP(weightfile.Reloader(log, file, flags, set))
}

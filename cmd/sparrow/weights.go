package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// parseWeight parses one "user=weight" pair.
func parseWeight(kv string) (string, float64, error) {
	user, ws, ok := strings.Cut(kv, "=")
	user, ws = strings.TrimSpace(user), strings.TrimSpace(ws)
	if !ok || user == "" {
		return "", 0, fmt.Errorf("%q: want user=weight", kv)
	}
	w, err := strconv.ParseFloat(ws, 64)
	if err != nil {
		return "", 0, fmt.Errorf("%q: weight is not a number", kv)
	}
	if err := queue.CheckWeight(w); err != nil {
		return "", 0, fmt.Errorf("%q: %w", kv, err)
	}
	return user, w, nil
}

// loadWeights merges --weight flags over a weights file, whose lines are
// "user=weight"; blank lines and lines starting with # are ignored.
func loadWeights(file string, flags []string) (map[string]float64, error) {
	out := map[string]float64{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("weights file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			user, w, err := parseWeight(text)
			if err != nil {
				return nil, fmt.Errorf("weights file %s line %d: %w", file, line, err)
			}
			out[user] = w
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("weights file %s: %w", file, err)
		}
	}
	for _, kv := range flags {
		user, w, err := parseWeight(kv)
		if err != nil {
			return nil, fmt.Errorf("--weight %w", err)
		}
		out[user] = w
	}
	return out, nil
}

// reloadWeightsOnSIGHUP re-reads the weights (file and flags, as at start)
// on every SIGHUP and hands them to set, so shares change without a
// restart; a bad file keeps the old weights and says why. It returns the
// function that stops listening.
func reloadWeightsOnSIGHUP(log zerolog.Logger, file string, flags []string, set func(map[string]float64) error) (stop func()) {
	return onSIGHUP(func() {
		w, err := loadWeights(file, flags)
		if err == nil {
			err = set(w)
		}
		if err != nil {
			log.Error().Err(err).Msg("weights not reloaded; keeping the old ones")
			return
		}
		log.Info().Int("users", len(w)).Msg("weights reloaded")
	})
}

// Package weightfile reads the fair-share weights of users that the node
// monitor's and the coordinator's --weights-file and --weight flags give:
// a file of "user=weight" lines, overridden by the flags, and reloads them
// on request (the daemons do it on SIGHUP).
package weightfile

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// parse parses one "user=weight" pair.
func parse(kv string) (string, float64, error) {
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

// Load merges the --weight flags over a weights file ("" for none),
// whose lines are "user=weight"; blank lines and lines starting with #
// are ignored. Its errors name the file's line or the flag.
func Load(file string, flags []string) (map[string]float64, error) {
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
			user, w, err := parse(text)
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
		user, w, err := parse(kv)
		if err != nil {
			return nil, fmt.Errorf("--weight %w", err)
		}
		out[user] = w
	}
	return out, nil
}

// Reloader returns a function that loads the weights again (file and
// flags, as Load) and hands them to set, so that shares change without a
// restart; when the file is bad, or set refuses them, it keeps the old
// weights and logs why.
func Reloader(log zerolog.Logger, file string, flags []string, set func(map[string]float64) error) func() {
	return func() {
		w, err := Load(file, flags)
		if err == nil {
			err = set(w)
		}
		if err != nil {
			log.Error().Err(err).Msg("weights not reloaded; keeping the old ones")
			return
		}
		log.Info().Int("users", len(w)).Msg("weights reloaded")
	}
}

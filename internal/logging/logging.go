package logging

import (
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// New returns a logger writing to w at the named level ("debug", "info",
// "warn", "error", "disabled"). Output is human-readable when w is a
// terminal and JSON otherwise, so that log shippers get structure and
// people get colour.
func New(w io.Writer, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("unknown log level %q (want trace, debug, info, warn, error or disabled)", level)
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		w = zerolog.ConsoleWriter{Out: f, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// StdLogger returns a standard-library logger whose lines become zerolog
// events on l, with component set. Lines that start with memberlist's
// "[LEVEL]" prefix keep that level; others are logged at info.
func StdLogger(l zerolog.Logger, component string) *log.Logger {
	return log.New(&stdWriter{l: l.With().Str("component", component).Logger()}, "", 0)
}

type stdWriter struct{ l zerolog.Logger }

var levelPrefixes = []struct {
	prefix string
	level  zerolog.Level
}{
	{"[DEBUG]", zerolog.DebugLevel},
	{"[INFO]", zerolog.InfoLevel},
	{"[WARN]", zerolog.WarnLevel},
	{"[ERR]", zerolog.ErrorLevel},
	{"[ERROR]", zerolog.ErrorLevel},
}

// SplitLevel splits a standard-library log line into the level its
// "[LEVEL]" prefix names (memberlist's convention: [DEBUG], [INFO], [WARN],
// [ERR], [ERROR]) and the rest, trimmed; a line without one is at info.
func SplitLevel(line string) (zerolog.Level, string) {
	msg := strings.TrimSpace(line)
	for _, lp := range levelPrefixes {
		if strings.HasPrefix(msg, lp.prefix) {
			return lp.level, strings.TrimSpace(strings.TrimPrefix(msg, lp.prefix))
		}
	}
	return zerolog.InfoLevel, msg
}

func (w *stdWriter) Write(p []byte) (int, error) {
	level, msg := SplitLevel(string(p))
	// memberlist's goroutines outlive Shutdown for a moment and report
	// their sockets closed; that is the shutdown itself, not an error.
	if strings.Contains(msg, "use of closed network connection") {
		level = zerolog.DebugLevel
	}
	w.l.WithLevel(level).Msg(msg)
	return len(p), nil
}

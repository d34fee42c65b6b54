// Package refusal is the one table of why a scheduler refuses a job:
// the scheduler builds every IncompleteRequestException with New, and
// the client library reads one back with Classify. A refusal carries its
// Kind as IncompleteRequestException.code and, when the scheduler has a
// suggestion, a retry delay as retryAfterMs; the message stays
// human-readable and keeps the original wording ("fleet saturated: …
// retry after <d>", "no live node monitor …") so that peers that read no
// code (older sparrowfleet clients, the original Java frontends) can
// still tell refusals apart by text, as Classify does when no code is
// present.
package refusal

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Kind is why a job was refused. Its values are the IDL's REFUSAL_*
// codes.
type Kind int32

// The kinds, one per REFUSAL_* code.
const (
	// Invalid: the request is malformed; sent again unchanged it is
	// refused again.
	Invalid Kind = sparrowrpc.REFUSAL_INVALID
	// Saturated: the fleet stayed full past the scheduler's hold bounds.
	Saturated Kind = sparrowrpc.REFUSAL_SATURATED
	// Draining: the scheduler is shutting down and accepts no new jobs.
	Draining Kind = sparrowrpc.REFUSAL_DRAINING
	// UnknownApp: no live node monitor hosts the job's app.
	UnknownApp Kind = sparrowrpc.REFUSAL_UNKNOWN_APP
	// Unplaceable: node monitors host the app, but none of the live ones
	// satisfies the job's constraints or preferences.
	Unplaceable Kind = sparrowrpc.REFUSAL_UNPLACEABLE
)

// names is the table of kinds: a code is known if and only if it is here.
var names = map[Kind]string{
	Invalid:     "invalid",
	Saturated:   "saturated",
	Draining:    "draining",
	UnknownApp:  "unknown app",
	Unplaceable: "unplaceable",
}

// String names the kind; an unknown code is shown as its number.
func (k Kind) String() string {
	if n, ok := names[k]; ok {
		return n
	}
	return "refusal code " + strconv.Itoa(int(k))
}

// Known reports whether k is a code of the table.
func (k Kind) Known() bool { _, ok := names[k]; return ok }

// Retryable reports whether a job refused for k may be accepted if sent
// again later unchanged.
func (k Kind) Retryable() bool { return k == Saturated || k == Draining }

// New is the refusal of kind k with the message format, args. A positive
// retryAfter is sent as the suggested delay; the message should also say
// "retry after <d>" for peers that read no code.
func New(k Kind, retryAfter time.Duration, format string, args ...any) *sparrowrpc.IncompleteRequestException {
	code := int32(k)
	e := &sparrowrpc.IncompleteRequestException{Message: fmt.Sprintf(format, args...), Code: &code}
	if retryAfter > 0 {
		ms := retryAfter.Milliseconds()
		e.RetryAfterMs = &ms
	}
	return e
}

// Texts a refusal's message contains, for peers that read no code.
const (
	SaturatedText   = "fleet saturated"
	DrainingText    = "this scheduler is shutting down"
	UnknownAppText  = "no live node monitor hosts app"
	UnplaceableText = "no live node monitor"
)

// Classify is the kind of a refusal and the retry delay it suggests (0:
// none). With a code, the code decides (an unknown code is returned as
// is, for the caller to treat as Invalid or not) and the delay is
// retryAfterMs. Without one (an older scheduler, the original Java
// one), the message decides, as ByText does.
func Classify(e *sparrowrpc.IncompleteRequestException) (Kind, time.Duration) {
	if e == nil {
		return Invalid, 0
	}
	if !e.IsSetCode() {
		return ByText(e.Message)
	}
	var after time.Duration
	if ms := e.GetRetryAfterMs(); ms > 0 && ms <= MaxRetryAfter.Milliseconds() {
		after = time.Duration(ms) * time.Millisecond
	}
	return Kind(e.GetCode()), after
}

// MaxRetryAfter bounds a suggested delay: a garbled or hostile refusal
// must not park a job for hours. A longer suggestion is ignored.
const MaxRetryAfter = 5 * time.Minute

// ByText is the kind of a refusal that carries no code, from its message,
// and the delay its last "retry after <d>" suggests (see ParseRetryAfter).
func ByText(msg string) (Kind, time.Duration) {
	after, suggested := ParseRetryAfter(msg)
	switch {
	case strings.Contains(msg, SaturatedText) || suggested:
		if strings.Contains(msg, DrainingText) {
			return Draining, after
		}
		return Saturated, after
	case strings.HasPrefix(msg, UnknownAppText):
		return UnknownApp, 0
	case strings.Contains(msg, UnplaceableText):
		return Unplaceable, 0
	default:
		return Invalid, 0
	}
}

// ParseRetryAfter finds a suggested retry delay in a refusal's message:
// the last "retry after <d>" (case-insensitive), where <d> is a Go
// duration ("2s", "250ms", "1m30s") or a plain number of seconds ("2",
// "1.5"), optionally followed by punctuation. It reports false when there
// is none, or when <d> is negative, unparsable or longer than
// MaxRetryAfter.
func ParseRetryAfter(msg string) (time.Duration, bool) {
	const key = "retry after "
	i := lastIndexFoldASCII(msg, key)
	if i < 0 {
		return 0, false
	}
	rest := msg[i+len(key):]
	end := strings.IndexFunc(rest, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ',' || r == ';' || r == ')' || r == ']' || r == '"'
	})
	if end >= 0 {
		rest = rest[:end]
	}
	rest = strings.TrimRight(rest, ".")
	if rest == "" {
		return 0, false
	}
	var d time.Duration
	if f, err := strconv.ParseFloat(rest, 64); err == nil && !strings.ContainsAny(rest, "xXpPiInN_") {
		if f < 0 || f > MaxRetryAfter.Seconds() {
			return 0, false
		}
		d = time.Duration(f * float64(time.Second))
	} else {
		pd, err := time.ParseDuration(rest)
		if err != nil {
			return 0, false
		}
		d = pd
	}
	if d < 0 || d > MaxRetryAfter {
		return 0, false
	}
	return d, true
}

// lastIndexFoldASCII is the byte index of the last occurrence of key
// (lower-case ASCII) in s, ignoring ASCII case, or -1. Not strings.ToLower
// then LastIndex: lowering some non-ASCII characters changes their length,
// so an index into the lowered copy would not be one into s.
func lastIndexFoldASCII(s, key string) int {
	for i := len(s) - len(key); i >= 0; i-- {
		match := true
		for j := 0; j < len(key); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != key[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

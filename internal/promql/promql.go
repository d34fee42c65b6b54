// Package promql reads the metric names out of PromQL expressions, so
// that a test can check that a dashboard or an alert names only metrics
// the daemons export. It is a small lexer, not a PromQL parser: it knows
// enough of the language to tell a metric name from a function, an
// aggregation, a keyword, a label name, a string, a number, a duration
// or a Grafana variable, and it accepts anything, valid PromQL or not.
package promql

import (
	"slices"
	"strings"
)

// nonMetrics are the words that are not metric names where a metric name
// could stand: PromQL's aggregations (which may take their grouping
// before their parenthesis: sum by (le) (...)), keywords and constants.
var nonMetrics = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "and": true, "or": true, "unless": true, "atan2": true, "offset": true,
	"start": true, "end": true, "inf": true, "nan": true, "Inf": true, "NaN": true,
}

// grouping are the keywords whose parenthesis lists label names.
var grouping = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// MetricNames returns the metric names expr selects, sorted, each once.
func MetricNames(expr string) []string {
	l := lexer{s: expr}
	var names []string
	for {
		tok, kind := l.next()
		switch kind {
		case tokEOF:
			slices.Sort(names)
			return slices.Compact(names)
		case tokIdent:
			switch {
			case grouping[tok]:
				if l.peek() == '(' {
					l.skipGroup('(', ')')
				}
			case nonMetrics[tok]:
			case l.peek() == '(':
				// A function call.
			default:
				names = append(names, tok)
			}
		}
	}
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokOther
)

type lexer struct {
	s string
	i int
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// peek returns the next byte that is not space, 0 at the end.
func (l *lexer) peek() byte {
	for j := l.i; j < len(l.s); j++ {
		if !strings.ContainsRune(" \t\r\n", rune(l.s[j])) {
			return l.s[j]
		}
	}
	return 0
}

// next returns the next token: an identifier that may name a metric, or
// something else (a label matcher, a range, a string, a number, a
// variable, an operator), skipped whole.
func (l *lexer) next() (string, tokKind) {
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			l.skipString(c)
			return "", tokOther
		case c == '{':
			// Label matchers: names and quoted values, no metric.
			l.skipGroup('{', '}')
			return "", tokOther
		case c == '[':
			// A range or subquery's durations.
			l.skipGroup('[', ']')
			return "", tokOther
		case c == '#':
			// A comment, to the end of the line.
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
			return "", tokOther
		case c == '$':
			// A Grafana variable: $name, ${name} or ${name:format}.
			l.i++
			if l.i < len(l.s) && l.s[l.i] == '{' {
				l.skipGroup('{', '}')
			} else {
				for l.i < len(l.s) && isIdentChar(l.s[l.i]) {
					l.i++
				}
			}
			return "", tokOther
		case '0' <= c && c <= '9' || c == '.' && l.i+1 < len(l.s) && '0' <= l.s[l.i+1] && l.s[l.i+1] <= '9':
			// A number or a duration (5m, 1h30m, 1e3, 0x1f).
			for l.i < len(l.s) && (isIdentChar(l.s[l.i]) || l.s[l.i] == '.') {
				l.i++
			}
			return "", tokOther
		case isIdentStart(c):
			j := l.i
			for l.i < len(l.s) && isIdentChar(l.s[l.i]) {
				l.i++
			}
			return l.s[j:l.i], tokIdent
		default:
			l.i++
		}
	}
	return "", tokEOF
}

// skipString skips the string starting at l.i, quoted by q; a backslash
// escapes the next byte except in a backquoted string.
func (l *lexer) skipString(q byte) {
	for l.i++; l.i < len(l.s); l.i++ {
		switch {
		case l.s[l.i] == '\\' && q != '`':
			l.i++
		case l.s[l.i] == q:
			l.i++
			return
		}
	}
}

// skipGroup skips, from the next open (after spaces), to its matching
// close, over nested groups and strings; to the end if it has none.
func (l *lexer) skipGroup(open, close byte) {
	for l.i < len(l.s) && l.s[l.i] != open {
		l.i++
	}
	depth := 0
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			l.skipString(c)
			continue
		case c == open:
			depth++
		case c == close:
			depth--
			if depth == 0 {
				l.i++
				return
			}
		}
		l.i++
	}
}

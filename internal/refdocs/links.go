package refdocs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Link is one link target in a Markdown file, with the line it is on.
type Link struct {
	Line   int
	Target string
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	htmlRef    = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// Links returns the link targets of a Markdown document, outside fenced
// code blocks and inline code: inline links and images (their text may
// span lines), reference definitions, and HTML href and src attributes.
func Links(md string) []Link {
	var prose []string
	eachLine(md, func(n int, line string, fenced bool) {
		if fenced {
			line = ""
		}
		prose = append(prose, inlineCode.ReplaceAllString(line, "``"))
	})
	text := strings.Join(prose, "\n")
	lineOf := func(offset int) int { return strings.Count(text[:offset], "\n") + 1 }
	var out []Link
	for _, m := range inlineLink.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, Link{lineOf(m[2]), text[m[2]:m[3]]})
	}
	for i, line := range prose {
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, Link{i + 1, m[1]})
		}
		for _, m := range htmlRef.FindAllStringSubmatch(line, -1) {
			out = append(out, Link{i + 1, m[1]})
		}
	}
	slices.SortStableFunc(out, func(a, b Link) int { return a.Line - b.Line })
	return out
}

// Anchors returns the fragment identifiers a Markdown document defines, as
// GitHub renders it: one per heading (its text lower-cased, punctuation
// other than '-' and '_' dropped, spaces made hyphens, and "-1", "-2"...
// appended to repeats), and one per HTML <a name> or <a id>.
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	eachProseLine(md, func(_ int, line string) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		text, ok := headingText(line)
		if !ok {
			return
		}
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	})
	return out
}

// headingText is the text of an ATX heading line ("## Text"), with inline
// links reduced to their text.
func headingText(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return "", false
	}
	level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
	if level == 0 || level > 6 {
		return "", false
	}
	rest := trimmed[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false
	}
	rest = strings.TrimRight(strings.TrimSpace(rest), "#")
	rest = inlineLink.ReplaceAllStringFunc(rest, func(l string) string {
		return l[strings.Index(l, "[")+1 : strings.Index(l, "]")]
	})
	return strings.TrimSpace(rest), true
}

// Slug is GitHub's fragment identifier for a heading's text.
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachProseLine calls f with each line (numbered from 1) outside fenced
// code blocks.
func eachProseLine(md string, f func(n int, line string)) {
	eachLine(md, func(n int, line string, fenced bool) {
		if !fenced {
			f(n, line)
		}
	})
}

// eachLine calls f with each line (numbered from 1), saying whether it is
// part of a fenced code block, fences included.
func eachLine(md string, f func(n int, line string, fenced bool)) {
	fence := ""
	for i, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			f(i+1, line, true)
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			f(i+1, line, true)
		default:
			f(i+1, line, false)
		}
	}
}

// BrokenLinks checks the relative links of the Markdown files given (paths
// relative to root): each must name a file or directory inside root, and
// an anchor must be defined by the Markdown file it points into. It
// returns one line per broken link, "file:line: target: problem".
// Links with a scheme (https:, mailto:) are not checked.
func BrokenLinks(root string, files []string) ([]string, error) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		anchors[rel] = Anchors(string(b))
		return anchors[rel], nil
	}
	var broken []string
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(b)) {
			if problem := checkLink(root, file, l.Target, anchorsOf); problem != "" {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", file, l.Line, l.Target, problem))
			}
		}
	}
	return broken, nil
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

func checkLink(root, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	if i := strings.Index(path, "?"); i >= 0 {
		path = path[:i]
	}
	rel := file
	if path != "" {
		rel = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(path) {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(rel, ".md") {
		return ""
	}
	defined, err := anchorsOf(rel)
	if err != nil {
		return err.Error()
	}
	if !defined[anchor] {
		return "no such anchor"
	}
	return ""
}

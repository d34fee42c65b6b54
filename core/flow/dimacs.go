package flow

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxDIMACSNodes bounds the node count a DIMACS header may declare, so that
// a malformed or hostile header cannot make ReadDIMACS allocate unboundedly
// before it has read the arcs that would justify the size.
const maxDIMACSNodes = 1 << 26

// ReadDIMACS reads a min-cost flow problem in DIMACS format: comment lines
// "c ...", one problem line "p min NODES ARCS", node lines "n ID SUPPLY"
// (nodes not listed have supply 0) and arc lines "a SRC DST LOW CAP COST",
// with nodes numbered from 1. Errors name the offending line.
func ReadDIMACS(r io.Reader) (*Network, error) {
	return readDIMACS(r, maxDIMACSNodes)
}

// readDIMACS is ReadDIMACS with a node limit, which the fuzz target lowers
// to keep each input cheap.
func readDIMACS(r io.Reader, maxNodes int) (*Network, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var g *Network
	wantArcs := 0
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("dimacs line %d: %s", line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] == "c" {
			continue
		}
		switch f[0] {
		case "p":
			if g != nil {
				return nil, bad("second problem line")
			}
			if len(f) != 4 || f[1] != "min" {
				return nil, bad("want \"p min NODES ARCS\", got %q", sc.Text())
			}
			n, err1 := strconv.Atoi(f[2])
			m, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || n < 0 || m < 0 {
				return nil, bad("node and arc counts must be non-negative integers, got %q %q", f[2], f[3])
			}
			if n > maxNodes {
				return nil, bad("%d nodes is more than the reader's limit of %d", n, maxNodes)
			}
			g = New(n)
			g.arcs = make([]Arc, 0, min(m, 1<<20))
			wantArcs = m
		case "n":
			if g == nil {
				return nil, bad("node line before the problem line")
			}
			if len(f) != 3 {
				return nil, bad("want \"n ID SUPPLY\", got %q", sc.Text())
			}
			v, err := node(f[1], g)
			if err != nil {
				return nil, bad("%v", err)
			}
			s, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, bad("supply %q is not an int64", f[2])
			}
			g.supply[v] = s
		case "a":
			if g == nil {
				return nil, bad("arc line before the problem line")
			}
			if len(f) != 6 {
				return nil, bad("want \"a SRC DST LOW CAP COST\", got %q", sc.Text())
			}
			if len(g.arcs) >= wantArcs {
				return nil, bad("more arcs than the %d the problem line declares", wantArcs)
			}
			u, err := node(f[1], g)
			if err != nil {
				return nil, bad("source: %v", err)
			}
			v, err := node(f[2], g)
			if err != nil {
				return nil, bad("destination: %v", err)
			}
			var num [3]int64
			for k, name := range []string{"lower bound", "capacity", "cost"} {
				num[k], err = strconv.ParseInt(f[3+k], 10, 64)
				if err != nil {
					return nil, bad("%s %q is not an int64", name, f[3+k])
				}
			}
			if num[0] > num[1] {
				return nil, bad("lower bound %d above capacity %d", num[0], num[1])
			}
			g.arcs = append(g.arcs, Arc{From: u, To: v, Lower: num[0], Upper: num[1], Cost: num[2]})
		default:
			return nil, bad("unknown line type %q (want c, p, n or a)", f[0])
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("dimacs line %d: line longer than 1 MiB", line+1)
		}
		return nil, fmt.Errorf("dimacs: reading: %w", err)
	}
	if g == nil {
		return nil, errors.New("dimacs: no problem line (\"p min NODES ARCS\")")
	}
	if len(g.arcs) != wantArcs {
		return nil, fmt.Errorf("dimacs: problem line declares %d arcs, file has %d", wantArcs, len(g.arcs))
	}
	return g, nil
}

// node parses a 1-based DIMACS node ID into a 0-based index of g.
func node(s string, g *Network) (int, error) {
	id, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("node ID %q is not an integer", s)
	}
	if id < 1 || id > len(g.supply) {
		return 0, fmt.Errorf("node ID %d out of range 1..%d", id, len(g.supply))
	}
	return id - 1, nil
}

// WriteDIMACS writes g as a DIMACS min-cost flow problem, nodes numbered
// from 1, listing only nodes of non-zero supply.
func WriteDIMACS(w io.Writer, g *Network) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "c written by sparrow core/flow\np min %d %d\n", len(g.supply), len(g.arcs))
	for v, s := range g.supply {
		if s != 0 {
			fmt.Fprintf(bw, "n %d %d\n", v+1, s)
		}
	}
	for _, a := range g.arcs {
		fmt.Fprintf(bw, "a %d %d %d %d %d\n", a.From+1, a.To+1, a.Lower, a.Upper, a.Cost)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing dimacs: %w", err)
	}
	return nil
}

// WriteSolution writes s in the DIMACS solution format: "s COST", then
// "f SRC DST FLOW" for every arc of non-zero flow, nodes numbered from 1.
func WriteSolution(w io.Writer, g *Network, s Solution) error {
	if len(s.Flow) != len(g.arcs) {
		return fmt.Errorf("writing solution: %d flows for %d arcs", len(s.Flow), len(g.arcs))
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "s %d\n", s.Cost)
	for i, a := range g.arcs {
		if s.Flow[i] != 0 {
			fmt.Fprintf(bw, "f %d %d %d\n", a.From+1, a.To+1, s.Flow[i])
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing solution: %w", err)
	}
	return nil
}

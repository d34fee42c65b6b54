package perfmodel

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Trace is a task's reference run sampled over time (§3.2, §3.3). Every
// column but Threads is cumulative since the task started, so phase
// boundaries show as changes of slope.
type Trace struct {
	// T is the sample time in seconds since the task started, increasing.
	T []float64
	// CPU is cumulative CPU seconds used by the task.
	CPU []float64
	// Threads is the average number of runnable threads over the interval
	// that ends at each sample (the first sample's value is unused).
	Threads []float64
	// Read and Write are cumulative bytes per channel: Read[c][i] is the
	// bytes read on channel c up to sample i.
	Read, Write [][]float64
}

// maxTraceColumns bounds a trace's width, so a malformed header cannot make
// the parser allocate without bound.
const maxTraceColumns = 1 + 2 + 2*64

// ParseTrace reads a trace in CSV form:
//
//	# comment lines start with '#'; blank lines are skipped
//	t,cpu,threads,read0,write0,read1
//	0,0,1,0,0,0
//	0.5,0.45,1,67108864,0,0
//
// The header names the columns, in any order: t (seconds), cpu (cumulative
// CPU seconds), threads (runnable threads, averaged over the interval
// ending at the sample), and one column per channel, readN or writeN
// (cumulative bytes on read or write channel N, N from 0 with no gaps).
// Rows must have one value per column; time must increase and cumulative
// columns must not decrease. The reference run's channels are taken to be
// on the local disk.
func ParseTrace(data []byte) (Trace, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var (
		tr     Trace
		cols   []func(*Trace) *[]float64
		header bool
		line   int
	)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		if !header {
			var err error
			if cols, err = traceHeader(&tr, fields); err != nil {
				return Trace{}, fmt.Errorf("trace line %d: %w", line, err)
			}
			header = true
			continue
		}
		if len(fields) != len(cols) {
			return Trace{}, fmt.Errorf("trace line %d: %d values, header has %d columns", line, len(fields), len(cols))
		}
		for i, f := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Trace{}, fmt.Errorf("trace line %d column %d: %q is not a finite number", line, i+1, f)
			}
			p := cols[i](&tr)
			*p = append(*p, v)
		}
	}
	if err := sc.Err(); err != nil {
		return Trace{}, fmt.Errorf("trace line %d: %w", line+1, err)
	}
	if !header {
		return Trace{}, fmt.Errorf("trace: no header line")
	}
	if err := tr.Validate(); err != nil {
		return Trace{}, err
	}
	return tr, nil
}

// traceHeader maps header names to the trace's columns.
func traceHeader(tr *Trace, names []string) ([]func(*Trace) *[]float64, error) {
	if len(names) > maxTraceColumns {
		return nil, fmt.Errorf("%d columns, at most %d allowed", len(names), maxTraceColumns)
	}
	seen := map[string]bool{}
	var cols []func(*Trace) *[]float64
	nr, nw := -1, -1
	for _, raw := range names {
		name := strings.ToLower(strings.TrimSpace(raw))
		if seen[name] {
			return nil, fmt.Errorf("column %q appears twice", name)
		}
		seen[name] = true
		switch {
		case name == "t":
			cols = append(cols, func(t *Trace) *[]float64 { return &t.T })
		case name == "cpu":
			cols = append(cols, func(t *Trace) *[]float64 { return &t.CPU })
		case name == "threads":
			cols = append(cols, func(t *Trace) *[]float64 { return &t.Threads })
		case strings.HasPrefix(name, "read") || strings.HasPrefix(name, "write"):
			isRead := strings.HasPrefix(name, "read")
			num := strings.TrimPrefix(strings.TrimPrefix(name, "read"), "write")
			c, err := strconv.Atoi(num)
			if err != nil || c < 0 || c >= maxTraceColumns || num != strconv.Itoa(c) {
				return nil, fmt.Errorf("column %q: want readN or writeN with N a channel number", name)
			}
			if isRead {
				nr = max(nr, c)
				cols = append(cols, func(t *Trace) *[]float64 { return &t.Read[c] })
			} else {
				nw = max(nw, c)
				cols = append(cols, func(t *Trace) *[]float64 { return &t.Write[c] })
			}
		default:
			return nil, fmt.Errorf("unknown column %q (want t, cpu, threads, readN, writeN)", name)
		}
	}
	for _, need := range []string{"t", "cpu", "threads"} {
		if !seen[need] {
			return nil, fmt.Errorf("no %q column", need)
		}
	}
	for c := 0; c <= nr; c++ {
		if !seen["read"+strconv.Itoa(c)] {
			return nil, fmt.Errorf("channel columns skip read%d", c)
		}
	}
	for c := 0; c <= nw; c++ {
		if !seen["write"+strconv.Itoa(c)] {
			return nil, fmt.Errorf("channel columns skip write%d", c)
		}
	}
	tr.Read = make([][]float64, nr+1)
	tr.Write = make([][]float64, nw+1)
	return cols, nil
}

// Validate reports the first inconsistency that would make phases
// meaningless: too few samples, ragged columns, time not increasing, a
// cumulative column decreasing, negative values.
func (tr Trace) Validate() error {
	n := len(tr.T)
	if n < 2 {
		return fmt.Errorf("trace: %d samples, want at least 2", n)
	}
	type column struct {
		name string
		v    []float64
	}
	cols := []column{{"cpu", tr.CPU}, {"threads", tr.Threads}}
	for c, v := range tr.Read {
		cols = append(cols, column{"read" + strconv.Itoa(c), v})
	}
	for c, v := range tr.Write {
		cols = append(cols, column{"write" + strconv.Itoa(c), v})
	}
	for _, c := range cols {
		if len(c.v) != n {
			return fmt.Errorf("trace: column %s has %d samples, t has %d", c.name, len(c.v), n)
		}
	}
	for i := range n {
		if math.IsNaN(tr.T[i]) || math.IsInf(tr.T[i], 0) {
			return fmt.Errorf("trace sample %d: time %v is not finite", i+1, tr.T[i])
		}
		if i > 0 && !(tr.T[i] > tr.T[i-1]) {
			return fmt.Errorf("trace sample %d: time %v does not increase (previous %v)", i+1, tr.T[i], tr.T[i-1])
		}
		for _, c := range cols {
			if c.v[i] < 0 || math.IsNaN(c.v[i]) || math.IsInf(c.v[i], 0) {
				return fmt.Errorf("trace sample %d: %s is %v, want finite non-negative", i+1, c.name, c.v[i])
			}
			if c.name != "threads" && i > 0 && c.v[i] < c.v[i-1] {
				return fmt.Errorf("trace sample %d: cumulative %s decreases from %v to %v", i+1, c.name, c.v[i-1], c.v[i])
			}
		}
	}
	return nil
}

// CSV returns the trace in the form ParseTrace reads.
func (tr Trace) CSV() []byte {
	var b bytes.Buffer
	b.WriteString("t,cpu,threads")
	for c := range tr.Read {
		fmt.Fprintf(&b, ",read%d", c)
	}
	for c := range tr.Write {
		fmt.Fprintf(&b, ",write%d", c)
	}
	b.WriteByte('\n')
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i := range tr.T {
		b.WriteString(f(tr.T[i]) + "," + f(tr.CPU[i]) + "," + f(tr.Threads[i]))
		for _, v := range tr.Read {
			b.WriteString("," + f(v[i]))
		}
		for _, v := range tr.Write {
			b.WriteString("," + f(v[i]))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

package jobtrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// MaxTasks bounds a job's task count, so that a corrupt count cannot make
// the reader allocate without bound.
const MaxTasks = 1 << 24

// meanTolerance is the relative difference allowed between a line's
// recorded mean and the mean of its durations (the files print about ten
// significant digits).
const meanTolerance = 1e-6

// Job is one line of a trace.
type Job struct {
	// Line is the job's line number in the file, from 1.
	Line int
	// Submit is the job's arrival, in seconds from the trace's origin.
	Submit float64
	// Durations holds each task's run time in seconds; len(Durations) is
	// the job's task count. It belongs to the caller.
	Durations []float64
}

// Mean returns the job's mean task duration, in seconds.
func (j Job) Mean() float64 { return j.Work() / float64(len(j.Durations)) }

// Work returns the sum of the job's task durations, in seconds.
func (j Job) Work() float64 {
	s := 0.0
	for _, d := range j.Durations {
		s += d
	}
	return s
}

// Longest returns the job's longest task duration, in seconds: its
// response time if no task waited.
func (j Job) Longest() float64 {
	m := 0.0
	for _, d := range j.Durations {
		m = max(m, d)
	}
	return m
}

// ParseError is a malformed line: File and Line locate it, Field names the
// field (submit_s, n_tasks, mean_task_s, d_<i>, or "line" for the line as
// a whole).
type ParseError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: field %s: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Reader streams the jobs of a trace. It is not safe for concurrent use.
type Reader struct {
	r        *bufio.Reader
	name     string
	line     int
	buf      []byte
	last     float64 // previous job's submit time
	seen     bool    // a job has been returned
	err      error   // sticky error
	fieldBuf [][]byte
}

// NewReader returns a Reader of the trace r; name (usually the file's
// path) is used in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), name: name}
}

// Line returns the number of the last line read.
func (r *Reader) Line() int { return r.line }

// Next returns the next job, io.EOF after the last, or a *ParseError for a
// malformed line. Blank lines are skipped. After an error every call
// returns the same error.
func (r *Reader) Next() (Job, error) {
	if r.err != nil {
		return Job{}, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
			}
			r.err = err
			return Job{}, err
		}
		r.line++
		r.fieldBuf = splitFields(r.fieldBuf[:0], line)
		if len(r.fieldBuf) == 0 {
			continue
		}
		j, err := r.parse(r.fieldBuf)
		if err != nil {
			r.err = err
			return Job{}, err
		}
		return j, nil
	}
}

// readLine returns the next line without its end of line ("\n" or
// "\r\n"), valid until the next call; io.EOF when there is none.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		frag, err := r.r.ReadSlice('\n')
		r.buf = append(r.buf, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(r.buf) > 0 {
			break
		}
		if err != nil {
			return nil, err
		}
		break
	}
	b := bytes.TrimSuffix(r.buf, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r")), nil
}

// splitFields appends the space- or tab-separated fields of line to dst.
func splitFields(dst [][]byte, line []byte) [][]byte {
	i := 0
	for i < len(line) {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}

func (r *Reader) fail(field string, err error) error {
	return &ParseError{File: r.name, Line: r.line, Field: field, Err: err}
}

// number parses a finite float field that is at least lo.
func (r *Reader) number(field string, b []byte, lo float64) (float64, error) {
	v, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil:
		return 0, r.fail(field, fmt.Errorf("%q is not a number", b))
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, r.fail(field, fmt.Errorf("%q is not finite", b))
	case v < lo:
		return 0, r.fail(field, fmt.Errorf("%v is below %v", v, lo))
	}
	return v, nil
}

func (r *Reader) parse(f [][]byte) (Job, error) {
	if len(f) < 3 {
		names := []string{"submit_s", "n_tasks", "mean_task_s"}
		return Job{}, r.fail(names[len(f)], errors.New("missing"))
	}
	submit, err := r.number("submit_s", f[0], math.Inf(-1))
	if err != nil {
		return Job{}, err
	}
	if r.seen && submit < r.last {
		return Job{}, r.fail("submit_s", fmt.Errorf("%v is before the previous job's %v (lines must be in arrival order)", submit, r.last))
	}
	n, err := strconv.Atoi(string(f[1]))
	switch {
	case err != nil:
		return Job{}, r.fail("n_tasks", fmt.Errorf("%q is not a whole number", f[1]))
	case n < 1 || n > MaxTasks:
		return Job{}, r.fail("n_tasks", fmt.Errorf("%d is not in [1, %d]", n, MaxTasks))
	}
	mean, err := r.number("mean_task_s", f[2], 0)
	if err != nil {
		return Job{}, err
	}
	switch got := len(f) - 3; {
	case got < n:
		return Job{}, r.fail(fmt.Sprintf("d_%d", got+1), fmt.Errorf("missing: n_tasks is %d but the line has %d durations", n, got))
	case got > n:
		return Job{}, r.fail(fmt.Sprintf("d_%d", n+1), fmt.Errorf("unexpected: n_tasks is %d but the line has %d durations", n, got))
	}
	j := Job{Line: r.line, Submit: submit, Durations: make([]float64, n)}
	for i := range j.Durations {
		if j.Durations[i], err = r.number(fmt.Sprintf("d_%d", i+1), f[3+i], 0); err != nil {
			return Job{}, err
		}
	}
	if m := j.Mean(); math.Abs(m-mean) > meanTolerance*max(m, mean)+1e-9 {
		return Job{}, r.fail("mean_task_s", fmt.Errorf("%v is not the mean of the durations (%v)", mean, m))
	}
	r.last, r.seen = submit, true
	return j, nil
}

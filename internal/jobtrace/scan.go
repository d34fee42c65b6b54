package jobtrace

import "io"

// Totals describes a whole trace.
type Totals struct {
	Jobs  int     `json:"jobs"`
	Tasks int64   `json:"tasks"`
	Work  float64 `json:"work_s"` // task-seconds
	First float64 `json:"first_s"`
	Last  float64 `json:"last_s"` // last arrival
}

// Span returns the time from the first arrival to the last, in seconds.
func (t Totals) Span() float64 { return t.Last - t.First }

// Load returns the trace's own load on slots task slots: the task-seconds
// over the slot-seconds of its arrival span (0 for a span of zero).
func (t Totals) Load(slots int) float64 {
	if t.Span() <= 0 || slots <= 0 {
		return 0
	}
	return t.Work / (t.Span() * float64(slots))
}

// Scan reads a whole trace, one job at a time, and totals it.
func Scan(r *Reader) (Totals, error) {
	var t Totals
	for {
		j, err := r.Next()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return t, err
		}
		if t.Jobs == 0 {
			t.First = j.Submit
		}
		t.Jobs++
		t.Tasks += int64(len(j.Durations))
		t.Work += j.Work()
		t.Last = j.Submit
	}
}

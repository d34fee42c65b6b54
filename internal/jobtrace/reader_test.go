package jobtrace

import (
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

func readAll(t testing.TB, text string) ([]Job, error) {
	t.Helper()
	r := NewReader(strings.NewReader(text), "t.tr")
	var jobs []Job
	for {
		j, err := r.Next()
		if err == io.EOF {
			return jobs, nil
		}
		if err != nil {
			return jobs, err
		}
		jobs = append(jobs, j)
	}
}

func TestReaderValid(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		lines []int
		durs  [][]float64
	}{
		{"empty", "", nil, nil},
		{"one job", "10 2 1.5 1 2\n", []int{1}, [][]float64{{1, 2}}},
		{"no final newline", "10 1 3 3", []int{1}, [][]float64{{3}}},
		{"crlf and runs of spaces", "0  2 2.5  2  3 \r\n5\t1\t4\t4\r\n", []int{1, 2}, [][]float64{{2, 3}, {4}}},
		{"blank lines skipped", "\n1 1 1 1\n\n   \n2 1 2 2\n", []int{2, 5}, [][]float64{{1}, {2}}},
		{"equal arrivals", "3 1 1 1\n3 1 2 2\n", []int{1, 2}, [][]float64{{1}, {2}}},
		{"float submit", "1406471.0 1 43975.127863 43975.127863\n", []int{1}, [][]float64{{43975.127863}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := readAll(t, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != len(tc.lines) {
				t.Fatalf("got %d jobs, want %d", len(jobs), len(tc.lines))
			}
			for i, j := range jobs {
				if j.Line != tc.lines[i] {
					t.Errorf("job %d: line %d, want %d", i, j.Line, tc.lines[i])
				}
				if len(j.Durations) != len(tc.durs[i]) {
					t.Fatalf("job %d: durations %v, want %v", i, j.Durations, tc.durs[i])
				}
				for k, d := range tc.durs[i] {
					if j.Durations[k] != d {
						t.Errorf("job %d: durations %v, want %v", i, j.Durations, tc.durs[i])
					}
				}
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		line  int
		field string
	}{
		{"submit not a number", "x 1 1 1\n", 1, "submit_s"},
		{"submit infinite", "inf 1 1 1\n", 1, "submit_s"},
		{"out of order", "5 1 1 1\n4 1 1 1\n", 2, "submit_s"},
		{"count missing", "5\n", 1, "n_tasks"},
		{"count not whole", "5 1.5 1 1\n", 1, "n_tasks"},
		{"count zero", "5 0 0\n", 1, "n_tasks"},
		{"count negative", "5 -2 1 1 1\n", 1, "n_tasks"},
		{"mean missing", "5 1\n", 1, "mean_task_s"},
		{"mean wrong", "1 1 1 1\n5 2 3 1 2\n", 2, "mean_task_s"},
		{"mean NaN", "5 1 NaN 1\n", 1, "mean_task_s"},
		{"too few durations", "5 3 1 1 1\n", 1, "d_3"},
		{"too many durations", "5 1 1 1 1\n", 1, "d_2"},
		{"negative duration", "5 2 0 1 -1\n", 1, "d_2"},
		{"duration not a number", "1 1 1 1\n\n5 2 1 1 y\n", 3, "d_2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.text)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if pe.File != "t.tr" || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("got %s:%d field %s, want t.tr:%d field %s (%v)", pe.File, pe.Line, pe.Field, tc.line, tc.field, err)
			}
			if msg := err.Error(); !strings.Contains(msg, "t.tr:") || !strings.Contains(msg, tc.field) {
				t.Errorf("message %q does not name the file and field", msg)
			}
		})
	}
}

func TestReaderStickyError(t *testing.T) {
	r := NewReader(strings.NewReader("5 1 x 1\n6 1 1 1\n"), "t.tr")
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("errors %v then %v, want the same error twice", err1, err2)
	}
}

func TestReaderLongLine(t *testing.T) {
	const n = 100_000 // far beyond the bufio buffer
	var b strings.Builder
	b.WriteString("0 100000 2.5")
	for range n {
		b.WriteString(" 2.5")
	}
	jobs, err := readAll(t, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || len(jobs[0].Durations) != n || jobs[0].Mean() != 2.5 {
		t.Fatalf("got %d jobs", len(jobs))
	}
}

// TestGoogleSlice checks the committed slice against totals computed
// independently (awk over the file).
func TestGoogleSlice(t *testing.T) {
	f, err := os.Open("testdata/goog_slice.tr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tot, err := Scan(NewReader(f, "testdata/goog_slice.tr"))
	if err != nil {
		t.Fatal(err)
	}
	if tot.Jobs != 200 || tot.Tasks != 23229 {
		t.Fatalf("totals %+v, want 200 jobs and 23229 tasks", tot)
	}
	if tot.Span() <= 0 || tot.Work <= 0 || math.IsNaN(tot.Load(100)) {
		t.Fatalf("totals %+v", tot)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("10 2 1.5 1 2\n11 1 3 3\r\n"))
	f.Add([]byte("1 1 1 1\n\n5 2 1 1 y\n"))
	f.Add([]byte("5 3 1 1 1"))
	f.Add([]byte("0 1 0 0\n0 1 1e308 1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(strings.NewReader(string(data)), "fuzz.tr")
		prev := math.Inf(-1)
		for {
			j, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *ParseError", err)
				}
				if pe.Line < 1 || pe.File != "fuzz.tr" || pe.Field == "" {
					t.Fatalf("error %+v does not locate the problem", pe)
				}
				return
			}
			if len(j.Durations) < 1 || j.Submit < prev {
				t.Fatalf("accepted job %+v after submit %v", j, prev)
			}
			for _, d := range j.Durations {
				if d < 0 || math.IsNaN(d) || math.IsInf(d, 0) {
					t.Fatalf("accepted duration %v", d)
				}
			}
			prev = j.Submit
		}
	})
}

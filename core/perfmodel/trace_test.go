package perfmodel

import (
	"strings"
	"testing"
)

func TestParseTrace(t *testing.T) {
	good := "# Select on T5400\n\nt,cpu,threads,read0,write0\n0,0,1,0,0\n0.5,0.4,1,1000,0\n1,0.5,1,1000,500\n"
	tr, err := ParseTrace([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.T) != 3 || tr.Read[0][1] != 1000 || tr.Write[0][2] != 500 {
		t.Errorf("parsed %+v", tr)
	}
	// Columns in any order.
	if tr, err := ParseTrace([]byte("threads,t,cpu\n1,0,0\n1,1,1\n")); err != nil || tr.CPU[1] != 1 {
		t.Errorf("reordered header: %+v, %v", tr, err)
	}
	bad := []struct{ name, in, want string }{
		{"empty", "", "no header"},
		{"only comments", "# x\n", "no header"},
		{"unknown column", "t,cpu,threads,disk\n", `unknown column "disk"`},
		{"duplicate", "t,cpu,threads,t\n", "appears twice"},
		{"missing cpu", "t,threads\n0,1\n1,1\n", `no "cpu" column`},
		{"channel gap", "t,cpu,threads,read1\n", "skip read0"},
		{"bad channel", "t,cpu,threads,read01\n", "channel number"},
		{"ragged", "t,cpu,threads\n0,0,1\n1,1\n", "2 values, header has 3"},
		{"not a number", "t,cpu,threads\n0,x,1\n", "not a finite number"},
		{"infinite", "t,cpu,threads\n0,Inf,1\n", "not a finite number"},
		{"one sample", "t,cpu,threads\n0,0,1\n", "at least 2"},
		{"time backwards", "t,cpu,threads\n1,0,1\n0.5,0,1\n", "does not increase"},
		{"cpu decreasing", "t,cpu,threads\n0,2,1\n1,1,1\n", "cumulative cpu decreases"},
		{"negative bytes", "t,cpu,threads,read0\n0,0,1,-5\n1,0,1,0\n", "read0 is -5"},
		{"too wide", "t,cpu,threads" + strings.Repeat(",read0", 200) + "\n", "columns, at most"},
	}
	for _, c := range bad {
		_, err := ParseTrace([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// FuzzParseTrace feeds arbitrary bytes to the trace parser and the model
// builder: either a clear error or a valid model, never a panic or a hang.
func FuzzParseTrace(f *testing.F) {
	f.Add([]byte("t,cpu,threads,read0,write0\n0,0,1,0,0\n0.5,0.4,1,1000,0\n1,0.5,1,1000,500\n"))
	f.Add([]byte("t,cpu,threads\n0,0,1\n1,1,2\n2,1,0\n"))
	f.Add(selectTrace(0).CSV())
	f.Add([]byte("t,cpu,threads,read0\n0,0,1,0\n1e308,1e308,1e308,1e308\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTrace(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("parsed trace does not validate: %v", err)
		}
		m, err := Build("fuzz", selectRef, tr, BuildOptions{})
		if err != nil {
			return
		}
		if _, err := m.Predict([]Machine{selectRef}, Binding{}); err != nil {
			t.Fatalf("built model cannot predict: %v", err)
		}
	})
}

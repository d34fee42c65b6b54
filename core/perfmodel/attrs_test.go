package perfmodel

import (
	"strings"
	"testing"
)

func TestProfileRoundTrip(t *testing.T) {
	for _, m := range []Machine{
		{Name: "t5400", Cores: 8, GHz: 2.5, DiskRead: 140 * MB, DiskWrite: 100 * MB, Net: 119 * MB},
		{Name: "tiny", Cores: 1, GHz: 0.8, DiskRead: 12.5 * MB, DiskWrite: 3.25 * MB, Net: 0.5 * MB},
	} {
		s := FormatProfile(m)
		if len(s) > 128 {
			t.Errorf("%s: %q is %d bytes; gossip metadata has room for little", m.Name, s, len(s))
		}
		got, err := ParseProfile(m.Name, s)
		if err != nil {
			t.Fatalf("%s: ParseProfile(%q): %v", m.Name, s, err)
		}
		if got != m {
			t.Errorf("%s: round trip of %q gave %+v, want %+v", m.Name, s, got, m)
		}
	}
}

func TestParseProfileErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cores=8,ghz=2.5,read=140,write=100", `lacks "net"`},
		{"cores=8,ghz=2.5,read=140,write=100,net=1,net=2", `"net" given twice`},
		{"cores=0,ghz=2.5,read=140,write=100,net=1", "profile cores"},
		{"cores=8,ghz=-1,read=140,write=100,net=1", "profile ghz"},
		{"cores=8,ghz=2,read=inf,write=100,net=1", "profile read"},
		{"cores=8,ghz=2,read=1,write=100,net=1,gpu=1", `unknown profile field "gpu"`},
		{"cores8,ghz=2", "want key=value"},
		{strings.Repeat("x", 300), "at most 256"},
	} {
		_, err := ParseProfile("m", tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseProfile(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// FuzzParseProfile feeds arbitrary attribute values to the parser: an
// error or a valid machine whose encoding parses back to itself.
func FuzzParseProfile(f *testing.F) {
	f.Add("cores=8,ghz=2.5,read=140,write=100,net=119")
	f.Add("cores=1,ghz=1e-300,read=1e300,write=1,net=1")
	f.Add("=,=,")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseProfile("m", s)
		if err != nil {
			return
		}
		if verr := m.Validate(); verr != nil {
			t.Fatalf("ParseProfile(%q) accepted an invalid machine: %v", s, verr)
		}
		if _, err := ParseProfile("m", FormatProfile(m)); err != nil {
			t.Fatalf("FormatProfile(%+v) = %q does not parse: %v", m, FormatProfile(m), err)
		}
	})
}

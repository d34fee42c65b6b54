package calibrate

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

func TestApplyProfile(t *testing.T) {
	written := "cores=8,ghz=2.5,read=500,write=400,net=125"
	for _, c := range []struct {
		name  string
		spec  string
		attrs map[string]string
		want  string // the profile attribute, or "" for none
		err   string
	}{
		{name: "no profile", spec: "", attrs: map[string]string{"rack": "r1"}},
		{name: "written", spec: written, attrs: map[string]string{"rack": "r1"}, want: written},
		{name: "written, no attrs", spec: written, want: written},
		{name: "bad text", spec: "cores=x", err: "--profile:"},
		{name: "given twice", spec: written, attrs: map[string]string{perfmodel.ProfileAttr: written}, err: "both set the profile"},
		{name: "calibrate in a missing dir", spec: "calibrate", err: "--profile calibrate:"},
	} {
		dir := "/nonexistent/dir"
		got, err := ApplyProfile(zerolog.Nop(), c.spec, dir, 125, "nm1", c.attrs)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || got[perfmodel.ProfileAttr] != c.want {
			t.Errorf("%s: %v, %v; want profile %q", c.name, got, err, c.want)
		}
		if c.attrs != nil && got["rack"] != "r1" {
			t.Errorf("%s: other attributes lost: %v", c.name, got)
		}
	}
}

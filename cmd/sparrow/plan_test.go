package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The problem loading and planning are tested in bench/planreport.

func TestPlanFlagsHaveHelp(t *testing.T) {
	n := 0
	newPlanCmd().Flags().VisitAll(func(f *pflag.Flag) {
		n++
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("plan --%s has no help", f.Name)
		}
	})
	if n < 7 {
		t.Errorf("plan has %d flags, want at least 7", n)
	}
}

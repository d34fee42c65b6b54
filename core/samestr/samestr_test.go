package samestr

import (
	"strings"
	"testing"
)

func TestEqualIsStringEquality(t *testing.T) {
	shared := "scheduler:0"
	tests := []struct {
		name string
		a, b string
	}{
		{"both empty", "", ""},
		{"empty and not", "", "a"},
		{"same bytes", shared, shared},
		{"equal copies", shared, strings.Clone(shared)},
		{"same length, different", "abc", "abd"},
		{"different length", "abc", "ab"},
		{"prefix of the same bytes", shared, shared[:4]},
		{"same bytes from different offsets", shared[1:3], shared[2:4]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := Equal(tc.a, tc.b), tc.a == tc.b; got != want {
				t.Errorf("Equal(%q, %q) = %v, want %v", tc.a, tc.b, got, want)
			}
			if got, want := Equal(tc.b, tc.a), tc.a == tc.b; got != want {
				t.Errorf("Equal(%q, %q) = %v, want %v", tc.b, tc.a, got, want)
			}
		})
	}
}

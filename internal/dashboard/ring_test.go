package dashboard

import (
	"slices"
	"testing"
)

func TestRing(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		push     []int
		want     []int
	}{
		{"empty", 3, nil, nil},
		{"under capacity", 3, []int{1, 2}, []int{1, 2}},
		{"at capacity", 3, []int{1, 2, 3}, []int{1, 2, 3}},
		{"wraps, dropping the oldest", 3, []int{1, 2, 3, 4, 5}, []int{3, 4, 5}},
		{"wraps many times", 2, []int{1, 2, 3, 4, 5, 6, 7}, []int{6, 7}},
		{"zero capacity holds nothing", 0, []int{1, 2}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRing[int](tc.capacity)
			for _, v := range tc.push {
				r.push(v)
			}
			var got []int
			for i := range r.len() {
				got = append(got, r.at(i))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("held %v, want %v", got, tc.want)
			}
			last, ok := r.last()
			if ok != (len(tc.want) > 0) || (ok && last != tc.want[len(tc.want)-1]) {
				t.Fatalf("last() = %v, %v; want the newest of %v", last, ok, tc.want)
			}
		})
	}
}

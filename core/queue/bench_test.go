package queue

import (
	"fmt"
	"testing"
)

// benchReservations prebuilds reservations so the benchmarks measure the
// queue, not string formatting.
func benchReservations(users, perUser int) []Reservation {
	rs := make([]Reservation, 0, users*perUser)
	for i := range perUser {
		for u := range users {
			rs = append(rs, Reservation{
				RequestID: fmt.Sprintf("req-%d-%d", u, i%8),
				App:       fmt.Sprintf("app-%d", u%4),
				User:      fmt.Sprintf("user-%d", u),
				Scheduler: "sched:20503",
			})
		}
	}
	return rs
}

// benchPushPop keeps a steady backlog and measures one Push plus one Pop,
// the node monitor's hot path (a probe arrives, a slot frees up).
func benchPushPop(b *testing.B, d Discipline, rs []Reservation) {
	for _, r := range rs {
		d.Push(r)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, _ := d.Pop()
		d.Push(r)
	}
	if d.Len() != len(rs) {
		b.Fatalf("Len = %d, want %d", d.Len(), len(rs))
	}
}

func BenchmarkFIFOPushPop(b *testing.B) {
	benchPushPop(b, NewFIFO(), benchReservations(64, 16))
}

func BenchmarkFairPushPop(b *testing.B) {
	for _, users := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
			weights := map[string]float64{}
			for u := range users {
				weights[fmt.Sprintf("user-%d", u)] = float64(1 + u%5)
			}
			f, err := NewFair(1, weights)
			if err != nil {
				b.Fatal(err)
			}
			benchPushPop(b, f, benchReservations(users, 16))
		})
	}
}

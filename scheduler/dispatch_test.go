package scheduler

import (
	"testing"
	"testing/synctest"
)

// SubmitJob's decision returns what is to be sent and sends nothing
// itself: one batch per node monitor, d·m reservations in all, each task
// offered at most once; sendReservations then puts exactly those on the
// wire (node monitors taking the offers, so that no backup follows).
func TestSubmitDecisionReturnsTheBatches(t *testing.T) {
	tests := []struct {
		name      string
		noOffers  bool
		tasks     int
		ratio     float64
		wantTotal int
		wantOffer int // batches carrying an offer
	}{
		{"plain reservations", true, 3, 2, 6, 0},
		{"offers with the first reservations, backups kept back", false, 3, 2, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 10, Config{NoOffers: tt.noOffers})
				for _, nm := range c.nms {
					nm.takeOffers.Store(true) // an offer declined would send the backups
				}
				j, err := ParseRequest(job("d", tt.ratio, freeTasks(tt.tasks)...), Ratios{Default: 2, Constrained: 2})
				if err != nil {
					t.Fatal(err)
				}
				cands, err := c.s.pipe.feasible(j.App, j.Constraints)
				if err != nil {
					t.Fatal(err)
				}
				c.s.mu.Lock()
				sub, err := c.s.submitLocked(j, 0, "d", cands)
				c.s.mu.Unlock()
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if got := c.attempts("d"); got != 0 {
					t.Fatalf("the decision sent %d reservations itself", got)
				}
				total, offered := 0, map[int]bool{}
				nodes := map[string]bool{}
				for _, b := range sub.sends {
					if b.r != sub.r || nodes[b.probe.Node.Addr] {
						t.Fatalf("batch %+v: another request's, or a second batch to its node", b)
					}
					nodes[b.probe.Node.Addr] = true
					total += b.probe.Count
					if b.offer >= 0 {
						if offered[b.offer] {
							t.Fatalf("task %d offered twice", b.offer)
						}
						offered[b.offer] = true
					}
				}
				if total != tt.wantTotal || len(offered) != tt.wantOffer {
					t.Fatalf("%d reservations, %d offers; want %d, %d", total, len(offered), tt.wantTotal, tt.wantOffer)
				}
				c.s.sendReservations(sub.sends)
				synctest.Wait()
				sent := 0
				for _, nm := range c.nms {
					sent += nm.attemptsFor("d")
					if nm.attemptsFor("d") > 0 && !nodes[nm.addr] {
						t.Fatalf("%s got reservations no batch named", nm.name)
					}
				}
				if sent != tt.wantTotal {
					t.Fatalf("%d reservations sent, want %d", sent, tt.wantTotal)
				}
			})
		})
	}
}

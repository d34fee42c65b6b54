package scheduler

import (
	"testing"
	"testing/synctest"
)

// SubmitJob's decision returns what is to be sent and sends nothing
// itself: one batch per node monitor, d·m reservations in all (those sent
// and the backups kept back), each task offered at most once, and as many
// to one node monitor as it said it had free slots; sendReservations then
// puts exactly those on the wire (node monitors taking the offers, so
// that no backup follows).
func TestSubmitDecisionReturnsTheBatches(t *testing.T) {
	tests := []struct {
		name      string
		noOffers  bool
		tasks     int
		ratio     float64
		free      int // free slots every node monitor said it had; 0: not said
		wantTotal int
		wantOffer int // tasks offered
		wantBatch int // batches carrying an offer
	}{
		{"plain reservations", true, 3, 2, 0, 6, 0, 0},
		{"offers with the first reservations, backups kept back", false, 3, 2, 0, 3, 3, 3},
		{"several offers to a node monitor with free slots", false, 3, 2, 8, 3, 3, 1},
		{"offers up to each node monitor's free slots", false, 5, 2, 2, 5, 5, 3},
		{"one free slot said", false, 3, 2, 1, 3, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 10, Config{NoOffers: tt.noOffers})
				for _, nm := range c.nms {
					nm.takeOffers.Store(true) // an offer declined would send the backups
					if tt.free > 0 {
						c.s.mu.Lock()
						c.s.offers.setFree(nm.addr, tt.free)
						c.s.mu.Unlock()
					}
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
				total, offered, batches := 0, map[int]bool{}, 0
				nodes := map[string]bool{}
				for _, b := range sub.sends {
					if b.r != sub.r || nodes[b.probe.Node.Addr] {
						t.Fatalf("batch %+v: another request's, or a second batch to its node", b)
					}
					nodes[b.probe.Node.Addr] = true
					total += b.probe.Count
					if len(b.offers) > b.probe.Count {
						t.Fatalf("batch %+v offers more tasks than it has reservations", b)
					}
					if len(b.offers) > 0 {
						batches++
					}
					for _, i := range b.offers {
						if offered[i] {
							t.Fatalf("task %d offered twice", i)
						}
						offered[i] = true
					}
				}
				if total != tt.wantTotal || len(offered) != tt.wantOffer || batches != tt.wantBatch {
					t.Fatalf("%d reservations, %d offers in %d batches; want %d, %d, %d",
						total, len(offered), batches, tt.wantTotal, tt.wantOffer, tt.wantBatch)
				}
				backups := 0
				for _, p := range sub.r.backup {
					backups += p.Count
				}
				if want := int(tt.ratio * float64(tt.tasks)); total+backups != want {
					t.Fatalf("%d reservations sent and %d kept back, want %d in all", total, backups, want)
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

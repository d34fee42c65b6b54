package coordinator

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
)

// TestRepliesCarryEachNodesUsers: every reporting node gets a reply, in
// packets, holding exactly the users of its report with the solve's
// running counts and its type's weights (quantized), as a node's
// assembler installs it.
func TestRepliesCarryEachNodesUsers(t *testing.T) {
	reports := reportsAt(60, 3, 400, 7)
	// One node with many users, so that its reply needs several parts.
	for i := range 300 {
		reports[0].Users[strings.Repeat("x", 20)+string(rune('a'+i%26))+string(rune('a'+i/26))] = fairshare.Usage{Queued: 1}
	}
	g, err := fairshare.Compute(reports, unitWeight)
	if err != nil {
		t.Fatal(err)
	}
	const version = 1763900000000000000
	replies, err := Replies(reports, g, version)
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != len(reports) {
		t.Fatalf("%d replies for %d reports", len(replies), len(reports))
	}
	if len(replies[0].Msgs) < 2 {
		t.Errorf("a node of %d users got a reply in %d part(s); want it split", len(reports[0].Users), len(replies[0].Msgs))
	}
	for i, r := range replies {
		rep := reports[i]
		if r.Node != rep.Node {
			t.Fatalf("reply %d is to %s, want %s", i, r.Node, rep.Node)
		}
		var a fairgossip.ReplyAssembler
		var got fairgossip.ReplyGuidance
		done := false
		for _, m := range r.Msgs {
			if len(m) > fairgossip.MaxMessage {
				t.Fatalf("%s: a part of %d bytes", r.Node, len(m))
			}
			p, err := fairgossip.DecodeReply(m)
			if err != nil {
				t.Fatalf("%s: %v", r.Node, err)
			}
			got, done = a.Add(p)
		}
		if !done || got.Version != version || len(got.Running) != len(rep.Users) {
			t.Fatalf("%s: installed %v, version %d, %d users; want version %d, %d users", r.Node, done, got.Version, len(got.Running), version, len(rep.Users))
		}
		for u := range rep.Users {
			if got.Running[u] != uint64(g.Running[u]) {
				t.Errorf("%s: %s running %d, want %d", r.Node, u, got.Running[u], g.Running[u])
			}
			want := float64(fairgossip.QuantizeWeight(g.TypeWeights[rep.Type][u])) * fairgossip.WeightUnit
			if got.Weights[u] != want {
				t.Errorf("%s: %s weight %v, want %v", r.Node, u, got.Weights[u], want)
			}
		}
	}
}

func TestStartRefusesUnknownDelivery(t *testing.T) {
	_, err := Start(Config{Name: "c", Gossip: "127.0.0.1:0", Delivery: "carrier-pigeon", Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
		t.Errorf("error %v, want one naming the unknown delivery", err)
	}
}

package policy

import "time"

// PlacementOf counts, for each user, the spans that ran on nodes for which
// member is true and on the others. Spans with no known node (Node < 0)
// are not counted.
func PlacementOf(spans []Span, users []string, member func(node int) bool) []Placement {
	idx := make(map[string]int, len(users))
	out := make([]Placement, len(users))
	for i, u := range users {
		idx[u] = i
		out[i].Group = u
	}
	for _, s := range spans {
		i, ok := idx[s.User]
		if !ok || s.Node < 0 {
			continue
		}
		if member(s.Node) {
			out[i].OnAttrNodes++
		} else {
			out[i].OnOtherNodes++
		}
	}
	return out
}

// NodeUtilisation is the fraction of the slot-time of the nodes for which
// member is true (nodes of them, slots each) that any task occupied
// during [0, window).
func NodeUtilisation(spans []Span, member func(node int) bool, nodes, slots int, window time.Duration) float64 {
	if nodes <= 0 || slots <= 0 || window <= 0 {
		return 0
	}
	var busy time.Duration
	for _, s := range spans {
		if s.Node < 0 || !member(s.Node) {
			continue
		}
		if a, b := max(s.Start, 0), min(s.End, window); b > a {
			busy += b - a
		}
	}
	return busy.Seconds() / (float64(nodes*slots) * window.Seconds())
}

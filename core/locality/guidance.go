package locality

// Prices are the coordinator's locality guidance for one period. Costs are
// integers in core/quincy's units (quincy.CostUnit per unit of the paper's
// costs): waiting one second costs the wait weight ω, moving a gigabyte
// across a rack switch ψ and across the core switch ξ.
type Prices struct {
	// Version is the coordinator's guidance version; a newer one replaces
	// an older one.
	Version uint64
	// Node maps a node monitor's gossip member name to the marginal cost of
	// one more task queued there: the wait the next task would see.
	Node map[string]int64
	// Rack maps a rack name to the marginal cost of one more task on the
	// rack's cheapest node, once the flow has spread the queued work.
	Rack map[string]int64
	// Cluster is the marginal cost of one more task on the cluster's
	// cheapest node.
	Cluster int64
	// RackPerGB and CorePerGB are the transfer prices ψ and ξ per 10⁹
	// bytes, for data that crosses a rack switch and the core switch.
	RackPerGB, CorePerGB int64
}

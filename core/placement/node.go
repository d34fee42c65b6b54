package placement

import "slices"

// RackAttr is the node attribute that task rack preferences match against.
const RackAttr = "rack"

// Node is a node monitor as a scheduler sees it in its membership view.
type Node struct {
	// Addr is the node monitor's InternalService "host:port"; it identifies
	// the node within a request.
	Addr string
	// Host is the host part of Addr. Task preferences name hosts.
	Host string
	// Name is the node's gossip member name, which preferences may also use.
	Name string
	// Attrs are the attributes the node advertises (e.g. "rack").
	Attrs map[string]string
}

// Task is one task of a job, reduced to what placement needs.
type Task struct {
	ID string
	// Nodes lists preferred hosts (names or IPs). Empty means any node.
	Nodes []string
	// Racks lists preferred racks, matched against the node's "rack"
	// attribute. Empty means any rack.
	Racks []string
}

// Constrained reports whether the task may only run on some nodes.
func (t Task) Constrained() bool { return len(t.Nodes) > 0 || len(t.Racks) > 0 }

// Allows reports whether the task may run on n. A task with both node and
// rack preferences may run on a node that satisfies either, as a task that
// prefers its data's hosts may also use their racks.
func (t Task) Allows(n Node) bool {
	if !t.Constrained() {
		return true
	}
	if slices.Contains(t.Nodes, n.Host) || (n.Name != "" && slices.Contains(t.Nodes, n.Name)) {
		return true
	}
	rack, ok := n.Attrs[RackAttr]
	return ok && slices.Contains(t.Racks, rack)
}

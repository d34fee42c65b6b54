// Package membership is sparrowfleet's gossip view of the fleet, built on
// hashicorp/memberlist: every daemon joins one cluster and advertises its
// role and Thrift addresses; schedulers sample only the node monitors that
// are live in this view.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package membership

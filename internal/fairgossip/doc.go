// Package fairgossip is the wire format of the fairness coordinator's
// messages: node monitors' reports up to the coordinator, and the
// coordinator's guidance spread to every member by gossip.
//
// Every message fits one gossip packet (MaxMessage bytes): memberlist's
// node metadata is limited to 512 bytes and a UDP gossip packet to about
// 1,400, so guidance for thousands of users is cut into numbered chunks of
// one version, which a receiver assembles (Assembler) and installs only
// when complete; a newer version replaces an incomplete older one. The
// encoding is compact on purpose (uvarints, float32 targets and weights):
// every byte of guidance is sent about RetransmitMult x log10(members)
// times by every member.
//
// It is plumbing: only this module may import it, and it holds no
// scheduling logic (that lives in core/).
package fairgossip

// Package fairgossip is the wire format of the fairness coordinator's
// messages: node monitors' reports up to the coordinator, and the
// coordinator's guidance, spread to every member by gossip or sent to each
// node monitor as a direct reply.
//
// Every gossiped message fits one gossip packet (MaxMessage bytes), and
// every byte of it is sent about RetransmitMult x log10(members) times by
// every member (memberlist does not relay user broadcasts: members relay
// what Receiver reports as fresh). So the guidance is small on purpose:
//
//   - a name table (EncodeNames), sent in TableSends periods in a row
//     when the set of users or machine types grows (no version can be
//     installed without it) and every TableEvery periods, numbers users
//     and types;
//     names are front coded (shared prefix length, then the rest);
//   - guidance chunks (EncodeIndexed) refer to users and types by index,
//     with uvarint index gaps, exact running counts and CMMF weights in
//     1/16 slot (WeightUnit);
//   - a snapshot every SnapshotEvery periods, and in between deltas
//     holding only the values that differ from the last snapshot's, so a
//     member that missed a delta needs only the next one, and one that
//     joined catches up within TableEvery + SnapshotEvery periods.
//
// At large scale the coordinator replies to each node monitor instead
// (--delivery direct): one self-contained reply per node (EncodeReply),
// naming its users inline with their running counts and its type's
// weights, cut into parts only when it exceeds MaxMessage; ReplyAssembler
// installs a version once all its parts arrived, in any order.
//
// Publisher is the coordinator's side, Receiver a member's. A large table
// or version is cut into numbered chunks, assembled by the receiver and
// installed only when complete; a newer version replaces an incomplete
// older one.
//
// It is plumbing: only this module may import it, and it holds no
// scheduling logic (that lives in core/) and does no I/O.
package fairgossip

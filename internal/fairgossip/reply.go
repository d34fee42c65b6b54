package fairgossip

import (
	"fmt"
	"slices"
)

// Direct replies are the second way guidance travels: the active
// coordinator answers each node monitor that reported, point to point
// over best-effort UDP, with only what that node needs — the version, and
// for each user in the node's last report its cluster-wide running count
// and its CMMF weight on the node's machine type. Nothing is relayed, so
// the cost per member does not grow with the fleet.
//
// A node has few users, so names travel inline (no name table). A reply
// must fit one packet: a node whose users do not fit gets its reply cut
// into parts, each self-contained (version, part i of n); the node
// installs a version once all its parts arrived (ReplyAssembler), in
// whatever order UDP delivered them. A lost part just means the node keeps
// its previous guidance for a period.

// kindReply is the message kind of a direct reply.
const kindReply byte = 5

// maxReplyParts bounds a reply's part count, and so the assembler's
// buffer: 256 parts of 1,200 bytes hold some 20,000 users, far more than
// one node runs work for.
const maxReplyParts = 256

// replyHeader bounds a reply part's header: magic, kind, version (<= 10
// bytes), part and parts (<= 2 each, maxReplyParts), flags (1) and the
// user count (<= 2: a part holds fewer than 2^14 users).
const replyHeader = 2 + 10 + 2 + 2 + 1 + 2

// replyWeights is the flag saying every user entry carries a weight.
const replyWeights byte = 1

// ReplyUser is one user's guidance in a direct reply.
type ReplyUser struct {
	User string
	// Running is the user's cluster-wide running count.
	Running uint64
	// Weight is the user's CMMF weight on the node's machine type in
	// WeightUnits (QuantizeWeight); 0 when CMMF gives it none there.
	Weight uint64
}

// Reply is one decoded part of a direct reply.
type Reply struct {
	// Version orders guidance as in gossiped guidance (the coordinator's
	// wall-clock nanoseconds).
	Version uint64
	// Part and Parts place this message among the version's parts.
	Part, Parts uint32
	// Weights is whether the users' Weight fields were sent.
	Weights bool
	Users   []ReplyUser
}

func replyUserSize(u ReplyUser, weights bool) int {
	n := uvarintLen(uint64(len(u.User))) + len(u.User) + uvarintLen(u.Running)
	if weights {
		n += uvarintLen(u.Weight)
	}
	return n
}

// EncodeReply encodes version of one node's guidance as one or more
// messages of at most MaxMessage bytes, users in the given order (a node
// with no users still gets one part, which keeps its guidance fresh).
// With weights false the users' Weight fields are not sent.
func EncodeReply(version uint64, weights bool, users []ReplyUser) ([][]byte, error) {
	if version == 0 {
		return nil, fmt.Errorf("fairgossip: reply version 0")
	}
	var groups [][]ReplyUser
	start, size := 0, replyHeader
	for i, u := range users {
		if err := checkName("user", u.User); err != nil {
			return nil, err
		}
		s := replyUserSize(u, weights)
		if size+s > MaxMessage && i > start {
			groups = append(groups, users[start:i])
			start, size = i, replyHeader
		}
		size += s
	}
	groups = append(groups, users[start:])
	if len(groups) > maxReplyParts {
		return nil, fmt.Errorf("fairgossip: reply of %d users needs %d parts, over %d", len(users), len(groups), maxReplyParts)
	}
	var flags byte
	if weights {
		flags = replyWeights
	}
	out := make([][]byte, len(groups))
	for i, g := range groups {
		w := writer{b: make([]byte, 0, MaxMessage)}
		w.b = append(w.b, magic, kindReply)
		w.uvarint(version)
		w.uvarint(uint64(i))
		w.uvarint(uint64(len(groups)))
		w.b = append(w.b, flags)
		w.uvarint(uint64(len(g)))
		for _, u := range g {
			w.str(u.User)
			w.uvarint(u.Running)
			if weights {
				w.uvarint(u.Weight)
			}
		}
		out[i] = w.b
	}
	return out, nil
}

// DecodeReply decodes one part of a direct reply, or returns an error
// wrapping ErrMalformed.
func DecodeReply(b []byte) (Reply, error) {
	if Kind(b) != "reply" {
		return Reply{}, fmt.Errorf("%w: not a direct reply", ErrMalformed)
	}
	r := newReader(b[2:])
	var out Reply
	out.Version = r.Uvarint("reply version")
	part := r.Uvarint("reply part")
	parts := r.Uvarint("reply part count")
	if r.Err == nil && out.Version == 0 {
		r.Fail("reply version 0")
	}
	if r.Err == nil && (parts == 0 || parts > maxReplyParts || part >= parts) {
		r.Fail("reply part %d of %d (limit %d parts)", part, parts, maxReplyParts)
	}
	out.Part, out.Parts = uint32(part), uint32(parts)
	if r.Err == nil {
		if len(r.B) == 0 {
			r.Fail("reply without flags")
		} else {
			flags := r.B[0]
			r.B = r.B[1:]
			if flags&^replyWeights != 0 {
				r.Fail("unknown reply flags %#x", flags)
			}
			out.Weights = flags&replyWeights != 0
		}
	}
	minUser := 2 // a name length and a running count
	if out.Weights {
		minUser = 3
	}
	n := r.count("reply users", minUser)
	if n > 0 {
		out.Users = make([]ReplyUser, 0, n)
	}
	for range n {
		u := ReplyUser{User: r.str("user")}
		u.Running = r.Uvarint("running count")
		if out.Weights {
			u.Weight = r.Uvarint("weight")
		}
		if r.Err != nil {
			break
		}
		out.Users = append(out.Users, u)
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Fail("%d trailing bytes", len(r.B))
	}
	if r.Err != nil {
		return Reply{}, r.Err
	}
	return out, nil
}

// ReplyGuidance is a complete version of a node's direct reply.
type ReplyGuidance struct {
	Version uint64
	// Running is each listed user's cluster-wide running count.
	Running map[string]uint64
	// Weights are the listed users' CMMF weights on the node's type in
	// slots, users with none left out (as in gossiped guidance); nil when
	// the reply carried no weights.
	Weights map[string]float64
}

// ReplyAssembler collects the parts of direct replies and yields a version
// once all its parts arrived. It holds one version at a time (at most
// maxReplyParts parts of MaxMessage bytes): a part of a newer version
// drops an incomplete older one; parts of versions older than the one
// being assembled or than the last completed are ignored. Not safe for
// concurrent use.
type ReplyAssembler struct {
	version uint64        // being assembled (0: none)
	parts   [][]ReplyUser // by part index; nil: not yet arrived
	got     int
	weights bool
	done    uint64 // last completed version
}

// Forget drops the part being assembled and the version ordering, so that
// a new coordinator's replies are taken even if its clock is behind.
func (a *ReplyAssembler) Forget() { *a = ReplyAssembler{} }

// Add takes one decoded part and returns the complete version it
// finishes, if any.
func (a *ReplyAssembler) Add(r Reply) (ReplyGuidance, bool) {
	if r.Version <= a.done || r.Version < a.version || r.Parts == 0 || r.Part >= r.Parts {
		return ReplyGuidance{}, false
	}
	if r.Version > a.version || int(r.Parts) != len(a.parts) || r.Weights != a.weights {
		// A newer version (or a part disagreeing with the ones held, which
		// only a confused sender produces): start afresh with this part.
		a.version, a.parts, a.got, a.weights = r.Version, make([][]ReplyUser, r.Parts), 0, r.Weights
	}
	if a.parts[r.Part] != nil {
		return ReplyGuidance{}, false // a duplicate
	}
	a.parts[r.Part] = slices.Clip(append([]ReplyUser{}, r.Users...))
	a.got++
	if a.got < len(a.parts) {
		return ReplyGuidance{}, false
	}
	g := ReplyGuidance{Version: a.version, Running: map[string]uint64{}}
	if a.weights {
		g.Weights = map[string]float64{}
	}
	for _, p := range a.parts {
		for _, u := range p {
			g.Running[u.User] = u.Running
			if a.weights && u.Weight > 0 {
				g.Weights[u.User] = float64(u.Weight) * WeightUnit
			}
		}
	}
	a.done, a.version, a.parts, a.got = a.version, 0, nil, 0
	return g, true
}

// Package pricegossip is the wire format of the coordinator's locality
// prices (core/locality.Prices).
//
// The active coordinator sends one message every period to each live
// scheduler member directly, with membership's reliable Cluster.SendTo:
// schedulers are few, so a point-to-point send costs less than flooding
// every member by gossip, and each scheduler gets the whole table, which
// it needs for any task it places. Node monitors never receive prices.
//
// A message is the magic byte 0xFC (fairgossip uses 0xFA), a format
// byte, then uvarints and zigzag varints:
//
//	version · rack cost per GB · core cost per GB · cluster price
//	rack count · racks · node count · nodes
//
// Racks and nodes are each a table sorted by name, front-coded: every
// entry is the length of the prefix it shares with the previous name,
// the rest of its name, and its price. Member names of a fleet share long
// prefixes ("nm-00017"), so a node costs about 4 to 6 bytes: 10,000
// nodes fit in 60 KB, one TCP send.
//
// Encoding and decoding are pure functions, safe for concurrent use.
package pricegossip

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/internal/binmsg"
)

const (
	magic = 0xFC
	// format is the layout version; a new layout gets a new number and
	// old decoders refuse it as not prices.
	format = 1
)

// MaxName bounds a node or rack name.
const MaxName = 255

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("pricegossip: malformed prices")

// IsPrices reports whether b is a prices message (it may still be
// malformed), so a member's message handler can pick it out of the other
// user messages it receives.
func IsPrices(b []byte) bool { return len(b) >= 2 && b[0] == magic && b[1] == format }

// Encode returns p's wire form. It fails on a name over MaxName bytes.
func Encode(p locality.Prices) ([]byte, error) {
	racks, err := sorted("rack", p.Rack)
	if err != nil {
		return nil, err
	}
	nodes, err := sorted("node", p.Node)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 16+6*len(nodes)+8*len(racks))
	b = append(b, magic, format)
	b = binary.AppendUvarint(b, p.Version)
	b = binary.AppendVarint(b, p.RackPerGB)
	b = binary.AppendVarint(b, p.CorePerGB)
	b = binary.AppendVarint(b, p.Cluster)
	b = appendTable(b, racks)
	b = appendTable(b, nodes)
	return b, nil
}

type entry struct {
	name  string
	price int64
}

func sorted(what string, m map[string]int64) ([]entry, error) {
	out := make([]entry, 0, len(m))
	for name, price := range m {
		if len(name) > MaxName {
			return nil, fmt.Errorf("pricegossip: %s name %.16q... is %d bytes, over %d", what, name, len(name), MaxName)
		}
		out = append(out, entry{name, price})
	}
	slices.SortFunc(out, func(a, b entry) int { return cmp.Compare(a.name, b.name) })
	return out, nil
}

func appendTable(b []byte, t []entry) []byte {
	b = binary.AppendUvarint(b, uint64(len(t)))
	prev := ""
	for _, e := range t {
		n := 0
		for n < len(prev) && n < len(e.name) && prev[n] == e.name[n] {
			n++
		}
		b = binary.AppendUvarint(b, uint64(n))
		b = binary.AppendUvarint(b, uint64(len(e.name)-n))
		b = append(b, e.name[n:]...)
		b = binary.AppendVarint(b, e.price)
		prev = e.name
	}
	return b
}

// Decode reads a prices message. Every error wraps ErrMalformed and says
// what is wrong; names must come in strictly increasing order, so a
// decoded table never holds one name twice.
func Decode(b []byte) (locality.Prices, error) {
	if !IsPrices(b) {
		if len(b) >= 2 && b[0] == magic {
			return locality.Prices{}, fmt.Errorf("%w: format %d, this build reads %d", ErrMalformed, b[1], format)
		}
		return locality.Prices{}, fmt.Errorf("%w: not a prices message", ErrMalformed)
	}
	r := newReader(b[2:])
	var p locality.Prices
	p.Version = r.Uvarint("version")
	p.RackPerGB = r.Varint("rack cost per GB")
	p.CorePerGB = r.Varint("core cost per GB")
	p.Cluster = r.Varint("cluster price")
	p.Rack = r.table("rack")
	p.Node = r.table("node")
	if r.Err == nil && len(r.B) != 0 {
		r.Fail("%d trailing bytes", len(r.B))
	}
	if r.Err != nil {
		return locality.Prices{}, r.Err
	}
	return p, nil
}

type reader struct{ binmsg.Reader }

func newReader(b []byte) *reader { return &reader{binmsg.Reader{B: b, Malformed: ErrMalformed}} }

// table reads a front-coded name table. An entry takes at least 3 bytes,
// so a count the remaining bytes cannot hold is refused before any
// allocation.
func (r *reader) table(what string) map[string]int64 {
	n := r.Uvarint(what + " count")
	if r.Err != nil {
		return nil
	}
	if n > uint64(len(r.B)/3) {
		r.Fail("%d %ss in %d bytes", n, what, len(r.B))
		return nil
	}
	out := make(map[string]int64, n)
	var prev []byte
	name := make([]byte, 0, MaxName)
	for i := range n {
		shared := r.Uvarint(what + " shared prefix")
		rest := r.Uvarint(what + " name length")
		if r.Err != nil {
			return nil
		}
		if shared > uint64(len(prev)) {
			r.Fail("%s %d shares %d bytes with a %d-byte predecessor", what, i, shared, len(prev))
			return nil
		}
		if shared+rest > MaxName || rest > uint64(len(r.B)) {
			r.Fail("%s %d: name of %d+%d bytes (limit %d, %d left)", what, i, shared, rest, MaxName, len(r.B))
			return nil
		}
		name = append(append(name[:0], prev[:shared]...), r.B[:rest]...)
		r.B = r.B[rest:]
		if i > 0 && string(name) <= string(prev) {
			r.Fail("%s %q does not follow %q in order", what, name, prev)
			return nil
		}
		price := r.Varint(what + " price")
		if r.Err != nil {
			return nil
		}
		out[string(name)] = price
		prev = append(prev[:0], name...)
	}
	return out
}

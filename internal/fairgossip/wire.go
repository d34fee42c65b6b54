package fairgossip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// MaxMessage bounds an encoded message: one gossip packet, with room for
// memberlist's own framing.
const MaxMessage = 1200

// Message kinds, the first byte after the magic.
const (
	kindReport   byte = 1
	kindGuidance byte = 2
)

// magic starts every message, so that stray user messages are refused.
const magic = 0xFA

// maxName bounds a user, node or type name on the wire.
const maxName = 255

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("fairgossip: malformed message")

// Usage is one user's work on one node.
type Usage struct {
	User            string
	Queued, Running uint64
}

// Report is one node monitor's report to the coordinator.
type Report struct {
	Node, Type string
	Slots      uint64
	// Seq grows with every report of the node, so the coordinator keeps
	// the latest when reports arrive out of order.
	Seq   uint64
	Users []Usage
}

// UserShare is one user's entry in the guidance.
type UserShare struct {
	User    string
	Running uint64
	Target  float32
}

// TypeWeight is one user's CMMF weight on one machine type.
type TypeWeight struct {
	Type, User string
	Weight     float32
}

// Chunk is one piece of a version of the guidance.
type Chunk struct {
	// Version orders guidance: a newer version replaces an older one.
	Version uint64
	// Index and Count place the chunk among its version's chunks.
	Index, Count uint32
	Users        []UserShare
	Weights      []TypeWeight
}

type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}
func (w *writer) f32(f float32) { w.b = binary.BigEndian.AppendUint32(w.b, math.Float32bits(f)) }

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str(what string) string {
	n := r.uvarint(what + " length")
	if r.err != nil {
		return ""
	}
	if n > maxName || n > uint64(len(r.b)) {
		r.fail("%s of %d bytes (limit %d, %d left)", what, n, maxName, len(r.b))
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) f32(what string) float32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.fail("short %s", what)
		return 0
	}
	f := math.Float32frombits(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) || f < 0 {
		r.fail("%s %v is not a finite number >= 0", what, f)
	}
	return f
}

// count reads an element count, refusing more than the remaining bytes
// could hold at minElem bytes each, so a short message cannot claim a huge
// allocation.
func (r *reader) count(what string, minElem int) int {
	n := r.uvarint(what)
	if r.err == nil && n > uint64(len(r.b)/minElem) {
		r.fail("%d %s in %d bytes", n, what, len(r.b))
		return 0
	}
	return int(n)
}

func checkName(what, s string) error {
	if len(s) > maxName {
		return fmt.Errorf("fairgossip: %s %q is %d bytes, over %d", what, s[:16], len(s), maxName)
	}
	return nil
}

// EncodeReport encodes r. A report is sent point to point (memberlist
// sends large ones over TCP), so it has no size limit beyond its names'.
func EncodeReport(r Report) ([]byte, error) {
	for _, s := range []string{r.Node, r.Type} {
		if err := checkName("name", s); err != nil {
			return nil, err
		}
	}
	w := writer{b: []byte{magic, kindReport}}
	w.str(r.Node)
	w.str(r.Type)
	w.uvarint(r.Slots)
	w.uvarint(r.Seq)
	w.uvarint(uint64(len(r.Users)))
	for _, u := range r.Users {
		if err := checkName("user", u.User); err != nil {
			return nil, err
		}
		w.str(u.User)
		w.uvarint(u.Queued)
		w.uvarint(u.Running)
	}
	return w.b, nil
}

// Kind reports a message's kind: "report", "guidance" or "" for a
// message that is not this package's.
func Kind(b []byte) string {
	if len(b) < 2 || b[0] != magic {
		return ""
	}
	switch b[1] {
	case kindReport:
		return "report"
	case kindGuidance:
		return "guidance"
	}
	return ""
}

// DecodeReport decodes a report, or returns an error wrapping ErrMalformed.
func DecodeReport(b []byte) (Report, error) {
	if Kind(b) != "report" {
		return Report{}, fmt.Errorf("%w: not a report", ErrMalformed)
	}
	r := reader{b: b[2:]}
	var out Report
	out.Node = r.str("node name")
	out.Type = r.str("machine type")
	out.Slots = r.uvarint("slots")
	out.Seq = r.uvarint("sequence")
	n := r.count("users", 3)
	for range n {
		u := Usage{User: r.str("user")}
		u.Queued = r.uvarint("queued count")
		u.Running = r.uvarint("running count")
		out.Users = append(out.Users, u)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return out, r.err
}

// EncodeGuidance cuts a version of the guidance into chunks of at most
// MaxMessage bytes each. Users and weights are sorted first, so the same
// guidance always encodes to the same chunks.
func EncodeGuidance(version uint64, users []UserShare, weights []TypeWeight) ([][]byte, error) {
	users = append([]UserShare(nil), users...)
	sort.Slice(users, func(i, j int) bool { return users[i].User < users[j].User })
	weights = append([]TypeWeight(nil), weights...)
	sort.Slice(weights, func(i, j int) bool {
		if weights[i].Type != weights[j].Type {
			return weights[i].Type < weights[j].Type
		}
		return weights[i].User < weights[j].User
	})
	// Entries as encoded bytes, then packed greedily into chunks.
	type entry struct {
		weight bool
		b      []byte
	}
	var entries []entry
	for _, u := range users {
		if err := checkName("user", u.User); err != nil {
			return nil, err
		}
		w := writer{}
		w.str(u.User)
		w.uvarint(u.Running)
		w.f32(u.Target)
		entries = append(entries, entry{b: w.b})
	}
	for _, tw := range weights {
		if err := checkName("user", tw.User); err != nil {
			return nil, err
		}
		if err := checkName("type", tw.Type); err != nil {
			return nil, err
		}
		w := writer{}
		w.str(tw.Type)
		w.str(tw.User)
		w.f32(tw.Weight)
		entries = append(entries, entry{weight: true, b: w.b})
	}
	// header: magic, kind, version, index, count (each uvarint, <= 10
	// bytes), then two counts (<= 10 bytes each).
	const header = 2 + 10 + 5 + 5 + 10 + 10
	var chunks [][]entry
	var cur []entry
	size := header
	for _, e := range entries {
		if header+len(e.b) > MaxMessage {
			return nil, fmt.Errorf("fairgossip: one entry of %d bytes does not fit a message", len(e.b))
		}
		if size+len(e.b) > MaxMessage {
			chunks = append(chunks, cur)
			cur, size = nil, header
		}
		cur = append(cur, e)
		size += len(e.b)
	}
	chunks = append(chunks, cur) // at least one chunk, possibly empty
	out := make([][]byte, len(chunks))
	for i, es := range chunks {
		w := writer{b: []byte{magic, kindGuidance}}
		w.uvarint(version)
		w.uvarint(uint64(i))
		w.uvarint(uint64(len(chunks)))
		nu := 0
		for _, e := range es {
			if !e.weight {
				nu++
			}
		}
		w.uvarint(uint64(nu))
		for _, e := range es {
			if !e.weight {
				w.b = append(w.b, e.b...)
			}
		}
		w.uvarint(uint64(len(es) - nu))
		for _, e := range es {
			if e.weight {
				w.b = append(w.b, e.b...)
			}
		}
		out[i] = w.b
	}
	return out, nil
}

// maxChunks bounds a version's chunk count: 65,536 chunks of 1,200 bytes
// are 78 MB, far beyond any real guidance.
const maxChunks = 1 << 16

// DecodeChunk decodes one guidance chunk, or returns an error wrapping
// ErrMalformed.
func DecodeChunk(b []byte) (Chunk, error) {
	if Kind(b) != "guidance" {
		return Chunk{}, fmt.Errorf("%w: not guidance", ErrMalformed)
	}
	r := reader{b: b[2:]}
	var c Chunk
	c.Version = r.uvarint("version")
	idx, cnt := r.uvarint("chunk index"), r.uvarint("chunk count")
	if r.err == nil && (cnt == 0 || cnt > maxChunks || idx >= cnt) {
		r.fail("chunk %d of %d", idx, cnt)
	}
	c.Index, c.Count = uint32(idx), uint32(cnt)
	nu := r.count("user entries", 6)
	for range nu {
		u := UserShare{User: r.str("user")}
		u.Running = r.uvarint("running count")
		u.Target = r.f32("target")
		c.Users = append(c.Users, u)
	}
	nw := r.count("weight entries", 6)
	for range nw {
		tw := TypeWeight{Type: r.str("type"), User: r.str("user")}
		tw.Weight = r.f32("weight")
		c.Weights = append(c.Weights, tw)
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return c, r.err
}

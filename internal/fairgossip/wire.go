package fairgossip

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sparrowfleet/sparrow/internal/binmsg"
)

// MaxMessage bounds an encoded message: one gossip packet, with room for
// memberlist's own framing.
const MaxMessage = 1200

// Message kinds, the first byte after the magic.
const (
	kindReport byte = 1
	// 2 was the first guidance format (names in every chunk); retired.
	kindNames   byte = 3
	kindIndexed byte = 4
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
	// Rack (the node's "rack" attribute) and TaskMillis (its recent mean
	// task run time in ms, 0 until a task finished) feed the coordinator's
	// locality prices. On the wire they are a trailing section, present
	// only when one is set: a report without it is the original format.
	// Coordinators built before the section refuse reports that carry
	// it, so upgrade coordinators before node monitors.
	Rack       string
	TaskMillis uint64
}

type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b = append(w.b, s...)
}

type reader struct{ binmsg.Reader }

func newReader(b []byte) *reader { return &reader{binmsg.Reader{B: b, Malformed: ErrMalformed}} }

func (r *reader) str(what string) string {
	n := r.Uvarint(what + " length")
	if r.Err != nil {
		return ""
	}
	if n > maxName || n > uint64(len(r.B)) {
		r.Fail("%s of %d bytes (limit %d, %d left)", what, n, maxName, len(r.B))
		return ""
	}
	s := string(r.B[:n])
	r.B = r.B[n:]
	return s
}

// count reads an element count, refusing more than the remaining bytes
// could hold at minElem bytes each, so a short message cannot claim a huge
// allocation.
func (r *reader) count(what string, minElem int) int {
	n := r.Uvarint(what)
	if r.Err == nil && n > uint64(len(r.B)/minElem) {
		r.Fail("%d %s in %d bytes", n, what, len(r.B))
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
	if err := checkName("rack", r.Rack); err != nil {
		return nil, err
	}
	if r.Rack != "" || r.TaskMillis != 0 {
		// The locality section: its length, then its fields. A decoder
		// skips fields it does not know at the end of the section, so
		// later fields can be added the same way.
		sec := writer{}
		sec.str(r.Rack)
		sec.uvarint(r.TaskMillis)
		w.uvarint(uint64(len(sec.b)))
		w.b = append(w.b, sec.b...)
	}
	return w.b, nil
}

// Kind reports a message's kind: "report", "names" (a name table chunk),
// "guidance", "reply" (a direct reply, reply.go) or "" for a message
// that is not this package's.
func Kind(b []byte) string {
	if len(b) < 2 || b[0] != magic {
		return ""
	}
	switch b[1] {
	case kindReport:
		return "report"
	case kindIndexed:
		return "guidance"
	case kindNames:
		return "names"
	case kindReply:
		return "reply"
	}
	return ""
}

// DecodeReport decodes a report, or returns an error wrapping ErrMalformed.
func DecodeReport(b []byte) (Report, error) {
	if Kind(b) != "report" {
		return Report{}, fmt.Errorf("%w: not a report", ErrMalformed)
	}
	r := newReader(b[2:])
	var out Report
	out.Node = r.str("node name")
	out.Type = r.str("machine type")
	out.Slots = r.Uvarint("slots")
	out.Seq = r.Uvarint("sequence")
	n := r.count("users", 3)
	for range n {
		u := Usage{User: r.str("user")}
		u.Queued = r.Uvarint("queued count")
		u.Running = r.Uvarint("running count")
		out.Users = append(out.Users, u)
	}
	if r.Err == nil && len(r.B) != 0 {
		out.Rack, out.TaskMillis = r.localitySection()
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Fail("%d trailing bytes", len(r.B))
	}
	return out, r.Err
}

// localitySection reads a report's optional trailing section: its
// length, the rack and the task run time, and any later fields (skipped).
func (r *reader) localitySection() (rack string, taskMillis uint64) {
	n := r.Uvarint("locality section length")
	if r.Err != nil {
		return "", 0
	}
	if n == 0 || n > uint64(len(r.B)) {
		r.Fail("locality section of %d bytes (%d left)", n, len(r.B))
		return "", 0
	}
	sec := newReader(r.B[:n])
	r.B = r.B[n:]
	rack = sec.str("rack")
	taskMillis = sec.Uvarint("task run time")
	if sec.Err != nil {
		r.Err = sec.Err
		return "", 0
	}
	return rack, taskMillis
}

// maxChunks bounds a version's chunk count: 65,536 chunks of 1,200 bytes
// are 78 MB, far beyond any real guidance.
const maxChunks = 1 << 16

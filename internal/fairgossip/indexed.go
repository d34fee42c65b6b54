package fairgossip

import (
	"fmt"
	"math"
)

// WeightUnit is the resolution of CMMF weights on the wire: a weight is a
// user's slots on a machine type, sent as a whole number of 1/16 slots
// (a positive weight is never rounded to zero). Weighted fair queues use
// weights as proportions, so 1/16 of a slot is far below what a node can
// tell apart.
const WeightUnit = 1.0 / 16

// Entry is one user's value in a guidance chunk: a running count, or a
// weight in WeightUnits. User indexes the name table.
type Entry struct {
	User  uint32
	Value uint64
}

// TypeEntries are the weights of one machine type (an index into the
// name table's types).
type TypeEntries struct {
	Type    uint32
	Entries []Entry
}

// GuidanceChunk is one piece of a version of index-coded guidance.
//
// A snapshot (Base 0) holds every user's running count and every (type,
// user) weight; a delta holds only the values that differ from those of
// the snapshot whose version is Base (cumulative, so a receiver that
// missed a delta needs only the next one), 0 standing for "no longer
// present". Names come from the name table of epoch Epoch.
type GuidanceChunk struct {
	// Version orders guidance: a newer version replaces an older one.
	Version uint64
	// Epoch names the name table the indexes refer to.
	Epoch uint64
	// Base is 0 for a snapshot, else the version of the snapshot this
	// delta applies to.
	Base uint64
	// Index and Count place the chunk among its version's chunks.
	Index, Count uint32
	Running      []Entry
	Weights      []TypeEntries
}

// QuantizeWeight turns a weight in slots into WeightUnits, rounding to
// the nearest and keeping any positive weight at least one unit. w must
// be finite and >= 0.
func QuantizeWeight(w float64) uint64 {
	if !(w > 0) {
		return 0
	}
	q := math.Round(w / WeightUnit)
	if q < 1 {
		return 1
	}
	if q >= math.MaxUint32 {
		return math.MaxUint32
	}
	return uint64(q)
}

// guidanceHeader bounds a guidance chunk's header: magic, kind, version,
// epoch and base (<= 10 bytes each), index and count (<= 3 each,
// maxChunks), the running count and the type section count (<= 3 each:
// a chunk holds fewer than 2^21 entries).
const guidanceHeader = 2 + 10 + 10 + 10 + 3 + 3 + 3 + 3

// sectionHeader bounds a type section's header: type index and entry
// count (<= 3 each).
const sectionHeader = 3 + 3

// EncodeIndexed cuts one version of index-coded guidance into chunks of at
// most MaxMessage bytes. Entries of running and of each type's weights
// must be sorted by user index without duplicates, and weights sorted by
// type without duplicates (the encoding stores gaps between indexes);
// version and epoch must be > 0 and base < version.
func EncodeIndexed(version, epoch, base uint64, running []Entry, weights []TypeEntries) ([][]byte, error) {
	if version == 0 || epoch == 0 || base >= version {
		return nil, fmt.Errorf("fairgossip: guidance version %d, epoch %d, base %d", version, epoch, base)
	}
	if err := checkSorted("running counts", running); err != nil {
		return nil, err
	}
	for i, te := range weights {
		if i > 0 && te.Type <= weights[i-1].Type {
			return nil, fmt.Errorf("fairgossip: weight sections not sorted by type at %d", te.Type)
		}
		if err := checkSorted(fmt.Sprintf("weights of type %d", te.Type), te.Entries); err != nil {
			return nil, err
		}
	}
	var chunks []GuidanceChunk
	cur := GuidanceChunk{}
	size := guidanceHeader
	prev := -1 // last user index in the current section of cur
	flush := func() {
		chunks = append(chunks, cur)
		cur, size, prev = GuidanceChunk{}, guidanceHeader, -1
	}
	entrySize := func(e Entry) int { return uvarintLen(uint64(int(e.User)-prev-1)) + uvarintLen(e.Value) }
	for _, e := range running {
		if size+entrySize(e) > MaxMessage {
			flush()
		}
		size += entrySize(e)
		cur.Running = append(cur.Running, e)
		prev = int(e.User)
	}
	for _, te := range weights {
		open := false // whether cur has a section for te.Type
		for _, e := range te.Entries {
			if !open {
				prev = -1
				if size+sectionHeader+entrySize(e) > MaxMessage {
					flush()
				}
				cur.Weights = append(cur.Weights, TypeEntries{Type: te.Type})
				size += sectionHeader
				open = true
			} else if size+entrySize(e) > MaxMessage {
				flush()
				cur.Weights = append(cur.Weights, TypeEntries{Type: te.Type})
				size += sectionHeader
			}
			size += entrySize(e)
			s := &cur.Weights[len(cur.Weights)-1]
			s.Entries = append(s.Entries, e)
			prev = int(e.User)
		}
	}
	chunks = append(chunks, cur) // at least one chunk, possibly empty
	if len(chunks) > maxChunks {
		return nil, fmt.Errorf("fairgossip: guidance needs %d chunks, over %d", len(chunks), maxChunks)
	}
	out := make([][]byte, len(chunks))
	for i, c := range chunks {
		w := writer{b: []byte{magic, kindIndexed}}
		w.uvarint(version)
		w.uvarint(epoch)
		w.uvarint(base)
		w.uvarint(uint64(i))
		w.uvarint(uint64(len(chunks)))
		writeEntries(&w, c.Running)
		w.uvarint(uint64(len(c.Weights)))
		for _, te := range c.Weights {
			w.uvarint(uint64(te.Type))
			writeEntries(&w, te.Entries)
		}
		if len(w.b) > MaxMessage {
			return nil, fmt.Errorf("fairgossip: guidance chunk of %d bytes, over %d (an encoder bug)", len(w.b), MaxMessage)
		}
		out[i] = w.b
	}
	return out, nil
}

func checkSorted(what string, es []Entry) error {
	for i, e := range es {
		if e.User >= maxNames {
			return fmt.Errorf("fairgossip: %s: user index %d, over %d", what, e.User, maxNames)
		}
		if i > 0 && e.User <= es[i-1].User {
			return fmt.Errorf("fairgossip: %s not sorted by user at index %d", what, e.User)
		}
	}
	return nil
}

func writeEntries(w *writer, es []Entry) {
	w.uvarint(uint64(len(es)))
	prev := -1
	for _, e := range es {
		w.uvarint(uint64(int(e.User) - prev - 1))
		w.uvarint(e.Value)
		prev = int(e.User)
	}
}

func (r *reader) entries(what string) []Entry {
	n := r.count(what, 2)
	var out []Entry
	next := uint64(0)
	for range n {
		gap := r.Uvarint(what + " index gap")
		v := r.Uvarint(what + " value")
		if r.Err != nil {
			return nil
		}
		if gap >= maxNames || next+gap >= maxNames {
			r.Fail("%s index past %d", what, maxNames)
			return nil
		}
		out = append(out, Entry{User: uint32(next + gap), Value: v})
		next += gap + 1
	}
	return out
}

// DecodeIndexed decodes one chunk of index-coded guidance, or returns an
// error wrapping ErrMalformed. Indexes are checked against the name table
// only when the version is assembled (Receiver).
func DecodeIndexed(b []byte) (GuidanceChunk, error) {
	if Kind(b) != "guidance" {
		return GuidanceChunk{}, fmt.Errorf("%w: not guidance", ErrMalformed)
	}
	r := newReader(b[2:])
	var c GuidanceChunk
	c.Version = r.Uvarint("version")
	c.Epoch = r.Uvarint("table epoch")
	c.Base = r.Uvarint("base version")
	idx, cnt := r.Uvarint("chunk index"), r.Uvarint("chunk count")
	if r.Err == nil && (c.Version == 0 || c.Epoch == 0 || c.Base >= c.Version) {
		r.Fail("version %d, table epoch %d, base %d", c.Version, c.Epoch, c.Base)
	}
	if r.Err == nil && (cnt == 0 || cnt > maxChunks || idx >= cnt) {
		r.Fail("chunk %d of %d", idx, cnt)
	}
	c.Index, c.Count = uint32(idx), uint32(cnt)
	c.Running = r.entries("running count")
	nt := r.count("weight sections", 2)
	prevType := -1
	for range nt {
		t := r.Uvarint("type index")
		if r.Err == nil && (t >= maxNames || int(t) <= prevType) {
			r.Fail("type index %d after %d", t, prevType)
		}
		es := r.entries("weight")
		if r.Err == nil && len(es) == 0 {
			r.Fail("weight section of type %d without entries", t)
		}
		if r.Err != nil {
			break
		}
		c.Weights = append(c.Weights, TypeEntries{Type: uint32(t), Entries: es})
		prevType = int(t)
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Fail("%d trailing bytes", len(r.B))
	}
	return c, r.Err
}

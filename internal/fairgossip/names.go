package fairgossip

import "fmt"

// maxNames bounds a name table (users plus machine types): a million
// names is far beyond any fleet, and bounds what a forged header can make
// a receiver allocate.
const maxNames = 1 << 20

// NamesChunk is one piece of a name table. A table numbers the users and
// machine types the guidance talks about, so that guidance refers to them
// by index: users are 0..Users-1 and types 0..Types-1, at table positions
// 0..Users-1 and Users..Users+Types-1. A table is immutable: a coordinator
// that meets a new name starts a new table with a higher epoch.
type NamesChunk struct {
	// Epoch identifies the table; a higher epoch replaces a lower one.
	Epoch uint64
	// Index and Count place the chunk among its table's chunks.
	Index, Count uint32
	// Users and Types are the table's totals.
	Users, Types uint32
	// Start is the table position of Names[0].
	Start uint32
	Names []string
}

// EncodeNames cuts a name table into chunks of at most MaxMessage bytes.
// users and types must each be sorted and free of duplicates (so that
// front coding, which stores each name as the length of the prefix it
// shares with the previous one plus the rest, works well); epoch must be
// > 0.
func EncodeNames(epoch uint64, users, types []string) ([][]byte, error) {
	if epoch == 0 {
		return nil, fmt.Errorf("fairgossip: name table epoch 0")
	}
	names := make([]string, 0, len(users)+len(types))
	names = append(append(names, users...), types...)
	if len(names) > maxNames {
		return nil, fmt.Errorf("fairgossip: name table of %d names, over %d", len(names), maxNames)
	}
	for i, s := range names {
		if err := checkName("name", s); err != nil {
			return nil, err
		}
		if i > 0 && i != len(users) && s <= names[i-1] {
			return nil, fmt.Errorf("fairgossip: name table not sorted at %q after %q", s, names[i-1])
		}
	}
	// Header: magic, kind, epoch (<= 10 bytes), index and count (<= 3
	// each, maxChunks), users, types, start and name count (<= 3 each,
	// maxNames).
	const header = 2 + 10 + 3 + 3 + 3 + 3 + 3 + 3
	type span struct{ start, end int }
	var spans []span
	cur, size := span{}, header
	for i, s := range names {
		shared := 0
		if i > cur.start {
			shared = commonPrefix(names[i-1], s)
		}
		n := uvarintLen(uint64(shared)) + uvarintLen(uint64(len(s)-shared)) + len(s) - shared
		if i > cur.start && size+n > MaxMessage {
			spans = append(spans, cur)
			cur, size = span{start: i}, header
			n = uvarintLen(0) + uvarintLen(uint64(len(s))) + len(s)
		}
		cur.end = i + 1
		size += n
	}
	spans = append(spans, cur) // at least one chunk, possibly empty
	if len(spans) > maxChunks {
		return nil, fmt.Errorf("fairgossip: name table needs %d chunks, over %d", len(spans), maxChunks)
	}
	out := make([][]byte, len(spans))
	for ci, sp := range spans {
		w := writer{b: []byte{magic, kindNames}}
		w.uvarint(epoch)
		w.uvarint(uint64(ci))
		w.uvarint(uint64(len(spans)))
		w.uvarint(uint64(len(users)))
		w.uvarint(uint64(len(types)))
		w.uvarint(uint64(sp.start))
		w.uvarint(uint64(sp.end - sp.start))
		for i := sp.start; i < sp.end; i++ {
			shared := 0
			if i > sp.start {
				shared = commonPrefix(names[i-1], names[i])
			}
			w.uvarint(uint64(shared))
			w.str(names[i][shared:])
		}
		out[ci] = w.b
	}
	return out, nil
}

// DecodeNames decodes one name table chunk, or returns an error wrapping
// ErrMalformed.
func DecodeNames(b []byte) (NamesChunk, error) {
	if Kind(b) != "names" {
		return NamesChunk{}, fmt.Errorf("%w: not a name table", ErrMalformed)
	}
	r := newReader(b[2:])
	var c NamesChunk
	c.Epoch = r.Uvarint("table epoch")
	idx, cnt := r.Uvarint("chunk index"), r.Uvarint("chunk count")
	users, types := r.Uvarint("user total"), r.Uvarint("type total")
	start := r.Uvarint("first position")
	if r.Err == nil && c.Epoch == 0 {
		r.Fail("table epoch 0")
	}
	if r.Err == nil && (cnt == 0 || cnt > maxChunks || idx >= cnt) {
		r.Fail("chunk %d of %d", idx, cnt)
	}
	if r.Err == nil && (users > maxNames || types > maxNames-users) {
		r.Fail("table of %d users and %d types (limit %d names)", users, types, maxNames)
	}
	// A name takes at least 2 bytes, so a table's chunks cannot hold more
	// than this: a forged total must not make a receiver allocate for it.
	if r.Err == nil && users+types > cnt*(MaxMessage/2) {
		r.Fail("table of %d names in %d chunks", users+types, cnt)
	}
	n := r.count("names", 2)
	if r.Err == nil && start+uint64(n) > users+types {
		r.Fail("names %d..%d past the table's %d", start, start+uint64(n), users+types)
	}
	c.Index, c.Count, c.Users, c.Types, c.Start = uint32(idx), uint32(cnt), uint32(users), uint32(types), uint32(start)
	prev := ""
	for i := range n {
		shared := r.Uvarint("shared prefix")
		rest := r.str("name")
		if r.Err != nil {
			break
		}
		if shared > uint64(len(prev)) || (i == 0 && shared != 0) {
			r.Fail("name %d shares %d bytes with a %d-byte predecessor", i, shared, len(prev))
			break
		}
		s := prev[:shared] + rest
		if len(s) > maxName {
			r.Fail("name of %d bytes (limit %d)", len(s), maxName)
			break
		}
		c.Names = append(c.Names, s)
		prev = s
	}
	if r.Err == nil && len(r.B) != 0 {
		r.Fail("%d trailing bytes", len(r.B))
	}
	return c, r.Err
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b), maxName)
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

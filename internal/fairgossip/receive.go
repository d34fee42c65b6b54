package fairgossip

import (
	"fmt"
	"strconv"
)

// Guidance is one complete version of the coordinator's guidance, with
// names resolved.
type Guidance struct {
	Version uint64
	// Running is each user's cluster-wide running count; users absent run
	// nothing.
	Running map[string]uint64
	// Weights maps a machine type to its users' CMMF weights in slots;
	// users absent get the floor weight. With Receiver.Type set it holds
	// that type only.
	Weights map[string]map[string]float64
}

// Result is what one message did to a Receiver.
type Result struct {
	// Fresh is true for a chunk this receiver had not seen and still
	// needs: a member relays exactly these, under Key, so that guidance
	// spreads by epidemic gossip (memberlist does not relay user
	// broadcasts itself).
	Fresh bool
	Key   string
	// Installed is true when the message completed a version newer than
	// any before it: Guidance is then that version.
	Installed bool
	Guidance  Guidance
}

// Receiver turns name table and guidance chunks, in any order, back into
// complete versions of the guidance. It keeps the newest complete name
// table and snapshot, and one version in progress of each kind (table,
// snapshot, delta); a chunk of a newer version drops the one in progress.
// A complete version is held back until its table (and, for a delta, its
// snapshot) is there. The zero value is ready; not safe for concurrent
// use.
type Receiver struct {
	// Type, when set, keeps only this machine type's weights.
	Type string

	table   names
	tableIn *tableAsm
	snap    *state // newest installed snapshot
	snapIn  *asm
	deltaIn *asm
	// waiting are complete versions held back for their table or base.
	waitSnap, waitDelta *asm
	done                uint64 // newest version installed
	// Newest table epoch and snapshot and delta versions completed,
	// installed or not: their duplicates are neither fresh nor assembled
	// again (a member relays each chunk once).
	seenTable, seenSnap, seenDelta uint64
	// anyEpoch, after Forget, accepts a table of any other epoch, even a
	// lower one, until one completes.
	anyEpoch bool
}

type names struct {
	epoch        uint64
	users, types []string
}

type tableAsm struct {
	epoch        uint64
	count        uint32
	users, types uint32
	chunks       map[uint32]NamesChunk
}

type asm struct {
	version, epoch, base uint64
	count                uint32
	chunks               map[uint32]GuidanceChunk
}

func (a *asm) complete() bool { return a != nil && uint32(len(a.chunks)) == a.count }

// state is a version's values by index.
type state struct {
	version, epoch uint64
	running        map[uint32]uint64
	weights        map[uint32]map[uint32]uint64
}

// Reset forgets everything, as a new Receiver.
func (r *Receiver) Reset() { *r = Receiver{Type: r.Type} }

// Forget forgets which versions it has installed, so that a new or
// restarted coordinator's guidance is taken whatever its versions and
// table epoch (its clock may be behind the old one's). It keeps the name
// table and the last snapshot: a new coordinator's table and snapshot may
// have arrived before this member noticed the takeover, and its deltas
// must still find them.
func (r *Receiver) Forget() {
	*r = Receiver{Type: r.Type, table: r.table, snap: r.snap, anyEpoch: true}
}

// Add takes one message (a name table or guidance chunk). It returns an
// error wrapping ErrMalformed for a message that does not decode, or for a
// version whose indexes are not in its name table (that version is
// dropped).
func (r *Receiver) Add(b []byte) (Result, error) {
	switch Kind(b) {
	case "names":
		c, err := DecodeNames(b)
		if err != nil {
			return Result{}, err
		}
		return r.addNames(c)
	case "guidance":
		c, err := DecodeIndexed(b)
		if err != nil {
			return Result{}, err
		}
		return r.addGuidance(c)
	}
	return Result{}, fmt.Errorf("%w: not guidance or a name table", ErrMalformed)
}

// Keys under which a chunk is broadcast: a newer version's chunk replaces
// the older one with the same key in memberlist's queue.
func namesKey(i uint32) string { return "fg/n/" + strconv.FormatUint(uint64(i), 10) }
func guidanceKey(base uint64, i uint32) string {
	if base == 0 {
		return "fg/s/" + strconv.FormatUint(uint64(i), 10)
	}
	return "fg/d/" + strconv.FormatUint(uint64(i), 10)
}

func (r *Receiver) addNames(c NamesChunk) (Result, error) {
	if c.Epoch == r.table.epoch || c.Epoch == r.seenTable || (r.tableIn != nil && c.Epoch < r.tableIn.epoch) ||
		(!r.anyEpoch && (c.Epoch < r.table.epoch || c.Epoch <= r.seenTable)) {
		return Result{}, nil
	}
	t := r.tableIn
	if t == nil || c.Epoch != t.epoch || c.Count != t.count || c.Users != t.users || c.Types != t.types {
		t = &tableAsm{epoch: c.Epoch, count: c.Count, users: c.Users, types: c.Types, chunks: map[uint32]NamesChunk{}}
		r.tableIn = t
	}
	if _, dup := t.chunks[c.Index]; dup {
		return Result{}, nil
	}
	t.chunks[c.Index] = c
	res := Result{Fresh: true, Key: namesKey(c.Index)}
	if uint32(len(t.chunks)) < t.count {
		return res, nil
	}
	r.tableIn, r.seenTable = nil, t.epoch
	all := make([]string, t.users+t.types)
	filled := make([]bool, len(all))
	for _, ch := range t.chunks {
		for i, s := range ch.Names {
			p := int(ch.Start) + i
			if filled[p] {
				return res, fmt.Errorf("%w: name table %d gives position %d twice", ErrMalformed, t.epoch, p)
			}
			all[p], filled[p] = s, true
		}
	}
	for p, ok := range filled {
		if !ok {
			return res, fmt.Errorf("%w: name table %d lacks position %d", ErrMalformed, t.epoch, p)
		}
	}
	r.table, r.anyEpoch = names{epoch: t.epoch, users: all[:t.users], types: all[t.users:]}, false
	// Versions held back for this table may complete now.
	var err error
	if r.waitSnap != nil && r.waitSnap.epoch == t.epoch {
		a := r.waitSnap
		r.waitSnap = nil
		res.Installed, res.Guidance, err = r.install(a, res.Installed, res.Guidance)
		if err != nil {
			return res, err
		}
	}
	if r.waitDelta != nil && r.waitDelta.epoch == t.epoch {
		a := r.waitDelta
		r.waitDelta = nil
		res.Installed, res.Guidance, err = r.install(a, res.Installed, res.Guidance)
	}
	return res, err
}

func (r *Receiver) addGuidance(c GuidanceChunk) (Result, error) {
	if c.Version <= r.done {
		return Result{}, nil
	}
	slot, seen := &r.deltaIn, &r.seenDelta
	if c.Base == 0 {
		slot, seen = &r.snapIn, &r.seenSnap
	}
	if c.Version <= *seen {
		return Result{}, nil
	}
	a := *slot
	if a != nil && c.Version < a.version {
		return Result{}, nil
	}
	if a == nil || c.Version != a.version || c.Count != a.count || c.Epoch != a.epoch || c.Base != a.base {
		a = &asm{version: c.Version, epoch: c.Epoch, base: c.Base, count: c.Count, chunks: map[uint32]GuidanceChunk{}}
		*slot = a
	}
	if _, dup := a.chunks[c.Index]; dup {
		return Result{}, nil
	}
	a.chunks[c.Index] = c
	res := Result{Fresh: true, Key: guidanceKey(c.Base, c.Index)}
	if !a.complete() {
		return res, nil
	}
	*slot, *seen = nil, c.Version
	var err error
	res.Installed, res.Guidance, err = r.install(a, false, Guidance{})
	return res, err
}

// install installs a complete version if its table and base are here, or
// holds it back; with a snapshot installed, a held-back delta on it
// follows. It returns the newest guidance installed, or (was, g) when
// nothing newer was.
func (r *Receiver) install(a *asm, was bool, g Guidance) (bool, Guidance, error) {
	if a.version <= r.done {
		return was, g, nil
	}
	if a.epoch != r.table.epoch {
		if a.epoch > r.table.epoch || r.anyEpoch {
			r.hold(a)
		}
		return was, g, nil
	}
	if a.base != 0 && (r.snap == nil || r.snap.version != a.base) {
		if r.snap == nil || a.base > r.snap.version {
			r.hold(a)
		}
		return was, g, nil
	}
	s, err := r.apply(a)
	if err != nil {
		return was, g, err
	}
	if a.base == 0 {
		r.snap = s
	}
	r.done = a.version
	out := r.resolve(s)
	if a.base == 0 && r.waitDelta != nil && r.waitDelta.base == a.version {
		d := r.waitDelta
		r.waitDelta = nil
		return r.install(d, true, out)
	}
	return true, out, nil
}

func (r *Receiver) hold(a *asm) {
	if a.base == 0 {
		if r.waitSnap == nil || a.version > r.waitSnap.version {
			r.waitSnap = a
		}
		return
	}
	if r.waitDelta == nil || a.version > r.waitDelta.version {
		r.waitDelta = a
	}
}

// apply builds a version's state: a snapshot's own values, or a delta's
// over its snapshot's. Every index must be in the name table.
func (r *Receiver) apply(a *asm) (*state, error) {
	s := &state{version: a.version, epoch: a.epoch, running: map[uint32]uint64{}, weights: map[uint32]map[uint32]uint64{}}
	if a.base != 0 {
		for u, v := range r.snap.running {
			s.running[u] = v
		}
		for t, ws := range r.snap.weights {
			if !r.wanted(t) {
				continue
			}
			m := make(map[uint32]uint64, len(ws))
			for u, v := range ws {
				m[u] = v
			}
			s.weights[t] = m
		}
	}
	nu, nt := uint32(len(r.table.users)), uint32(len(r.table.types))
	for i := range a.count {
		c := a.chunks[i]
		for _, e := range c.Running {
			if e.User >= nu {
				return nil, fmt.Errorf("%w: guidance %d names user %d of a %d-user table", ErrMalformed, a.version, e.User, nu)
			}
			setOrDelete(s.running, e)
		}
		for _, te := range c.Weights {
			if te.Type >= nt {
				return nil, fmt.Errorf("%w: guidance %d names type %d of a %d-type table", ErrMalformed, a.version, te.Type, nt)
			}
			if !r.wanted(te.Type) {
				for _, e := range te.Entries {
					if e.User >= nu {
						return nil, fmt.Errorf("%w: guidance %d names user %d of a %d-user table", ErrMalformed, a.version, e.User, nu)
					}
				}
				continue
			}
			m := s.weights[te.Type]
			if m == nil {
				m = map[uint32]uint64{}
				s.weights[te.Type] = m
			}
			for _, e := range te.Entries {
				if e.User >= nu {
					return nil, fmt.Errorf("%w: guidance %d names user %d of a %d-user table", ErrMalformed, a.version, e.User, nu)
				}
				setOrDelete(m, e)
			}
		}
	}
	return s, nil
}

// wanted reports whether type t's weights are kept (t in the table).
func (r *Receiver) wanted(t uint32) bool { return r.Type == "" || r.table.types[t] == r.Type }

func setOrDelete(m map[uint32]uint64, e Entry) {
	if e.Value == 0 {
		delete(m, e.User)
	} else {
		m[e.User] = e.Value
	}
}

func (r *Receiver) resolve(s *state) Guidance {
	g := Guidance{Version: s.version, Running: make(map[string]uint64, len(s.running)), Weights: map[string]map[string]float64{}}
	for u, v := range s.running {
		g.Running[r.table.users[u]] = v
	}
	for t, ws := range s.weights {
		name := r.table.types[t]
		if r.Type != "" && name != r.Type {
			continue
		}
		m := make(map[string]float64, len(ws))
		for u, q := range ws {
			m[r.table.users[u]] = float64(q) * WeightUnit
		}
		g.Weights[name] = m
	}
	return g
}

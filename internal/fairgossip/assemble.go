package fairgossip

// Guidance is one complete version of the coordinator's guidance.
type Guidance struct {
	Version uint64
	Users   []UserShare
	Weights []TypeWeight
}

// Assembler puts a version's chunks back together. It holds one version in
// progress: a chunk of a newer version drops it, a chunk of an older or
// already completed version is ignored. Not safe for concurrent use.
type Assembler struct {
	done    uint64 // newest version completed
	version uint64 // version in progress (0: none)
	count   uint32
	chunks  map[uint32]Chunk
}

// Add takes one chunk and returns the guidance when it completes a version.
func (a *Assembler) Add(c Chunk) (Guidance, bool) {
	if c.Version <= a.done || (a.version != 0 && c.Version < a.version) {
		return Guidance{}, false
	}
	if c.Version != a.version || c.Count != a.count {
		a.version, a.count, a.chunks = c.Version, c.Count, make(map[uint32]Chunk, c.Count)
	}
	a.chunks[c.Index] = c
	if uint32(len(a.chunks)) < a.count {
		return Guidance{}, false
	}
	g := Guidance{Version: a.version}
	for i := range a.count {
		ch := a.chunks[i]
		g.Users = append(g.Users, ch.Users...)
		g.Weights = append(g.Weights, ch.Weights...)
	}
	a.done, a.version, a.count, a.chunks = a.version, 0, 0, nil
	return g, true
}

// Reset forgets every version, so that a restarted coordinator's versions
// are taken again whatever their numbers.
func (a *Assembler) Reset() { *a = Assembler{} }

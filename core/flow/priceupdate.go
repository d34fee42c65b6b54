package flow

// globalUpdate is cost scaling's global price update (Goldberg's CS2 and
// LEMON's CostScaling both run one): a Dial-bucket shortest-path search
// backwards from the deficits, with each residual arc v->w of reduced cost
// rc counting floor(rc/ε)+1 >= 0 ranks, gives every node the number of ε
// steps its price must fall before flow from it can reach a deficit. It
// lowers each node's price by ε times its rank, capped at the rank where
// the search had reached every node with excess: one search does what
// many relabels would. On Quincy graphs at 12,500 computers a refine
// phase relabelled each node about 7 times without it.
//
// It keeps ε-optimality: with d the capped ranks, d(v) <= d(w) + ℓ(v,w)
// for every residual arc v->w, so the new reduced cost
// rc - ε·d(v) + ε·d(w) >= rc - ε·ℓ(v,w) = rc - ε·floor(rc/ε) - ε >= -ε.
// (Capping keeps the inequality since ℓ >= 0.)
//
// The buckets are doubly linked lists threaded through per-node next and
// prev arrays, so a search allocates nothing once bhead has grown: an
// earlier version with a slice per bucket made about 1,500 allocations per
// cold solve at 243 computers.
func (s *scaled) globalUpdate(eps int64) {
	n := len(s.pot)
	const inf = int32(1<<31 - 1)
	rank, done := s.rank[:n], s.done[:n]
	for i := range rank {
		rank[i] = inf
		done[i] = false
	}
	if len(s.bhead) == 0 {
		s.bhead = append(s.bhead, -1)
	}
	var left int64 // excess not yet reached
	for v, x := range s.excess {
		if x < 0 {
			rank[v] = 0
			s.link(int32(v), 0)
		} else {
			left += x
		}
	}
	maxRank := int64(n) // ranks above are left capped
	top := int32(0)     // highest bucket in use
	r := int32(0)
	for ; r <= top && left > 0; r++ {
		for s.bhead[r] >= 0 && left > 0 {
			u := s.bhead[r]
			s.unlink(u, r)
			done[u] = true
			if x := s.excess[u]; x > 0 {
				left -= x
				if left == 0 {
					break
				}
			}
			pu := s.pot[u]
			for a := s.first[u]; a < s.first[u+1]; a++ {
				ra := s.rev[a] // the residual arc w->u
				if s.res[ra] <= 0 {
					continue
				}
				w := s.head[a]
				if done[w] {
					continue
				}
				rc := s.cost[ra] + s.pot[w] - pu
				q := rc / eps
				if rc < 0 && q*eps != rc {
					q-- // floor
				}
				nr := int64(r) + q + 1
				if nr >= int64(rank[w]) || nr > maxRank {
					continue
				}
				if rank[w] != inf {
					s.unlink(w, rank[w])
				}
				rank[w] = int32(nr)
				for int(nr) >= len(s.bhead) {
					s.bhead = append(s.bhead, -1)
				}
				s.link(w, int32(nr))
				top = max(top, int32(nr))
			}
		}
		if left == 0 {
			break
		}
	}
	for i := range s.bhead[:top+1] {
		s.bhead[i] = -1
	}
	stop := min(r, top)
	for v := range n {
		if k := min(rank[v], stop); k > 0 {
			s.pot[v] -= eps * int64(k)
			s.cur[v] = s.first[v]
		}
	}
}

// link puts v at the front of bucket r.
func (s *scaled) link(v, r int32) {
	h := s.bhead[r]
	s.next[v], s.prev[v] = h, -1
	if h >= 0 {
		s.prev[h] = v
	}
	s.bhead[r] = v
}

// unlink takes v out of bucket r.
func (s *scaled) unlink(v, r int32) {
	p, q := s.prev[v], s.next[v]
	if p >= 0 {
		s.next[p] = q
	} else {
		s.bhead[r] = q
	}
	if q >= 0 {
		s.prev[q] = p
	}
}

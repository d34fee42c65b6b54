package dashboard

// ring is a fixed-capacity series: pushing past the capacity drops the
// oldest value. The zero ring holds nothing; newRing sets the capacity.
// A ring is not safe for concurrent use; the Dashboard's lock guards it.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest value
	n     int
}

func newRing[T any](capacity int) *ring[T] {
	return &ring[T]{buf: make([]T, capacity)}
}

// push appends v, dropping the oldest value when full.
func (r *ring[T]) push(v T) {
	if len(r.buf) == 0 {
		return
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// len is the number of values held.
func (r *ring[T]) len() int { return r.n }

// at returns the i-th oldest value held, 0 <= i < len.
func (r *ring[T]) at(i int) T { return r.buf[(r.start+i)%len(r.buf)] }

// last returns the newest value and whether there is one.
func (r *ring[T]) last() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	return r.at(r.n - 1), true
}

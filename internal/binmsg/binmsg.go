// Package binmsg decodes the coordinator's compact binary messages (the
// fairness guidance and reports in internal/fairgossip, the locality
// prices in internal/pricegossip) field by field: varints read from a byte
// slice, the first error kept and every later read a no-op, so a decoder
// reads a whole message and checks one error at the end.
//
// It is plumbing: only this module may import it, and it holds no
// scheduling logic. Not safe for concurrent use.
package binmsg

import (
	"encoding/binary"
	"fmt"
)

// Reader reads a message.
type Reader struct {
	// B is what is left to read.
	B []byte
	// Err is the first error; once set, reads return zero values.
	Err error
	// Malformed is wrapped by every error, so callers can match their
	// package's sentinel.
	Malformed error
}

// Fail records an error, unless one is already recorded.
func (r *Reader) Fail(format string, args ...any) {
	if r.Err == nil {
		r.Err = fmt.Errorf("%w: %s", r.Malformed, fmt.Sprintf(format, args...))
	}
}

// Uvarint reads an unsigned varint; what names it in the error.
func (r *Reader) Uvarint(what string) uint64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail("bad %s", what)
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Varint reads a signed (zig-zag) varint; what names it in the error.
func (r *Reader) Varint(what string) int64 {
	if r.Err != nil {
		return 0
	}
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail("bad %s", what)
		return 0
	}
	r.B = r.B[n:]
	return v
}

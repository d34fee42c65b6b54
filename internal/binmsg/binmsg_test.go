package binmsg

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

var errBad = errors.New("bad message")

func TestReaderReadsAndKeepsTheFirstError(t *testing.T) {
	b := binary.AppendUvarint(nil, 300)
	b = binary.AppendVarint(b, -7)
	r := Reader{B: b, Malformed: errBad}
	if u, v := r.Uvarint("count"), r.Varint("price"); u != 300 || v != -7 || r.Err != nil || len(r.B) != 0 {
		t.Fatalf("read %d, %d, err %v, %d left; want 300, -7, nil, 0", u, v, r.Err, len(r.B))
	}
	if u := r.Uvarint("size"); u != 0 || !errors.Is(r.Err, errBad) || !strings.Contains(r.Err.Error(), "bad size") {
		t.Fatalf("reading past the end: %d, %v; want 0 and an error naming the size", u, r.Err)
	}
	r.Fail("later problem")
	if strings.Contains(r.Err.Error(), "later") {
		t.Fatalf("a later failure replaced the first: %v", r.Err)
	}
	if v := r.Varint("price"); v != 0 {
		t.Fatalf("a read after an error returned %d", v)
	}
}

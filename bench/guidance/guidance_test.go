package guidance

import (
	"reflect"
	"sync/atomic"
	"testing"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []Size
		wantErr bool
	}{
		{"100:4:20", []Size{{100, 4, 20}}, false},
		{"100:4:20, 10000:100:5000", []Size{{100, 4, 20}, {10000, 100, 5000}}, false},
		{"100:4", nil, true},
		{"100:0:20", nil, true},
		{"4:100:20", nil, true},
		{"x:1:1", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v (error: %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestCountingTransportFindsUserMessages: the count takes user messages
// alone, inside CRC and compound framing, and stops at truncated frames.
func TestCountingTransportFindsUserMessages(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		user int64
	}{
		{"user message", []byte{mlUser, 1, 2, 3}, 4},
		{"ping", []byte{0, 1, 2, 3}, 0},
		{"with CRC", []byte{mlHasCRC, 0, 0, 0, 0, mlUser, 1}, 2},
		// Compound: a 2-byte ping and a 3-byte user message, each counted
		// with its 2-byte length.
		{"compound", []byte{mlCompound, 2, 0, 2, 0, 3, 0, 9, mlUser, 7, 7}, 5},
		{"truncated compound", []byte{mlCompound, 2, 0, 2, 0, 9, 0, 9, mlUser}, 0},
	}
	for _, tt := range tests {
		var total, user atomic.Int64
		ct := countingTransport{total: &total, user: &user}
		ct.count(tt.b)
		if user.Load() != tt.user || total.Load() != int64(len(tt.b)) {
			t.Errorf("%s: user %d, total %d; want %d, %d", tt.name, user.Load(), total.Load(), tt.user, len(tt.b))
		}
	}
}

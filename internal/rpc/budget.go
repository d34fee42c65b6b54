package rpc

import (
	"sync"
	"time"
)

// decodeFactor bounds the memory a request may decode to, per wire byte.
// Real requests stay well below it (a job of 1 KiB task messages decodes
// to about 1.1 bytes per wire byte, one of empty messages and one-byte ids
// to about 4); boundedProtocol refuses a frame whose decoding would pass
// it, such as a list of empty structs (about 77 bytes per wire byte; see
// docs/FUZZING.md). A frame is charged its own bytes plus this many times
// them, so the Budget bounds the memory of every request in flight.
const decodeFactor = 8

// decodeSlack is decoding memory every frame may use beyond decodeFactor
// times its size, so that tiny calls with a struct or two always decode.
const decodeSlack = 64 << 10

// frameCharge is what reading and decoding a frame of size bytes may cost.
func frameCharge(size int) int64 { return int64(size) * (1 + decodeFactor) }

// Budget bounds the bytes of requests being read and decoded at once,
// across every connection of the servers that share it. A frame is charged
// its size times (1 + decodeFactor) from the moment its header is read
// until its call returns; a frame that does not fit waits, up to the
// server's BudgetWait, and is then refused with an error the caller sees.
// A charge larger than the whole budget is clamped to it, so that a lone
// maximum-size frame always gets through on an otherwise quiet server.
//
// Safe for concurrent use.
type Budget struct {
	limit int64

	mu      sync.Mutex
	used    int64
	waiters int           // Acquire calls waiting for room
	freed   chan struct{} // closed and replaced at a Release with waiters
}

// NewBudget returns a budget of limit bytes; limit <= 0 means
// DefaultMemoryBudget.
func NewBudget(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultMemoryBudget
	}
	return &Budget{limit: limit, freed: make(chan struct{})}
}

// Limit returns the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse returns the bytes currently charged.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Acquire charges n bytes (clamped to the limit), waiting up to wait for
// room, or until cancel is closed. It returns the amount charged, to be
// passed to Release, and whether it was charged at all.
func (b *Budget) Acquire(n int64, wait time.Duration, cancel <-chan struct{}) (int64, bool) {
	n = min(max(n, 0), b.limit)
	var timer *time.Timer
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return n, true
		}
		freed := b.freed
		b.waiters++
		b.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		ok := true
		select {
		case <-freed:
		case <-timer.C:
			ok = false
		case <-cancel:
			timer.Stop()
			ok = false
		}
		b.mu.Lock()
		b.waiters--
		b.mu.Unlock()
		if !ok {
			return 0, false
		}
	}
}

// Release returns n bytes charged by Acquire.
func (b *Budget) Release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.waiters > 0 {
		close(b.freed)
		b.freed = make(chan struct{})
	}
	b.mu.Unlock()
}

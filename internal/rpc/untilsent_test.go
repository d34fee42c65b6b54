package rpc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestUntilSent(t *testing.T) {
	other := errors.New("refused")
	busy := fmt.Errorf("call x: %w (64 open)", ErrBusy)
	tests := []struct {
		name      string
		results   []error // what successive calls return; past the end, busy
		ctxAfter  time.Duration
		want      error
		wantCalls int
	}{
		{name: "sent at once", results: []error{nil}, want: nil, wantCalls: 1},
		{name: "busy twice, then sent", results: []error{busy, busy, nil}, want: nil, wantCalls: 3},
		{name: "another error is returned at once", results: []error{other}, want: other, wantCalls: 1},
		{name: "busy, then another error", results: []error{busy, other}, want: other, wantCalls: 2},
		{name: "busy until the context ends", results: nil, ctxAfter: 25 * time.Millisecond, want: ErrBusy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctxAfter > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxAfter)
				defer cancel()
			}
			calls, busies := 0, 0
			err := UntilSent(ctx, func() error {
				calls++
				if calls <= len(tt.results) {
					return tt.results[calls-1]
				}
				return busy
			}, func() { busies++ })
			if !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if tt.wantCalls > 0 && calls != tt.wantCalls {
				t.Fatalf("%d calls, want %d", calls, tt.wantCalls)
			}
			if tt.wantCalls == 0 && calls < 2 {
				t.Fatalf("%d calls before the context ended, want it tried again", calls)
			}
			wantBusies := calls - 1
			if err != nil && errors.Is(err, ErrBusy) {
				wantBusies = calls
			}
			if busies != wantBusies {
				t.Fatalf("onBusy called %d times for %d calls, want %d", busies, calls, wantBusies)
			}
		})
	}
}

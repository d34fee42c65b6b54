package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// PeekConfig says how LiveGraphNodes reaches the gossip cluster.
type PeekConfig struct {
	// Seeds are gossip addresses of members; Bind is the local gossip
	// "host:port" to use (port 0 picks one).
	Seeds []string
	Bind  string
	// Profile is the fleet's gossip timing ("lan", "local" or "wan") and
	// Keyring its key, if gossip is encrypted.
	Profile string
	Keyring *memberlist.Keyring
	// Want is how many profiled node monitors to wait for (0: any one);
	// Wait bounds the wait (0: 5 s). The view keeps filling while it
	// waits, so a larger Want sees a fuller fleet.
	Want int
	Wait time.Duration
	Log  zerolog.Logger
}

// LiveGraphNodes joins the gossip cluster briefly as an observer (never
// sampled, never asked for tasks), reads the node monitors that advertise
// a machine profile (`sparrow nodemonitor --profile`), and leaves. The
// nodes are sorted by host. Node monitors without a profile are skipped;
// one whose profile does not parse is an error that names it.
func LiveGraphNodes(ctx context.Context, cfg PeekConfig) ([]GraphNode, error) {
	if len(cfg.Seeds) == 0 {
		return nil, fmt.Errorf("live graph nodes: no gossip seeds")
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Second
	}
	var b [4]byte
	rand.Read(b[:])
	c, err := membership.Start(membership.Config{
		Name: "graph-peek-" + hex.EncodeToString(b[:]), Bind: cfg.Bind, Seeds: cfg.Seeds,
		Profile: cfg.Profile, Keyring: cfg.Keyring, Meta: membership.Meta{Role: membership.RoleObserver}, Log: cfg.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("live graph nodes: %w", err)
	}
	// Leave, not just stop, so peers drop the observer at once.
	defer c.Leave(time.Second)
	changed := make(chan struct{}, 1)
	c.Watch(func(membership.Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	deadline := time.NewTimer(cfg.Wait)
	defer deadline.Stop()
	for {
		nodes, err := profiled(c.Members(membership.RoleNodeMonitor))
		if err != nil || (len(nodes) > 0 && len(nodes) >= cfg.Want) {
			return nodes, err
		}
		select {
		case <-changed:
		case <-deadline.C:
			if len(nodes) == 0 {
				return nil, fmt.Errorf("live graph nodes: no node monitor with a %q attribute seen within %v via %v",
					perfmodel.ProfileAttr, cfg.Wait, cfg.Seeds)
			}
			return nodes, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("live graph nodes: %w", ctx.Err())
		}
	}
}

func profiled(members []membership.Member) ([]GraphNode, error) {
	var nodes []GraphNode
	for _, m := range members {
		if _, ok := m.Meta.Attrs[perfmodel.ProfileAttr]; !ok {
			continue
		}
		host, _, err := net.SplitHostPort(m.Meta.Internal)
		if err != nil {
			return nil, fmt.Errorf("node monitor %s advertises internal address %q: %w", m.Name, m.Meta.Internal, err)
		}
		n, err := GraphNodeFromAttrs(host, m.Meta.Attrs)
		if err != nil {
			return nil, fmt.Errorf("node monitor %s: %w", m.Name, err)
		}
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b GraphNode) int { return strings.Compare(a.Host, b.Host) })
	return nodes, nil
}

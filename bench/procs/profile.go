package procs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
)

// profile fetches, concurrently with the drive, a CPU profile of
// cfg.Profile from the first scheduler and the first node monitor into
// cfg.Dir/NAME.cpu.pprof. The channel yields once both are done.
func profile(ctx context.Context, cfg Config, members []*member) <-chan error {
	done := make(chan error, 1)
	if cfg.Profile <= 0 {
		done <- nil
		return done
	}
	var targets []*member
	for _, role := range []Role{Scheduler, NodeMonitor} {
		for _, m := range members {
			if m.role == role {
				targets = append(targets, m)
				break
			}
		}
	}
	go func() {
		errs := make(chan error, len(targets))
		for _, m := range targets {
			go func() { errs <- fetchProfile(ctx, m, cfg) }()
		}
		var all []error
		for range targets {
			all = append(all, <-errs)
		}
		done <- errors.Join(all...)
	}()
	return done
}

func fetchProfile(ctx context.Context, m *member, cfg Config) error {
	secs := max(1, int(cfg.Profile.Seconds()))
	url := "http://" + m.http + "/debug/pprof/profile?seconds=" + strconv.Itoa(secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s profile: %w", m.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s profile: %s", m.name, resp.Status)
	}
	f, err := os.Create(filepath.Join(cfg.Dir, m.name+".cpu.pprof"))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("%s profile: %w", m.name, err)
	}
	return f.Close()
}

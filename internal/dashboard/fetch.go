package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
)

// MaxStatusBytes bounds a /status body. A real one is a few kilobytes even
// with thousands of users; a longer one is refused, not read.
const MaxStatusBytes = 1 << 20

// Fetcher reads one member's /status.
type Fetcher interface {
	Status(ctx context.Context, httpAddr string) (httpapi.Status, error)
}

// HTTPFetcher reads /status over HTTP with Client (its TLS settings and
// timeout are the caller's). Scheme is "http" when empty.
type HTTPFetcher struct {
	Client *http.Client
	Scheme string
}

// Status asks the member at httpAddr for its /status. A body over
// MaxStatusBytes, a status code other than 200 or JSON that does not
// decode is an error naming what was wrong.
func (f HTTPFetcher) Status(ctx context.Context, httpAddr string) (httpapi.Status, error) {
	var st httpapi.Status
	scheme := f.Scheme
	if scheme == "" {
		scheme = "http"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+httpAddr+"/status", nil)
	if err != nil {
		return st, err
	}
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the address is shown beside the member already
		}
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("/status answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxStatusBytes+1))
	if err != nil {
		return st, fmt.Errorf("/status: %w", err)
	}
	return decodeStatus(body)
}

// decodeStatus parses a /status body of at most MaxStatusBytes.
func decodeStatus(body []byte) (httpapi.Status, error) {
	var st httpapi.Status
	if len(body) > MaxStatusBytes {
		return st, fmt.Errorf("/status body over %d bytes", MaxStatusBytes)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("/status is not a status document: %w", err)
	}
	return st, nil
}

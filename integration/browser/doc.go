// Package browser tests the fleet dashboard in a real browser: a headless
// Chromium driven through chromedp against a live loopback fleet of
// separate processes. It is a Go module of its own so that the product's
// go.mod does not carry the browser driver; `make test` runs it.
package browser

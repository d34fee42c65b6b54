// Package dashboard is the fleet's web page: a read-only view served at
// /ui/ by any member with --http-listen, and by `sparrow ui` as a gossip
// observer.
//
// A Dashboard polls what the members already publish: the gossip view
// (who is in the fleet, in which role) and each member's /status. From
// each round it keeps the latest state of every member and a fixed-length
// history per series (per user, per scheduler), so a page left open for a
// week costs the same memory as one opened a minute ago. Pages and
// charts are rendered on the server (html/template, and SVG charts
// through internal/plot); the page's one small script only swaps in the
// next rendering, and nothing is fetched from outside the fleet.
//
// What a member answers is untrusted: a /status body is read up to a
// bound, decoded with a deadline, and its lists and maps are cut to
// bounds before anything is kept, so a malformed, huge or slow answer
// marks that member unreachable and changes nothing else.
//
// It is plumbing: it must not import the daemons; commands hand it a
// gossip view and an HTTP client.
package dashboard

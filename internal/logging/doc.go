// Package logging builds the zerolog loggers every sparrowfleet process uses,
// and adapts standard-library loggers (the log package's default, and
// their "[LEVEL]" prefixes, which memberlist's logger writes too) into
// them, so that one process writes one structured stream.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package logging

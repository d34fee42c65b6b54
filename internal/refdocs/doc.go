// Package refdocs renders the generated reference: one Markdown page per
// command with every flag (cobra's doc generator), and every Prometheus
// metric of a set of collectors with its type, labels and help text. The
// output depends only on the commands and collectors given, never on the
// date or the machine, so a test can compare it with the committed files.
//
// It is plumbing: it must not import the daemons; the command hands it
// the root command and the collectors to document.
package refdocs

// Package samestr compares strings that are usually the very same string.
package samestr

import "unsafe"

// Equal reports whether a == b. A node monitor compares the strings of
// each reservation with those it keeps (its app, the shapes of its queue,
// its running tasks' keys), which nearly always share their bytes: Equal
// answers those, and empty strings, by length and address alone, where
// == calls the runtime to compare memory whenever the lengths match.
func Equal(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

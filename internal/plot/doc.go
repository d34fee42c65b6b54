// Package plot draws the line charts of the simulator and the benchmarks
// (`sparrow sim --plot`, `sparrow bench fairness|priority|constraints
// --plot`) as SVG or PNG files, on top of gonum.org/v1/plot.
//
// It is plumbing for this module's harnesses only: a [Chart] is a title
// and subtitle, two axes (linear or log, automatic or fixed ranges and
// ticks), a list of [Series] (plain, dashed or step lines, with or
// without markers) and a few lines of notes; the legend and the notes
// are drawn in a column to the right of the data so that they never
// cover it. [Chart.Save] picks the format from the file name's
// extension.
//
// Drawing is gonum's: axes, lines, glyphs, text with its bundled
// Liberation fonts, and both output formats. This package only places
// the blocks, picks tick values and draws the y label (see draw for
// why). It holds no state, starts no goroutines and reads no clock;
// Save is its only file I/O.
package plot

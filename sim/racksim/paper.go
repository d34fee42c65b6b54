package racksim

// PaperDT is one row of the paper's data-transfer tables: TB in total,
// across a rack switch ("cross rack" in Table 2, "same rack" in Table 4)
// and across the core switch ("cross cluster").
type PaperDT struct {
	Policy      string
	Makespan    float64 // seconds; 0 where the table gives none
	Total, Rack float64
	Core        float64
}

// PaperTable2 is Table 2 (K = 1, unconstrained, mean of three runs).
var PaperTable2 = []PaperDT{
	{"G", 5239, 2.49, 0.352, 0.461},
	{"Q", 5671, 2.49, 0.446, 0.379},
	{"QP", 5087, 2.49, 0.177, 0.131},
}

// PaperTable4 is Table 4 (K = 10, constrained network, no PrimeLarge,
// mean of three runs); "ideal" is the K = 1 QFPX run.
var PaperTable4 = []PaperDT{
	{"ideal", 0, 2.47, 0.405, 0.124},
	{"GFP", 0, 2.54, 1.095, 0.760},
	{"QFP", 0, 2.53, 0.776, 0.437},
	{"QFPX", 0, 2.56, 0.905, 0.192},
}

// PaperSolve is §6.5's solver time per solve on the 243-computer cluster:
// mean and maximum, in ms (CS2 on 2009 hardware, each solve from scratch).
var PaperSolve = struct{ MeanMS, MaxMS float64 }{7.64, 57.59}

// PaperTable4Row returns Table 4's row for a policy name ("ideal" too).
func PaperTable4Row(name string) (PaperDT, bool) {
	for _, r := range PaperTable4 {
		if r.Policy == name {
			return r, true
		}
	}
	return PaperDT{}, false
}

// PaperTable2Row returns Table 2's row for a policy.
func PaperTable2Row(name string) (PaperDT, bool) {
	for _, r := range PaperTable2 {
		if r.Policy == name {
			return r, true
		}
	}
	return PaperDT{}, false
}

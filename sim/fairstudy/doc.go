// Package fairstudy runs sparrow sim fairness: the simulation of package
// sim/constrained over several seeds, each policy compared with the
// offline CMMF scheduler, the seeds averaged, and the results printed as
// tables, JSON or charts. It times each policy's run in wall and CPU
// time, which the deterministic simulator itself never reads.
package fairstudy

package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// Graph is a job's task graph.
type Graph struct {
	Tasks []Task `json:"tasks"`
	Arcs  []Arc  `json:"arcs"`
}

// Task is one vertex of the job: a run of a task type.
type Task struct {
	// Name identifies the task in arcs, plans and errors.
	Name string `json:"name"`
	// Type names the task type's performance model.
	Type string `json:"type"`
	// Inputs are the input tables (files) the task reads.
	Inputs []Input `json:"inputs,omitempty"`
	// Output is the bytes written per write channel to output tables, in
	// addition to the task's out-arcs.
	Output []float64 `json:"output,omitempty"`
}

// Input is an input table stored on a machine.
type Input struct {
	// Machine names the machine whose disk holds the table.
	Machine string `json:"machine"`
	// Bytes is the table's size.
	Bytes float64 `json:"bytes"`
	// Channel is the model read channel the table feeds.
	Channel int `json:"channel,omitempty"`
}

// Arc is a channel from a producer task to a consumer task.
type Arc struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Bytes is the data volume the consumer reads from the producer.
	Bytes float64 `json:"bytes"`
	// Pipelined marks a TCP or FIFO channel: the consumer may start once
	// the producer has started, reads from its memory, and finishes no
	// earlier than it. By default the channel is a file, and the consumer
	// starts only after the producer finishes (§3.1).
	Pipelined bool `json:"pipelined,omitempty"`
	// WriteChannel and ReadChannel are the producer's and the consumer's
	// model channels for this arc.
	WriteChannel int `json:"write_channel,omitempty"`
	ReadChannel  int `json:"read_channel,omitempty"`
}

// Problem is everything a plan needs.
type Problem struct {
	Graph    Graph                      `json:"graph"`
	Machines []perfmodel.Machine        `json:"machines"`
	Models   map[string]perfmodel.Model `json:"models"`
}

// Limits on a problem's size, so a malformed input cannot exhaust memory.
const (
	MaxTasks    = 10000
	MaxMachines = 1000
	maxChannel  = 64
)

// ParseProblem decodes a Problem from JSON and validates it.
func ParseProblem(data []byte) (Problem, error) {
	var p Problem
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Problem{}, fmt.Errorf("problem: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Problem{}, err
	}
	return p, nil
}

// Validate reports the first problem that makes the graph unplannable:
// unknown names, bad sizes or channels, duplicate arcs, cycles.
func (p Problem) Validate() error {
	if len(p.Machines) == 0 {
		return fmt.Errorf("problem: no machines")
	}
	if len(p.Machines) > MaxMachines {
		return fmt.Errorf("problem: %d machines, at most %d", len(p.Machines), MaxMachines)
	}
	machines := map[string]bool{}
	for i, m := range p.Machines {
		if m.Name == "" {
			return fmt.Errorf("problem: machine %d has no name", i)
		}
		if machines[m.Name] {
			return fmt.Errorf("problem: machine %q named twice", m.Name)
		}
		machines[m.Name] = true
		if err := m.Validate(); err != nil {
			return fmt.Errorf("problem: %w", err)
		}
	}
	for name, m := range p.Models {
		if m.Type != name {
			return fmt.Errorf("problem: model under %q has type %q", name, m.Type)
		}
		if err := m.Validate(); err != nil {
			return fmt.Errorf("problem: %w", err)
		}
	}
	g := p.Graph
	if len(g.Tasks) == 0 {
		return fmt.Errorf("graph: no tasks")
	}
	if len(g.Tasks) > MaxTasks {
		return fmt.Errorf("graph: %d tasks, at most %d", len(g.Tasks), MaxTasks)
	}
	if len(g.Arcs) > 100*MaxTasks {
		return fmt.Errorf("graph: %d arcs, at most %d", len(g.Arcs), 100*MaxTasks)
	}
	badBytes := func(b float64) bool { return b < 0 || math.IsNaN(b) || math.IsInf(b, 0) }
	index := map[string]int{}
	for i, t := range g.Tasks {
		if t.Name == "" {
			return fmt.Errorf("graph: task %d has no name", i)
		}
		if _, dup := index[t.Name]; dup {
			return fmt.Errorf("graph: task %q named twice", t.Name)
		}
		index[t.Name] = i
		m, ok := p.Models[t.Type]
		if !ok {
			return fmt.Errorf("graph: task %q has type %q, which has no model", t.Name, t.Type)
		}
		nr, nw := len(m.RefRead()), len(m.RefWrite())
		for j, in := range t.Inputs {
			if !machines[in.Machine] {
				return fmt.Errorf("graph: task %q input %d on unknown machine %q", t.Name, j, in.Machine)
			}
			if badBytes(in.Bytes) {
				return fmt.Errorf("graph: task %q input %d has %v bytes", t.Name, j, in.Bytes)
			}
			if in.Channel < 0 || in.Channel >= nr {
				return fmt.Errorf("graph: task %q input %d on read channel %d; type %q has %d", t.Name, j, in.Channel, t.Type, nr)
			}
		}
		if len(t.Output) > nw {
			return fmt.Errorf("graph: task %q writes %d output channels; type %q has %d", t.Name, len(t.Output), t.Type, nw)
		}
		for j, b := range t.Output {
			if badBytes(b) {
				return fmt.Errorf("graph: task %q output %d has %v bytes", t.Name, j, b)
			}
		}
	}
	seen := map[[2]int]bool{}
	for i, a := range g.Arcs {
		from, ok := index[a.From]
		if !ok {
			return fmt.Errorf("graph: arc %d from unknown task %q", i, a.From)
		}
		to, ok := index[a.To]
		if !ok {
			return fmt.Errorf("graph: arc %d to unknown task %q", i, a.To)
		}
		if from == to {
			return fmt.Errorf("graph: arc %d from task %q to itself", i, a.From)
		}
		if seen[[2]int{from, to}] {
			return fmt.Errorf("graph: arc %q → %q appears twice", a.From, a.To)
		}
		seen[[2]int{from, to}] = true
		if badBytes(a.Bytes) {
			return fmt.Errorf("graph: arc %q → %q has %v bytes", a.From, a.To, a.Bytes)
		}
		if a.WriteChannel < 0 || a.ReadChannel < 0 {
			return fmt.Errorf("graph: arc %q → %q on a negative channel", a.From, a.To)
		}
		if a.Bytes == 0 {
			continue // a pure precedence: no channel carries it
		}
		if nw := len(p.Models[g.Tasks[from].Type].RefWrite()); a.WriteChannel >= nw {
			return fmt.Errorf("graph: arc %q → %q on write channel %d; type %q has %d", a.From, a.To, a.WriteChannel, g.Tasks[from].Type, nw)
		}
		if nr := len(p.Models[g.Tasks[to].Type].RefRead()); a.ReadChannel >= nr {
			return fmt.Errorf("graph: arc %q → %q on read channel %d; type %q has %d", a.From, a.To, a.ReadChannel, g.Tasks[to].Type, nr)
		}
	}
	if cyc := findCycle(len(g.Tasks), g.Arcs, index); cyc != nil {
		names := make([]string, len(cyc))
		for i, t := range cyc {
			names[i] = g.Tasks[t].Name
		}
		return fmt.Errorf("graph: cycle %s", strings.Join(names, " → "))
	}
	return nil
}

// findCycle returns a cycle's tasks (first repeated at the end), or nil.
func findCycle(n int, arcs []Arc, index map[string]int) []int {
	succ := make([][]int, n)
	for _, a := range arcs {
		succ[index[a.From]] = append(succ[index[a.From]], index[a.To])
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, n)
	parent := make([]int, n)
	for s := range n {
		if color[s] != white {
			continue
		}
		// Iterative DFS: deep graphs must not overflow the stack.
		type frame struct{ v, next int }
		stack := []frame{{s, 0}}
		color[s] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(succ[f.v]) {
				color[f.v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			w := succ[f.v][f.next]
			f.next++
			switch color[w] {
			case white:
				color[w] = grey
				parent[w] = f.v
				stack = append(stack, frame{w, 0})
			case grey:
				cyc := []int{w}
				for v := f.v; v != w; v = parent[v] {
					cyc = append(cyc, v)
				}
				for i, j := 1, len(cyc)-1; i < j; i, j = i+1, j-1 {
					cyc[i], cyc[j] = cyc[j], cyc[i]
				}
				return append(cyc, w)
			}
		}
	}
	return nil
}

package racksim

import (
	"fmt"
	"slices"

	"github.com/sparrowfleet/sparrow/core/quincy"
)

// nearest returns the replica of b a task on m reads and the byte class.
func (e *engine) nearest(b *quincy.Block, m int) (src, class int) {
	src, class = -1, core+1
	for _, r := range b.Replicas {
		c := core
		switch {
		case r == m:
			c = local
		case e.rackOf[r] == e.rackOf[m]:
			c = rack
		}
		if c < class {
			src, class = r, c
		}
	}
	return src, class
}

// start runs worker tk on free computer m: its reads start as flows from
// the nearest replicas, and its CPU time follows once they are done.
func (e *engine) start(tk *task, m int) error {
	if e.occupant[m] != -1 {
		return fmt.Errorf("start task %d on computer %d held by %d", tk.id, m, e.occupant[m])
	}
	if tk.state != waiting {
		return fmt.Errorf("start task %d in state %d", tk.id, tk.state)
	}
	j := e.jobOf(tk)
	e.occupant[m] = tk.id
	tk.waitedBefore += dur(e.now) - dur(tk.since)
	tk.state, tk.computer, tk.since, tk.startedAt = running, m, e.now, e.now
	tk.attempt++
	j.running++
	e.res.Starts++
	// Bytes by source computer, class, and whether they are a gather's
	// (an all-to-all shuffle, which no placement makes local).
	type src struct {
		m, class int
		gather   bool
		bytes    float64
	}
	var srcs []src
	firstGather := len(tk.input)
	if p := &j.inst.Phases[tk.phase]; p.Gather {
		firstGather = len(p.Read)
	}
	for b := range tk.input {
		blk := &tk.input[b]
		if blk.Bytes == 0 {
			continue
		}
		s, c := e.nearest(blk, m)
		g := b >= firstGather
		found := false
		for i := range srcs {
			if srcs[i].m == s && srcs[i].gather == g {
				srcs[i].bytes += float64(blk.Bytes)
				found = true
				break
			}
		}
		if !found {
			srcs = append(srcs, src{s, c, g, float64(blk.Bytes)})
		}
	}
	tk.delay, tk.flowsLeft = 0, 0
	remote, remoteBytes := 0, 0.0
	for _, s := range srcs {
		if s.class != local {
			remote++
			remoteBytes += s.bytes
		}
	}
	// Many sources (a gather): one flow per source rack, limited by the
	// reader's NIC and the racks' uplinks; the many senders' NICs are not
	// the bottleneck and are left out. A task whose remote reads total
	// less than SmallRead (and a local read that small) is not simulated
	// as flows: it takes its uncontended time.
	aggregate := remote > 8
	small := func(s src) bool {
		if s.class == local {
			return s.bytes < e.cfg.SmallRead
		}
		return remoteBytes < e.cfg.SmallRead
	}
	type rackKey struct {
		l      int
		gather bool
	}
	perRack := map[rackKey]float64{}
	var rackOrder []rackKey
	for _, s := range srcs {
		if small(s) {
			rate := e.cfg.NIC
			if s.class == local {
				rate = e.cfg.Disk
			}
			tk.delay += s.bytes / rate
			e.account(s.class, s.gather, s.bytes)
			continue
		}
		var links []int
		switch {
		case s.class == local:
			links = []int{e.diskLink(m)}
		case aggregate:
			k := rackKey{e.rackOf[s.m], s.gather}
			if _, ok := perRack[k]; !ok {
				rackOrder = append(rackOrder, k)
			}
			perRack[k] += s.bytes
			continue
		case s.class == rack:
			links = []int{e.outLink(s.m), e.inLink(m)}
		default:
			links = []int{e.outLink(s.m), e.upLink(e.rackOf[s.m]), e.downLink(e.rackOf[m]), e.inLink(m)}
		}
		e.addFlow(tk, links, s.bytes, s.class, s.gather)
	}
	slices.SortFunc(rackOrder, func(a, b rackKey) int {
		if a.l != b.l {
			return a.l - b.l
		}
		if a.gather == b.gather {
			return 0
		}
		if a.gather {
			return 1
		}
		return -1
	})
	for _, k := range rackOrder {
		if k.l == e.rackOf[m] {
			e.addFlow(tk, []int{e.inLink(m)}, perRack[k], rack, k.gather)
		} else {
			e.addFlow(tk, []int{e.upLink(k.l), e.downLink(e.rackOf[m]), e.inLink(m)}, perRack[k], core, k.gather)
		}
	}
	if tk.flowsLeft == 0 {
		e.ev.push(e.now+tk.delay+tk.cpu, evCPUDone, tk.id, tk.attempt)
	}
	return nil
}

// account adds bytes read to DT.
func (e *engine) account(class int, gather bool, bytes float64) {
	e.res.Bytes[class] += bytes
	if gather {
		e.res.GatherBytes[class] += bytes
	}
}

func (e *engine) addFlow(tk *task, links []int, bytes float64, class int, gather bool) {
	id := e.net.Add(e.now, links, bytes)
	for len(e.flows) <= id {
		e.flows = append(e.flows, flowRef{task: -1})
	}
	e.flows[id] = flowRef{task: tk.id, class: class, attempt: tk.attempt, gather: gather}
	tk.flowIDs = append(tk.flowIDs, id)
	tk.flowsLeft++
}

// flowDone accounts a finished flow and starts the task's CPU time once
// its last read is done.
func (e *engine) flowDone(id int, bytes float64) {
	ref := e.flows[id]
	e.flows[id].task = -1
	if ref.task < 0 {
		return
	}
	e.account(ref.class, ref.gather, bytes)
	tk := e.tasks[ref.task]
	if tk.state != running || tk.attempt != ref.attempt {
		return
	}
	tk.flowsLeft--
	if tk.flowsLeft == 0 {
		e.ev.push(e.now+tk.delay+tk.cpu, evCPUDone, tk.id, tk.attempt)
	}
}

// kill stops running worker tk (preemption, or a root taking its
// computer); what it read so far counts in DT. The scheduler hears of it
// as a newly submitted task.
func (e *engine) kill(tk *task) {
	tk.ranBefore += dur(e.now) - dur(tk.since)
	e.stop(tk)
	tk.state, tk.since = waiting, e.now
	e.res.Kills++
	e.dirty = true
	e.sched.submitted(tk)
}

// stop ends tk's attempt on its computer.
func (e *engine) stop(tk *task) {
	for _, id := range tk.flowIDs {
		if r := e.flows[id]; r.task == tk.id && r.attempt == tk.attempt {
			e.account(r.class, r.gather, e.net.Remove(e.now, id))
			e.flows[id].task = -1
		}
	}
	e.occupant[tk.computer] = -1
	e.jobOf(tk).running--
	tk.computer = -1
	tk.flowsLeft = 0
	tk.flowIDs = tk.flowIDs[:0]
	tk.attempt++
}

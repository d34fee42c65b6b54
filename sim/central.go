package sim

import (
	"container/heap"
	"strconv"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
)

// centralJob is one job waiting or running under TraceCentral.
type centralJob struct {
	mean    float64   // trace seconds
	est     float64   // estimated task duration, ms
	arrival float64   // ms
	dur     []float64 // ms; dur[next:] are unlaunched
	next    int
	left    int // unfinished tasks
	lastEnd float64
}

// centralEnd is a running task's end.
type centralEnd struct {
	t   float64
	job int32
}

type centralEnds []centralEnd

func (h centralEnds) Len() int           { return len(h) }
func (h centralEnds) Less(i, j int) bool { return h[i].t < h[j].t }
func (h centralEnds) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *centralEnds) Push(x any)        { *h = append(*h, x.(centralEnd)) }
func (h *centralEnds) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// runCentral replays the trace under TraceCentral. Jobs are read one
// arrival ahead, as by the other policies; only jobs not yet finished are
// held.
func (s *traceSim) runCentral() (TraceResult, error) {
	if err := s.readNext(); err != nil {
		return TraceResult{}, err
	}
	if s.more {
		s.first = s.upcoming.Submit
	}
	free := s.cfg.Nodes * s.cfg.Slots
	jobs := map[int32]*centralJob{}
	waiting := shortjobs.NewBacklog() // every job with unlaunched tasks, by remaining work
	var ends centralEnds
	var seq int32
	delay := 3 * s.cfg.RTT / 2
	for s.more || len(ends) > 0 {
		// The next arrival becomes dispatchable after the late-binding
		// delay; a task end at the same time frees its slot first.
		ta := s.simMS((s.upcoming.Submit-s.first)*s.cfg.GapScale) + delay
		if s.more && (len(ends) == 0 || ta < ends[0].t) {
			s.now = max(s.now, ta)
			tj := s.upcoming
			if err := s.readNext(); err != nil {
				return TraceResult{}, err
			}
			s.res.Jobs++
			s.res.Tasks += int64(len(tj.Durations))
			j := &centralJob{mean: tj.Mean(), arrival: s.now - delay, left: len(tj.Durations)}
			j.est = s.simMS(j.mean)
			for _, d := range tj.Durations {
				j.dur = append(j.dur, s.simMS(d))
			}
			jobs[seq] = j
			waiting.Set(strconv.Itoa(int(seq)), float64(len(j.dur))*j.est)
			seq++
		} else {
			e := heap.Pop(&ends).(centralEnd)
			s.now = e.t
			free++
			j := jobs[e.job]
			if j.left--; j.left == 0 {
				s.rec.Job(int(e.job), j.mean, j.arrival/1000, j.lastEnd/1000)
				delete(jobs, e.job)
			}
		}
		s.res.Events++
		for free > 0 {
			id, _, ok := waiting.Least()
			if !ok {
				break
			}
			k, _ := strconv.Atoi(id)
			j := jobs[int32(k)]
			d := j.dur[j.next]
			j.next++
			free--
			end := s.now + d
			j.lastEnd = max(j.lastEnd, end)
			s.rec.Task(j.mean, j.arrival/1000, s.now/1000, d/1000)
			heap.Push(&ends, centralEnd{t: end, job: int32(k)})
			waiting.Set(id, float64(len(j.dur)-j.next)*j.est)
		}
	}
	s.res.Result = s.rec.Result(s.cfg.Nodes * s.cfg.Slots)
	s.res.SimSeconds = s.now / 1000
	return s.res, nil
}

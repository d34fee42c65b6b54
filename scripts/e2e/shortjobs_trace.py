#!/usr/bin/env python3
"""Writes the mixed-length job trace of the fault suite's short-jobs mode
(scripts/e2e/run.sh with E2E_SHORT_JOBS=1), for `sparrow drive --job-trace`.

  shortjobs_trace.py JOBS SLOTS LOAD > trace.tr

One job a line, in the Hawk/Eagle format (docs/TRACE-REPLAY.md):
submit_s n_tasks mean_task_s d_1 ... d_n, in seconds. Every LONG_EVERY-th
job (from the third) is long: LONG_TASKS tasks of 1.5-2.5 s, their mean
above the fleet's cutoff (1 s). The others are short: 2-4 tasks of
0.1-0.3 s, few enough that a scheduler can steer them to node monitors
advertising no long work. Arrivals are evenly spaced so that the trace's
work keeps LOAD of SLOTS busy over its span. The draws are seeded: the
same arguments give the same trace.
"""
import random
import sys

LONG_EVERY = 12
LONG_TASKS = 4


def jobs(n, rng):
    for i in range(n):
        if i % LONG_EVERY == 2:
            yield [round(rng.uniform(1.5, 2.5), 3) for _ in range(LONG_TASKS)]
        else:
            yield [round(rng.uniform(0.1, 0.3), 3) for _ in range(rng.randint(2, 4))]


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    n, slots, load = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    durs = list(jobs(n, random.Random(1)))
    work = sum(sum(d) for d in durs)
    gap = work / (slots * load) / max(1, n - 1)
    for i, d in enumerate(durs):
        # The mean is printed with enough digits to match the durations
        # within the reader's tolerance.
        print(f"{i * gap:.6f} {len(d)} {sum(d) / len(d):.9f} " + " ".join(f"{x:.3f}" for x in d))
    return 0


if __name__ == "__main__":
    sys.exit(main())

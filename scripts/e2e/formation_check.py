#!/usr/bin/env python3
"""Reads `sparrow status --watch --json` samples and finds the first in
which every member is listed and reports, as its /status view_size, the
whole fleet; prints how long after the last member started that was.

With --mixed some members are an older build that reports no view_size:
the sample is complete when every member is listed, every member that
reports a view_size reports the whole fleet, and the sample flags mixed
versions.

With --quiet it prints nothing and exits 0 once the fleet is complete (the
formation script polls it); otherwise it prints one markdown row
(scenario, time, bound, PASS or FAIL)."""
import argparse
import json
import sys
from datetime import datetime


def parse_time(s):
    """Parses an RFC 3339 time with up to nanoseconds, as Docker and Go write it."""
    s = s.strip().replace("Z", "+00:00")
    head, _, tz = s.partition("+")
    if "." in head:
        base, frac = head.split(".", 1)
        head = base + "." + (frac + "000000")[:6]
    return datetime.fromisoformat(head + "+" + (tz or "00:00"))


def complete(sample, members, mixed):
    daemons = [m for m in sample.get("members", []) if m.get("role") != "observer"]
    if len(daemons) != members:
        return False
    if mixed:
        sizes = [m["view_size"] for m in daemons if m.get("view_size")]
        return bool(sizes) and all(s == members for s in sizes) and sample.get("mixed_versions") is True
    return all(m.get("view_size") == members for m in daemons)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", type=int, required=True)
    ap.add_argument("--started", required=True, help="file of the members' start times, one per line")
    ap.add_argument("--bound", type=float, default=3.0)
    ap.add_argument("--scenario", default="")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--mixed", action="store_true")
    ap.add_argument("samples")
    a = ap.parse_args()
    with open(a.started) as f:
        last = max(parse_time(l) for l in f if l.strip())
    first = None
    seen = 0
    first_sample = None
    with open(a.samples) as f:
        for line in f:
            try:
                sample = json.loads(line)
            except ValueError:
                continue
            seen += 1
            if first_sample is None:
                first_sample = parse_time(sample["at"])
            if complete(sample, a.members, a.mixed):
                first = parse_time(sample["at"])
                break
    if a.quiet:
        return 0 if first else 1
    if first is None:
        print(f"| {a.scenario} | never complete in {seen} samples | {a.bound:g} s | FAIL |")
        return 0
    took = max(0.0, (first - last).total_seconds())
    verdict = "PASS" if took <= a.bound else "FAIL"
    note = " (complete at the observer's first sample)" if first == first_sample else ""
    print(f"| {a.scenario} | {took:.2f} s{note} | {a.bound:g} s | {verdict} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

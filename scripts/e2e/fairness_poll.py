#!/usr/bin/env python3
"""Polls a fairness fleet's /status endpoints (used by scripts/e2e/fairness.sh).

  fairness_poll.py OUT.jsonl EVERY_S NAME=URL...

Every EVERY_S seconds it GETs each URL at once (a 0.4 s timeout each: a
paused or cut-off daemon must not stall the others) and appends one JSON
line to OUT.jsonl:

  {"t": <host time, s since the epoch>,
   "coord": {NAME: <the coordinator's "coordinator" object, or null>},
   "nm": {"ok": <node monitors that answered>,
          "running": {USER: <running tasks summed over those>},
          "queued": {USER: ...}}}

Names starting with "coord" are coordinators, the rest node monitors. It
runs until killed (SIGTERM). The node monitors' sums are the ground truth
the coordinators' reported counts lag by up to a period.
"""
import concurrent.futures
import json
import signal
import sys
import time
import urllib.request


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=0.4) as r:
            return json.load(r)
    except Exception:  # down, paused, cut off or mid-restart: no sample
        return None


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    out, every = sys.argv[1], float(sys.argv[2])
    targets = [a.split("=", 1) for a in sys.argv[3:]]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(targets))
    with open(out, "a", buffering=1) as f:
        while True:
            t0 = time.time()
            res = dict(zip([n for n, _ in targets], pool.map(get, [u for _, u in targets])))
            line = {"t": t0, "coord": {}, "nm": {"ok": 0, "running": {}, "queued": {}}}
            for name, st in res.items():
                if name.startswith("coord"):
                    line["coord"][name] = st.get("coordinator") if st else None
                    continue
                nm = (st or {}).get("nodemonitor")
                if nm is None:
                    continue
                line["nm"]["ok"] += 1
                for u, c in (nm.get("users") or {}).items():
                    for k in ("running", "queued"):
                        line["nm"][k][u] = line["nm"][k].get(u, 0) + c.get(k, 0)
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            time.sleep(max(0.0, every - (time.time() - t0)))


if __name__ == "__main__":
    sys.exit(main())

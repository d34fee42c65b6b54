"""Helpers shared by the e2e report scripts (report.py, fairness_report.py,
locality_report.py): reading a scenario's env file and timeline, and
writing its result."""
import json
import os


def read_env(path):
    """The KEY=VALUE lines of path as a dict ({} if it does not exist)."""
    env = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    return env


def fnum(env, k):
    """env[k] as a float, or None if missing or not a number."""
    try:
        return float(env[k])
    except (KeyError, ValueError):
        return None


def timeline(out):
    """The samples of out/timeline.jsonl, skipping lines cut off mid-write."""
    samples = []
    p = os.path.join(out, "timeline.jsonl")
    if os.path.exists(p):
        for line in open(p):
            try:
                samples.append(json.loads(line))
            except ValueError:
                pass
    return samples


def finish(d, res, keys):
    """Write res to d/result.json, print its checks and the figures named
    by keys, and return the exit code: 1 if a check failed."""
    json.dump(res, open(os.path.join(d, "result.json"), "w"), indent=1, sort_keys=True)
    for c in res["checks"]:
        print(f"  {res['scenario']}: {c}")
    print(f"  {res['scenario']}: " + json.dumps({k: res.get(k) for k in keys}))
    return 1 if res["failed"] else 0


def fmt(v, unit=""):
    """v with its unit, or a dash for None."""
    return "–" if v is None else f"{v}{unit}"


def results(out, names):
    """(name, result) for each scenario in names, result None if it wrote
    no out/name/result.json."""
    for n in names:
        p = os.path.join(out, n, "result.json")
        yield n, (json.load(open(p)) if os.path.exists(p) else None)

"""The oracle for src/zone (tests/oracles/zones.rs): Python's zoneinfo, run with PYTHONTZPATH
empty so that it reads the pinned tzdata package, the release src/zone/table.rs comes from.

One JSON question per line on stdin, one JSON answer per line on stdout:
- {"names": true} -> {"names": [...]}: zoneinfo.available_timezones()
- {"zone": Z, "offsets": [t, ...], "civil": [c, ...], "scan": [from, to]} ->
  {"offsets": [...], "iso": [...], "civil": [...], "transitions": [...]}: the UTC offset at
  each Unix second and its ISO 8601 wall-clock reading; what each civil second (seconds since 1970-01-01T00:00 on the wall clock) is, as
  ["unique", t], ["gap", first instant after the gap] or ["fold", first, second]; and the
  instants in [from, to) where the offset changes, found by a daily scan and bisection (no zone changes twice within a day).
"""
import json
import sys
import zoneinfo
from datetime import datetime, timedelta

EPOCH = datetime(1970, 1, 1)
SECOND = timedelta(seconds=1)
DAY = 86400


def offset(zone, t):
    return datetime.fromtimestamp(t, zone).utcoffset() // SECOND


def instant(zone, civil, fold):
    """PEP 495: in a fold, fold=0 is the earlier instant; in a gap, fold=0 reads the civil time
    with the offset before the gap and fold=1 with the one after."""
    local = (EPOCH + civil * SECOND).replace(fold=fold, tzinfo=zone)
    return (local.replace(tzinfo=None) - local.utcoffset() - EPOCH) // SECOND


def first_change(zone, lo, hi):
    """The first instant in (lo, hi] with hi's offset, lo's offset differing from it."""
    target = offset(zone, hi)
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if offset(zone, mid) == target:
            hi = mid
        else:
            lo = mid
    return hi


def classify(zone, civil):
    t0, t1 = instant(zone, civil, 0), instant(zone, civil, 1)
    back0 = t0 + offset(zone, t0) == civil
    back1 = t1 + offset(zone, t1) == civil
    if back0 and back1:
        return ["unique", t0] if t0 == t1 else ["fold", min(t0, t1), max(t0, t1)]
    if not back0 and not back1:
        # Neither reading lands on the civil time: the change lies between the two instants.
        return ["gap", first_change(zone, min(t0, t1), max(t0, t1))]
    return ["odd", t0, t1]


def scan(zone, start, end):
    found, current = [], offset(zone, start)
    if offset(zone, start - 1) != current:
        found.append(start)
    t = start
    while t < end - 1:
        step = min(t + DAY, end - 1)
        sample = offset(zone, step)
        if sample != current:
            found.append(first_change(zone, t, step))
            current = sample
        t = step
    return found


def answer(question):
    if question.get("names"):
        return {"names": sorted(zoneinfo.available_timezones())}
    zone = zoneinfo.ZoneInfo(question["zone"])
    out = {
        "offsets": [offset(zone, t) for t in question.get("offsets", [])],
        "iso": [datetime.fromtimestamp(t, zone).isoformat() for t in question.get("offsets", [])],
        "civil": [classify(zone, c) for c in question.get("civil", [])],
    }
    if "scan" in question:
        out["transitions"] = scan(zone, *question["scan"])
    return out


def main():
    assert not zoneinfo.TZPATH, f"zoneinfo must read the tzdata package only, not {zoneinfo.TZPATH}"
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line))))


if __name__ == "__main__":
    main()

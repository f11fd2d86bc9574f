"""The oracle for src/schedule/zoned.rs (tests/oracles/cron.rs): croniter 7.0.0 with zoneinfo,
run with PYTHONTZPATH empty so that it reads the pinned tzdata package, the release
src/zone/table.rs comes from.

One JSON question per line on stdin, one JSON answer per line on stdout:
  {"expr": E, "dialect": "spin" | "classic", "zone": Z, "at": [q, ...], "runs": [[q, k, u], ...]}
-> {"every_hour": bool, "at": [{"next": [...], "prev": [...], "fwd": [...]}, ...], "runs": [...]}
The Spin dialect is croniter's six-field form with second_at_beginning=True and day_or=False
(both day fields must match), the classic one croniter's default five fields (day_or=True).
For each q: "next" starts with croniter's get_next from q, "prev" with its get_prev from q + 1
(the latest run at or before q), "fwd" is get_next from prev's last run up to the first one
after q (croniter's get_prev and get_next do not always see the same runs, see below). For
each [q, k, u] of "runs", croniter's first k runs after q, or fewer up to the first after u. Every chain is extended while its last
run is one our DST rule treats differently, so that the Rust side can apply the rule to it.

A run is [t, fold, gap, own]: the instant; whether it is the second reading of a repeated
wall-clock time (zoneinfo's fold=1); for a job whose hour field is restricted, the instant of
the spring-forward transition croniter moved this run out of, else null; whether the run's own
wall-clock reading matches the expression (asked only for a moved run).

croniter's rules, from croniter/croniter.py: a wall-clock time in a gap becomes the first
existing wall-clock time a whole number of minutes later (_add_tzinfo, :228-232), keeping its
seconds, unless the hour field is "*" (then the gap's times are skipped, :812-822); in a fold,
a job runs at both readings of its times (the "alternative" time, :824-851).
"""
import json
import sys
import zoneinfo
from datetime import datetime, timedelta

from croniter import CroniterBadDateError, croniter

SECOND = timedelta(seconds=1)
LONGEST_CHAIN = 4000
HOUR_FIELD, SECOND_FIELD = 1, 5


class Job:
    def __init__(self, question):
        self.expr = question["expr"]
        self.spin = question["dialect"] == "spin"
        self.zone = zoneinfo.ZoneInfo(question["zone"])
        expanded = self.cron(self.wall(0)).expanded
        self.every_hour = expanded[HOUR_FIELD] == ["*"]
        # A nickname is five fields in croniter, second 0 (as croner reads it in Spin).
        self.seconds = expanded[SECOND_FIELD] if len(expanded) > SECOND_FIELD else [0]

    def cron(self, start):
        return croniter(
            self.expr, start, day_or=not self.spin, second_at_beginning=self.spin
        )

    def wall(self, t):
        return datetime.fromtimestamp(t, self.zone)

    def offset(self, t):
        return self.wall(t).utcoffset()

    def matches(self, naive):
        """Whether croniter matches this naive wall-clock time (no time zone involved)."""
        return self.cron(naive - SECOND).get_next(datetime) == naive

    def gap_left(self, t):
        """The spring-forward transition croniter moved a run at t out of, or None: t is a
        whole number of minutes (and the job's own seconds) after the transition, and the job
        has a time in the gap with those seconds."""
        if self.every_hour:
            return None
        s = self.wall(t).second
        start = t - s
        if self.offset(start - 1) >= self.offset(start):
            return None
        if self.seconds != ["*"] and s not in self.seconds:
            return None
        gap_from = self.wall(start - 1).replace(tzinfo=None) + SECOND
        gap_to = self.wall(start).replace(tzinfo=None)
        first = self.cron(gap_from - SECOND).get_next(datetime)
        return start if first < gap_to else None

    def run(self, t):
        gap = self.gap_left(t)
        own = self.matches(self.wall(t).replace(tzinfo=None)) if gap is not None else None
        return [t, self.wall(t).fold, gap, own]

    def differs(self, run):
        return not self.every_hour and (run[1] == 1 or run[2] is not None)

    def chain(self, start, step, count=1, more=lambda run: False, until=None):
        """count runs, or fewer up to the first after until; then more while the last is one
        the rule changes, or `more` says so."""
        it, runs = self.cron(self.wall(start)), []
        while len(runs) < LONGEST_CHAIN:
            try:
                t = int(round(step(it)))
            except CroniterBadDateError:
                break
            runs.append(self.run(t))
            enough = len(runs) >= count or (until is not None and t > until)
            if enough and not self.differs(runs[-1]) and not more(runs[-1]):
                break
        return runs

    def around(self, q):
        nxt = self.chain(q, croniter.get_next)
        prev = self.chain(q + 1, croniter.get_prev)
        fwd = self.chain(prev[-1][0], croniter.get_next, more=lambda r: r[0] <= q) if prev else []
        return {"next": nxt, "prev": prev, "fwd": fwd}


def answer(question):
    job = Job(question)
    return {
        "every_hour": job.every_hour,
        "at": [job.around(q) for q in question.get("at", [])],
        "runs": [job.chain(q, croniter.get_next, k, until=u) for q, k, u in question.get("runs", [])],
    }


def main():
    assert not zoneinfo.TZPATH, f"zoneinfo must read the tzdata package only, not {zoneinfo.TZPATH}"
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line))))


if __name__ == "__main__":
    main()

"""The job's settings, from Spin variables (see spin.toml): the lock, the holder, the schedule."""

import os

from componentize_py_types import Err
from wit_world.imports import guard, lease, variables


def variable(name):
    """The variable's value, or None when the manifest does not define it."""
    try:
        return variables.get(name)
    except Err:
        return None


def setting(name, default=None):
    value = variable(name)
    if value is None and default is None:
        raise ValueError(f"variable {name} is not set")
    return default if value is None else value


def whole(name, text, limit=2**64 - 1):
    text = text.strip()
    if not text.isdigit() or int(text) > limit:
        raise ValueError(f"{name} must be a whole number up to {limit}, got {text!r}")
    return int(text)


def schedule():
    expression = variable("schedule")
    if expression is None:
        # Manifests written for guard@0.2.0 set `interval_seconds` instead (0: no schedule).
        interval = variable("interval_seconds")
        if interval is None:
            raise ValueError("variable schedule is not set (a cron expression; empty: none)")
        seconds = whole("variable interval_seconds", interval)
        return guard.Schedule_Every(guard.Every(seconds, 0)) if seconds else guard.Schedule_None_()
    if not expression.strip():
        return guard.Schedule_None_()
    zone = setting("time_zone", "").strip() or None
    return guard.Schedule_Cron(guard.Cron(expression.strip(), zone, guard.CronDialect.SPIN))


class Settings:
    def __init__(self):
        self.connection_string = setting("connection_string")
        self.container = setting("container")
        self.blob = setting("lock")
        # Spin makes an instance per request, so an empty holder could only be a per-request
        # label: the same fallback as the Rust apps, random per instance.
        holder = setting("holder", "").strip()
        self.holder = holder or f"instance-{int.from_bytes(os.urandom(3), 'big'):06x}"
        self.lease_seconds = whole("variable lease_seconds", setting("lease_seconds"), 2**32 - 1)
        self.schedule = schedule()
        self.work_ms = whole("variable work_ms", setting("work_ms", "0"))

    def lock(self):
        return lease.Lock(self.connection_string, self.container, self.blob)

    def options(self):
        return guard.GuardOptions(
            holder=self.holder, lease_seconds=self.lease_seconds, schedule=self.schedule,
            # The guard's defaults: keep-alive a third of the lease, 5 s early tolerance, no
            # starting deadline, overlap forbidden, no waiting for a held lock.
            keep_alive_seconds=None, early_tolerance_ms=None, starting_deadline_seconds=None,
            overlap=None, wait_ms=None,
        )


def unscheduled():
    """No schedule: any tick may run, so an open /run would run the job at anyone's will."""
    expression = variable("schedule")
    if expression is None:
        interval = variable("interval_seconds")
        return interval is None or interval.strip() in ("", "0")
    return not expression.strip()

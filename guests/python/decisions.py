"""The guard's decisions in words, as the Rust apps word them (apps/shared: `words`, `TickReport`):
shared by the guarded job (app.py) and the `@guarded` decorator (guarded.py)."""

import re
import time

from wit_world.imports import guard


def now_ms():
    return int(time.time() * 1000)


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


def tag(value, prefix):
    """`SkipReason_HeldByOther` -> `held-by-other`: the WIT case name."""
    name = type(value).__name__.removeprefix(prefix)
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def describe(error):
    """A guard-error as one line (service errors never carry a credential)."""
    if isinstance(error, guard.GuardError_BadOption):
        return f"bad option ({error.value.field}): {error.value.message}"
    if not isinstance(error, guard.GuardError_Lease):
        detail = error.value if isinstance(error.value, str) else error.value.message
        return f"{tag(error, 'GuardError_')}: {detail}"
    cause = error.value
    if isinstance(cause.value, str):
        return f"{tag(cause, 'LeaseError_')}: {cause.value}"
    service = cause.value
    code = f" {service.code}" if service.code else ""
    return f"{tag(cause, 'LeaseError_')} (HTTP {service.status}{code}): {service.message}"


def skip_detail(settings, reason):
    why = reason.value
    if isinstance(reason, guard.SkipReason_HeldByOther):
        if why.holder == settings.holder:
            # Our own earlier tick still works: naming ourselves "another" holder would mislead.
            return (
                "the previous tick of this replica is still working "
                f"(lease held by {why.holder} until it completes or expires)"
            )
        return f"held by {why.holder or 'another instance'}"
    if isinstance(reason, guard.SkipReason_AlreadyRan):
        state = "still running" if why.running else why.outcome or "ended"
        by, due = why.holder or "another instance", iso(why.due_at_ms)
        return f"already ran for {due} ({by}, {state}); next due {iso(why.next_due_ms)}"
    if isinstance(reason, guard.SkipReason_TooLate):
        late = why.late_by_ms // 1000
        return f"too late: {late} s after the due time; next due {iso(why.next_due_ms)}"
    if isinstance(reason, guard.SkipReason_NotDue):
        return f"not due yet: the first due time is {iso(why.next_due_ms)}"
    if isinstance(reason, guard.SkipReason_Paused):
        reason = f": {why.reason}" if why.reason else ""
        return f"paused by {why.by} since {iso(why.since_ms)}{reason}"
    if isinstance(reason, guard.SkipReason_ScheduleConflict):
        return (
            f"deferring to the newer schedule {why.newer} (on this lock since {iso(why.since_ms)}): "
            f"this replica's {why.ours} is being replaced; if no replica with the newer schedule "
            f"ticks again, this one takes over at {iso(why.until_ms)}"
        )
    return f"could not decide: {describe(why)}"


def skip_due_ms(reason):
    """The due time a skip is about, when its reason names one (not-due names the next)."""
    due = getattr(reason.value, "due_at_ms", None)
    return due if not isinstance(reason, guard.SkipReason_NotDue) else None


def line(report):
    """The line the Rust apps print for a tick (`TickReport::line`): it names the due time the
    decision is about, never the tick that woke the replica."""
    holder, due = report["holder"], report.get("due_at")
    if report["fencing_token"] is None and report["decision"] == "error":
        return f"[{holder}] error: {report['detail']}"
    if report["fencing_token"] is None:
        skipped = f"skipped the due time {due}" if due else "skipped"
        return f"[{holder}] {skipped}: {report['detail']}"
    took_over = " (took over an abandoned run)" if report["previous_abandoned"] else ""
    missed = report["missed"] or 0
    caught_up = f" (caught up {missed} missed due times)" if missed > 0 else ""
    if report["manual_by"]:
        what = f"ran the manual run asked by {report['manual_by']}"
    else:
        what = f"ran for the due time {due}" if due else "ran"
    return (
        f"[{holder}] {what} with fencing token {report['fencing_token']}"
        f"{took_over}{caught_up}: {report['detail']}"
    )

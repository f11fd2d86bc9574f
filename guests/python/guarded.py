"""`@guarded`: the one-line form for a Python (componentize-py) WASI 0.2 HTTP handler, where no
wrapper component can serve (Spin 3, SpinKube's shims: docs/wrappers.md). Put it above the
handler's `handle`; the world imports `traffic-cop:lease/guard@0.3.0` and Spin's variables
(guests/wit, world `http-guest`), and spin.toml gives the lease component and the settings.

Every request is a tick, answered as the Rust attribute answers it (apps/guarded): a skip 200
with the decision as JSON, a run the handler's own response (a status of 400 or more is the
run's failure), a grant that came after its lease's deadline 503, settings that cannot be used
500. Nothing renews the lease while the handler runs, so it must end within its lease
(`max_job_seconds`, as behind the sync wrapper). An incoming request's headers cannot be
changed, so the handler asks `current_run()` for its fencing token instead of reading headers.
"""

import functools
import json
import sys

from componentize_py_types import Err, Ok
from wit_world.imports import guard
from wit_world.imports.types import ResponseOutparam

from decisions import describe, iso, line, now_ms, skip_detail, skip_due_ms, tag
from http_io import respond
from settings import Settings, setting, whole

_run = None


def current_run():
    """The run the handler is called for: its `fencing_token`, `due_at_ms` and `missed`."""
    return dict(_run) if _run else None


def guarded(handle):
    @functools.wraps(handle)
    def guarded_handle(self, request, response_out):
        prefix = f"http {request.path_with_query() or '/'}: "
        try:
            settings = Settings()
            stated = setting("max_job_seconds", "").strip()
            max_job = whole("variable max_job_seconds", stated) if stated else None
        except ValueError as bad:
            print(f"{prefix}error: {bad}", file=sys.stderr, flush=True)
            respond(response_out, 500, "text/plain; charset=utf-8", str(bad))
            return
        report, status = tick(settings, max_job, lambda: called(handle, self, request, response_out))
        print(json.dumps(report), flush=True)
        print(f"{prefix}{line(report)}", file=sys.stderr, flush=True)
        if status is not None:
            respond(response_out, status, "application/json", json.dumps(report))

    return guarded_handle


def tick(settings, max_job, call):
    """The decision's report, and the status to answer with (None: the handler answered)."""
    report = dict(lock=settings.blob, holder=settings.holder, decision="skip", reason=None)
    report.update(variable=None, fencing_token=None, due_at_ms=None, due_at=None)
    report.update(late_by_ms=None, missed=None, manual_by=None, previous_abandoned=False)
    lease = settings.lease_seconds
    if max_job is not None and max_job > lease:
        report.update(decision="error", reason="misconfigured", variable="max_job_seconds")
        report["detail"] = (
            f"set the `max_job_seconds` variable: {max_job} s is longer than the lease ({lease} s),"
            " and nothing renews the lease while a sync handler runs: raise `lease_seconds`"
            " (at most 60)"
        )
        return report, 500
    decision = guard.guarded_invoke(settings.lock(), settings.options())
    if isinstance(decision, guard.Decision_Skip):
        report.update(reason=tag(decision.value, "SkipReason_"))
        report["detail"] = skip_detail(settings, decision.value)
        due = skip_due_ms(decision.value)
        report.update(due_at_ms=due, due_at=shown(due) if due is not None else None)
        return report, 200
    ticket, due = decision.value, decision.value.past_due
    report.update(decision="run", fencing_token=ticket.fencing_token, due_at_ms=due.due_at_ms)
    report.update(due_at=shown(due.due_at_ms), late_by_ms=due.late_by_ms, missed=due.missed)
    report.update(manual_by=ticket.manual_by, previous_abandoned=ticket.previous_abandoned)
    if now_ms() >= ticket.deadline_ms:
        report["detail"] = "stopped before starting: the lease's deadline had passed"
        return report, 503
    global _run
    _run = dict(fencing_token=ticket.fencing_token, due_at_ms=due.due_at_ms, missed=due.missed)
    try:
        status, error = call()
    finally:
        _run = None
    if status is None:
        detail = f"the handler failed: {error}"
    else:
        detail = f"the handler answered {status}"
    failed = status is None or status >= 400
    outcome = guard.Outcome_Failure(detail) if failed else guard.Outcome_Success()
    over = now_ms() - ticket.deadline_ms
    if over > 0:
        outlived = f"; it outlived its lease by {over / 1000:.1f} s"
        detail += f"{outlived}: another run may have started meanwhile"
    try:
        guard.complete(ticket, outcome)
    except Err as lost:
        detail += f"; complete failed: {describe(lost.value)}"
    report["detail"] = detail
    return report, None


def called(handle, self, request, response_out):
    """Calls the handler: the status it answered, or None and why, read from its
    `ResponseOutparam.set`; the response it sets is passed on unchanged."""
    answers = []
    own, setter = ResponseOutparam.__dict__["set"], ResponseOutparam.set

    def recording(cls, out, response):
        if isinstance(response, Ok):
            answers.append((response.value.status_code(), None))
        else:
            answers.append((None, f"it answered the error {response.value}"))
        setter(out, response)

    ResponseOutparam.set = classmethod(recording)
    try:
        handle(self, request, response_out)
    finally:
        ResponseOutparam.set = own
    return answers[0] if answers else (None, "it set no response")


def shown(at_ms):
    zone = setting("time_zone", "").strip() or None
    try:
        return guard.show_time(at_ms, zone).local
    except Err:
        return iso(at_ms)

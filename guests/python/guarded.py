"""`@guarded`: the one-line form for a Python (componentize-py) WASI 0.2 HTTP handler, where no
wrapper component can serve (Spin 3, SpinKube's shims: docs/wrappers.md). Put it above the
handler's `handle`; the world imports `traffic-cop:lease/guard@1.0.0` and Spin's variables
(guests/wit, world `http-guarded`), and spin.toml gives the lease component and the settings.

Every request is a tick, answered as the Rust attribute answers it (apps/guarded): a skip 200
with the decision as JSON, a run the handler's own response (a status of 400 or more is the
run's failure), settings the guard cannot use 500. Every line it prints is the guard's own.
Nothing renews the lease while the handler runs, so it must end within its lease
(`max_job_seconds` says how long it may take). An incoming request's headers cannot be
changed, so the handler asks `current_run()` for its fencing token instead of reading headers.
"""

import functools
import json
import re
import sys

from componentize_py_types import Err, Ok
from wit_world.imports import guard, lease, variables
from wit_world.imports.types import ResponseOutparam

from http_io import respond

# The guard's settings: these Spin variables as they are (the guard reads and judges them).
VARIABLES = ("connection_string", "container", "lock", "holder", "lease_seconds",
             "keep_alive_seconds", "schedule", "time_zone", "cron_dialect", "early_tolerance_ms",
             "starting_deadline_seconds", "replace_after_seconds", "wait_ms", "max_job_seconds")
_run = None


def current_run():
    """The run the handler is called for: its `fencing_token`, `due_at_ms` and `missed`."""
    return dict(_run) if _run else None


def variable(name):
    try:
        return variables.get(name)
    except Err:
        return None


def guarded(handle):
    @functools.wraps(handle)
    def guarded_handle(self, request, response_out):
        report = dict(lock=variable("lock"), holder=variable("holder") or None, decision="skip")
        report.update(reason=None, variable=None, fencing_token=None, due_at_ms=None)
        report.update(late_by_ms=None, missed=None, manual_by=None, previous_abandoned=False)
        decision = guard.guarded_invoke(guard.Settings(**{n: variable(n) for n in VARIABLES}))
        status = None
        if isinstance(decision, guard.Decision_Skip):
            reason, status = decision.value.reason, 200
            kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", type(reason).__name__.split("_", 1)[1])
            report.update(reason=kebab.lower(), due_at_ms=getattr(reason.value, "due_at_ms", None))
            if isinstance(getattr(reason, "value", None), lease.Error_BadSetting):
                report.update(decision="error", reason="misconfigured", variable=reason.value.value.variable)
                status = 500
            report["detail"] = decision.value.text
        else:
            report.update(ran(decision.value, lambda: called(handle, self, request, response_out)))
        print(json.dumps(report), flush=True)
        print(f"http {request.path_with_query() or '/'}: {report['detail']}", file=sys.stderr, flush=True)
        if status is not None:
            respond(response_out, status, "application/json", json.dumps(report))

    return guarded_handle


def ran(run, call):
    """The handler called under `run`, its answer the run's outcome: the report's run fields."""
    global _run
    details = run.details()
    due = details.past_due
    _run = dict(fencing_token=details.fencing_token, due_at_ms=due.due_at_ms, missed=due.missed)
    try:
        status, error = call()
    finally:
        _run = None
    said = error if status is None else f"the handler answered {status}"
    failed = status is None or status >= 400
    finished = run.complete(guard.Outcome_Failure(said) if failed else guard.Outcome_Success(said))
    return dict(decision="run", holder=details.holder, fencing_token=details.fencing_token,
                due_at_ms=due.due_at_ms, late_by_ms=due.late_by_ms, missed=due.missed,
                manual_by=details.manual_by, previous_abandoned=details.previous_abandoned,
                detail=finished.text)


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

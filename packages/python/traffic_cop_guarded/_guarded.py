"""`@guarded`, as `traffic_cop_guarded` exports it. Only componentize-py's build of the app can
import this module: its bindings (`wit_world`) come from the app's world, `http-guarded`, which
imports `traffic-cop:lease/guard@1.0.0` and Spin's variables.

Every request is a tick, answered as the Rust attribute answers it: a skip 200 with the
decision as JSON, a run the handler's own response (a status of 400 or more is the run's
failure), settings the guard cannot use 500. Every line it prints is the guard's own. Nothing
renews the lease while the handler runs, so it must end within its lease (`max_job_seconds`
says how long it may take). An incoming request's headers cannot be changed, so the handler
asks `current_run()` for its fencing token instead of reading headers.
"""

import sys
from dataclasses import fields

from componentize_py_types import Err, Ok
from wit_world.imports import guard, lease, variables
from wit_world.imports.types import Fields, OutgoingBody, OutgoingResponse, ResponseOutparam

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
    def guarded_handle(self, request, response_out):
        settings = {field.name: variable(field.name) for field in fields(guard.Settings)}
        decision, status = guard.guarded_invoke(guard.Settings(**settings)), None
        if isinstance(decision, guard.Decision_Skip):
            said = decision.value
            bad = isinstance(getattr(said.reason, "value", None), lease.Error_BadSetting)
            status = 500 if bad else 200
        else:
            said = ran(decision.value, handle, self, request, response_out)
        print(said.report, flush=True)
        print(f"http {request.path_with_query() or '/'}: {said.text}", file=sys.stderr, flush=True)
        if status is not None:
            respond(response_out, status, "application/json", said.report)

    return guarded_handle


def ran(run, handle, *args):
    """The handler called under `run`; the answer it sets through `ResponseOutparam.set`
    (passed on unchanged) is the run's outcome: a status of 400 or more, or none, a failure."""
    global _run
    details, answers = run.details(), []
    due = details.past_due
    _run = dict(fencing_token=details.fencing_token, due_at_ms=due.due_at_ms, missed=due.missed)
    own, setter = ResponseOutparam.__dict__["set"], ResponseOutparam.set

    def recording(cls, out, response):
        error = None if isinstance(response, Ok) else f"it answered the error {response.value}"
        answers.append(error or response.value.status_code())
        setter(out, response)

    ResponseOutparam.set = classmethod(recording)
    try:
        handle(*args)
    finally:
        ResponseOutparam.set, _run = own, None
    said = answers[0] if answers else "it set no response"
    if isinstance(said, int) and said < 400:
        return run.complete(guard.Outcome_Success(f"the handler answered {said}"))
    said = f"the handler answered {said}" if isinstance(said, int) else said
    return run.complete(guard.Outcome_Failure(said))


def respond(response_out, status, content_type, text):
    """Answers with `text` (the decision for a skip; the test job's own answers too)."""
    data = text.encode()
    headers = [("content-type", content_type.encode()), ("content-length", str(len(data)).encode())]
    response = OutgoingResponse(Fields.from_list(headers))
    response.set_status_code(status)
    body = response.body()
    ResponseOutparam.set(response_out, Ok(response))
    # The stream is dropped (leaving `with`) before the body is finished; a blocking write
    # takes at most 4096 bytes.
    with body.write() as stream:
        for start in range(0, len(data), 4096):
            stream.blocking_write_and_flush(data[start : start + 4096])
    OutgoingBody.finish(body, None)

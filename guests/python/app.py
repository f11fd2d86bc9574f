"""The guarded job in Python (componentize-py): `POST /run` is one tick, as apps/shared's
`tick` in Rust: ask the guard, do the work if it is our turn, complete with the outcome.
The guard is an import, `traffic-cop:lease/guard@0.2.0`, served by the lease component
(composed in by Spin's component dependency or by `wac plug`); settings are Spin variables.
"""

import json
import os
import time

from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.imports import guard, lease, variables
from wit_world.imports.types import (
    Fields,
    Method_Post,
    OutgoingBody,
    OutgoingResponse,
    ResponseOutparam,
)


def setting(name, default=None):
    try:
        return variables.get(name)
    except Err:
        if default is None:
            raise ValueError(f"variable {name} is not set")
        return default


def number(name, default=None):
    text = setting(name, default).strip()
    if not text.isdigit():
        raise ValueError(f"variable {name} must be a whole number, got {text!r}")
    return int(text)


class Settings:
    def __init__(self):
        self.connection_string = setting("connection_string")
        self.container = setting("container")
        self.blob = setting("lock")
        # Spin makes an instance per request, so an empty holder could only be a per-request
        # label: the same fallback as the Rust apps, random per instance.
        holder = setting("holder", "").strip()
        self.holder = holder or f"instance-{int.from_bytes(os.urandom(3), 'big'):06x}"
        self.lease_seconds = number("lease_seconds")
        self.interval_seconds = number("interval_seconds")
        self.work_ms = number("work_ms", "0")

    def lock(self):
        return lease.Lock(self.connection_string, self.container, self.blob)

    def options(self):
        return guard.GuardOptions(
            holder=self.holder,
            lease_seconds=self.lease_seconds,
            interval_seconds=self.interval_seconds,
            offset_seconds=0,
            starting_deadline_seconds=None,
            keep_alive_seconds=None,
        )


def now_ms():
    return int(time.time() * 1000)


def skip_detail(settings, reason):
    if isinstance(reason, guard.SkipReason_HeldByOther):
        by = reason.value.holder
        if by == settings.holder:
            # Our own earlier tick still works: naming ourselves "another" holder would mislead.
            return (
                "the previous tick of this replica is still working "
                f"(lease held by {by} until it completes or expires)"
            )
        return f"held by {by or 'another instance'}"
    if isinstance(reason, guard.SkipReason_AlreadyRan):
        return f"already ran this interval ({reason.value.holder or 'another instance'})"
    if isinstance(reason, guard.SkipReason_TooLate):
        return f"too late: {reason.value.late_by_ms // 1000} s after the due time"
    return f"could not decide: {reason.value!r}"


def work(settings, ticket):
    """Sleeps through `work_ms` in small steps, renewing when due; stops once the lease is lost
    (another run may already have started)."""
    if now_ms() >= ticket.deadline_ms:
        raise RuntimeError("stopped before starting: the lease's deadline had passed")
    until, keep_alive_by = now_ms() + settings.work_ms, ticket.keep_alive_by_ms
    while now_ms() < until:
        time.sleep(0.1)
        if now_ms() >= until:
            break
        if now_ms() >= keep_alive_by:
            try:
                guard.keep_alive(ticket)
            except Err as lost:
                raise RuntimeError(f"stopped: lease lost during the work ({lost.value!r})")
            keep_alive_by = now_ms() + (ticket.options.keep_alive_seconds or 5) * 1000


def janitor(settings):
    rows = guard.board(guard.Location(settings.connection_string, settings.container))
    held = [r for r in rows if r.state in (lease.LeaseState.LEASED, lease.LeaseState.BREAKING)]
    return f"python job: {len(rows)} locks, {len(held)} held"


def tick(settings):
    report = {
        "holder": settings.holder,
        "decision": "skip",
        "fencing_token": None,
        "previous_abandoned": False,
        "missed": None,
        "late_by_ms": None,
        "detail": "",
    }
    decision = guard.guarded_invoke(settings.lock(), settings.options())
    if isinstance(decision, guard.Decision_Skip):
        report["detail"] = skip_detail(settings, decision.value)
        return report
    ticket = decision.value
    report.update(
        decision="run",
        fencing_token=ticket.fencing_token,
        previous_abandoned=ticket.previous_abandoned,
        missed=ticket.past_due.missed,
        late_by_ms=ticket.past_due.late_by_ms,
    )
    try:
        work(settings, ticket)
    except RuntimeError as stopped:
        report["detail"] = str(stopped)
        return report
    try:
        detail, outcome = janitor(settings), guard.Outcome_Success()
    except Err as failed:
        detail = f"job failed: {failed.value!r}"
        outcome = guard.Outcome_Failure(detail)
    try:
        guard.complete(ticket, outcome)
    except Err as failed:
        detail += f"; complete failed: {failed.value!r}"
    report["detail"] = detail
    return report


def line(report):
    """The line the Rust apps print for a tick (`TickReport::line`)."""
    if report["fencing_token"] is None:
        return f"[{report['holder']}] skipped: {report['detail']}"
    took_over = " (took over an abandoned run)" if report["previous_abandoned"] else ""
    missed = report["missed"] or 0
    caught_up = f" (caught up {missed} missed due times)" if missed > 0 else ""
    return (
        f"[{report['holder']}] ran with fencing token {report['fencing_token']}"
        f"{took_over}{caught_up}: {report['detail']}"
    )


def respond(response_out, status, content_type, text):
    body_bytes = text.encode()
    headers = Fields.from_list(
        [("content-type", content_type.encode()), ("content-length", str(len(body_bytes)).encode())]
    )
    response = OutgoingResponse(headers)
    response.set_status_code(status)
    body = response.body()
    ResponseOutparam.set(response_out, Ok(response))
    # The stream must be dropped (leaving `with`) before the body can be finished;
    # blocking-write-and-flush takes at most 4096 bytes per call.
    with body.write() as stream:
        for start in range(0, len(body_bytes), 4096):
            stream.blocking_write_and_flush(body_bytes[start : start + 4096])
    OutgoingBody.finish(body, None)


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        path = (request.path_with_query() or "/").split("?")[0].rstrip("/")
        if not (isinstance(request.method(), Method_Post) and path.endswith("/run")):
            respond(response_out, 404, "text/plain", "routes: POST /run")
            return
        try:
            settings = Settings()
        except (ValueError, Err) as bad:
            respond(response_out, 500, "text/plain", str(bad))
            return
        report = tick(settings)
        print(f"http tick: {line(report)}", flush=True)
        respond(response_out, 200, "application/json", json.dumps(report))

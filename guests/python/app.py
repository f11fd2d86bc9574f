"""The guarded job in Python (componentize-py): `POST /run` is one tick, as apps/shared's
`tick` in Rust: ask the guard, do the work if it is our turn, complete with the outcome.
With the Spin variable `board_token` set, `POST /pause`, `/resume` and `/run-now` are the
operator's verbs, for callers presenting `Authorization: Bearer <board_token>`.
The guard is an import, `traffic-cop:lease/guard@0.3.0`, served by the lease component
(composed in by Spin's component dependency or by `wac plug`); settings are Spin variables.
"""

import dataclasses
import json
import time

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import guard, lease
from wit_world.imports.types import Method_Post

from decisions import describe, iso, line, now_ms, skip_detail, skip_due_ms, tag
from http_io import bearer_matches, parameters, respond
from settings import Settings, setting, unscheduled, whole

OPERATOR_ROUTES = ("/pause", "/resume", "/run-now")
# A request is no place for a long wait (the Rust apps cap it alike): pause again to wait more.
MAX_DRAIN_MS = 120_000


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
                raise RuntimeError(f"stopped: lease lost during the work ({describe(lost.value)})")
            keep_alive_by = now_ms() + (ticket.options.keep_alive_seconds or 5) * 1000


def janitor(settings):
    rows = guard.board(guard.Location(settings.connection_string, settings.container)).locks
    held = [r for r in rows if r.state in (lease.LeaseState.LEASED, lease.LeaseState.BREAKING)]
    return f"python job: {len(rows)} locks, {len(held)} held"


def tick(settings):
    # `skip` is the reason's WIT case (`paused`, `not-due`, ...) for scripts; `detail` for people.
    report = dict(holder=settings.holder, decision="skip", skip=None, fencing_token=None)
    report.update(previous_abandoned=False, manual_by=None, missed=None, late_by_ms=None, detail="")
    decision = guard.guarded_invoke(settings.lock(), settings.options())
    if isinstance(decision, guard.Decision_Skip):
        report["skip"] = tag(decision.value, "SkipReason_")
        report["detail"] = skip_detail(settings, decision.value)
        due = skip_due_ms(decision.value)
        report["due_at"] = iso(due) if due is not None else None
        return report
    ticket = decision.value
    report.update(
        due_at=iso(ticket.past_due.due_at_ms) if not unscheduled() else None,
        decision="run",
        fencing_token=ticket.fencing_token,
        previous_abandoned=ticket.previous_abandoned,
        manual_by=ticket.manual_by,
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
        detail = f"job failed: {describe(failed.value)}"
        outcome = guard.Outcome_Failure(detail)
    try:
        guard.complete(ticket, outcome)
    except Err as failed:
        detail += f"; complete failed: {describe(failed.value)}"
    report["detail"] = detail
    return report


UNGUARDED_RUN = (
    "POST /run on a job without a schedule would let anyone run it at will: "
    "set a schedule, or board_token to protect the routes"
)


def operator_line(answer):
    state = "not paused"
    if answer.paused:
        state = f"paused by {answer.paused.by} since {iso(answer.paused.since_ms)}"
        state += f" ({answer.paused.reason})" if answer.paused.reason else ""
    if answer.run_now_by:
        state += f"; a manual run asked by {answer.run_now_by} waits for the next tick"
    if answer.running:
        running = answer.running
        state += f"; run {running.fencing_token} of {running.holder or '?'} still in progress"
    return state


def operate(request, route, query, response_out):
    lock = Settings().lock()
    try:
        found = parameters(request, query)
        by = found.get("by", "").strip()
        if not by:
            raise ValueError("by is required: who is asking")
        drain_ms = min(whole("drain_ms", found.get("drain_ms", "0")), MAX_DRAIN_MS)
    except ValueError as bad:
        respond(response_out, 400, "application/json", json.dumps({"error": str(bad)}))
        return
    try:
        if route == "/pause":
            answer = guard.pause(lock, by, found.get("reason", ""), drain_ms)
        elif route == "/resume":
            answer = guard.resume(lock, by)
        else:
            answer = guard.run_now(lock, by)
    except Err as failed:
        text = describe(failed.value)
        print(f"http {route[1:]} by {by} failed: {text}", flush=True)
        status = 400 if isinstance(failed.value.value, lease.LeaseError_InvalidArgument) else 502
        respond(response_out, status, "application/json", json.dumps({"error": text}))
        return
    print(f"http {route[1:]} by {by}: {operator_line(answer)}", flush=True)
    # The bindings' records are dataclasses: the operator-answer with its WIT field names.
    respond(response_out, 200, "application/json", json.dumps(dataclasses.asdict(answer)))


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        path, _, query = (request.path_with_query() or "/").partition("?")
        path = path[:-1] if path.endswith("/") and len(path) > 1 else path
        post = isinstance(request.method(), Method_Post)
        # Without a token the operator's routes do not exist: nobody can pause the job.
        token = setting("board_token", "").strip()
        try:
            if post and path == "/run" and token and not bearer_matches(request, token):
                challenge = [("www-authenticate", b'Bearer realm="traffic-cop"')]
                respond(response_out, 401, "text/plain", "a bearer token is needed", challenge)
            elif post and path == "/run" and not token and unscheduled():
                respond(response_out, 403, "text/plain", UNGUARDED_RUN)
            elif post and path == "/run":
                report = tick(Settings())
                print(f"http tick: {line(report)}", flush=True)
                respond(response_out, 200, "application/json", json.dumps(report))
            elif post and token and path in OPERATOR_ROUTES:
                if not bearer_matches(request, token):
                    challenge = [("www-authenticate", b'Bearer realm="traffic-cop"')]
                    respond(response_out, 401, "text/plain", "a bearer token is needed", challenge)
                else:
                    operate(request, path, query, response_out)
            else:
                routes = "POST /run" + (", POST /pause, /resume, /run-now" if token else "")
                respond(response_out, 404, "text/plain", f"routes: {routes}")
        except ValueError as misconfigured:
            respond(response_out, 500, "text/plain", str(misconfigured))

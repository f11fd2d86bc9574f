"""The Python one-line form's job (tests/spin/http_wrapper.rs): a WASI 0.2 HTTP handler as
componentize-py writes one, guarded by `@guarded` above its `handle` and nothing else. It
prints and answers as the Rust jobs do (harness/cron-handler/behaviour.rs): its call, the run
`current_run()` gives it, the body it read; then it waits `HANDLER_MS` and answers by its mode,
`ok` 200, `fail` 500, `trap` an uncaught exception (which traps), `cycle` those in turn by the
wall clock's 3 s slot (ok, fail, trap, ok)."""

import os
import time

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports.streams import StreamError_Closed

from traffic_cop_guarded import current_run, guarded
from traffic_cop_guarded import respond


def mode():
    chosen = os.environ.get("HANDLER_MODE", "")
    if chosen == "cycle":
        return ["ok", "fail", "trap", "ok"][int(time.time()) // 3 % 4]
    return chosen


def read_all(request):
    data = b""
    with request.consume() as body:
        with body.stream() as stream:
            while True:
                try:
                    data += stream.blocking_read(65536)
                except Err as ended:
                    if isinstance(ended.value, StreamError_Closed):
                        return data
                    raise


class IncomingHandler(exports.IncomingHandler):
    @guarded
    def handle(self, request, response_out):
        path, now = request.path_with_query() or "/", mode()
        print(f"handler called for {path}: {now}", flush=True)
        run = current_run()
        if run:
            token, due, missed = run["fencing_token"], run["due_at_ms"], run["missed"]
            print(f"handler given fencing token {token} for the due time {due} ({missed} missed)")
        body = read_all(request)
        first = body.split(b"\n")[0].decode(errors="replace")
        print(f"handler read {len(body)} bytes: {first}", flush=True)
        time.sleep(int(os.environ.get("HANDLER_MS", "0") or 0) / 1000)
        if now == "fail":
            respond(response_out, 500, "text/plain", f"the job failed for {path}")
        elif now == "trap":
            raise RuntimeError(f"the job trapped for {path}")
        else:
            respond(response_out, 200, "text/plain", f"the job ran for {path}")

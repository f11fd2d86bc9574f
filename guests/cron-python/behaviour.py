"""What the Python cron jobs do, by their environment, as harness/cron-handler/behaviour.rs
does for the Rust ones: work `HANDLER_MS`, then answer by `HANDLER_MODE` (`ok`, `fail`,
`trap`, `cycle`: ok, fail, trap in turn by the due time, `due / 3 % 3`, or `alternate`: ok
and fail in turn, `due / 3 % 2`)."""

import os

from componentize_py_types import Err
from wit_world.imports.cron_types import Error_Other


def work_ms():
    try:
        return int(os.environ.get("HANDLER_MS", "0"))
    except ValueError:
        return 0


def answer(due):
    """Returns for a success; raises the cron `error` for a failure, or traps."""
    mode = os.environ.get("HANDLER_MODE", "")
    if mode == "cycle":
        mode = ["ok", "fail", "trap"][due // 3 % 3]
    elif mode == "alternate":
        mode = ["ok", "fail"][due // 3 % 2]
    if mode == "fail":
        raise Err(Error_Other(f"the job failed for {due}"))
    if mode == "trap":
        # An uncaught exception other than `Err` traps, as a Rust panic does.
        raise RuntimeError(f"the job trapped for {due}")

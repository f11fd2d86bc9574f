"""traffic-cop's one-line form for a Python (componentize-py) WASI 0.2 HTTP handler, for hosts
where no wrapper component can serve (Spin 3, SpinKube's shims):

    from traffic_cop_guarded import current_run, guarded

    class IncomingHandler(exports.IncomingHandler):
        @guarded
        def handle(self, request, response_out): ...

Build against the WIT this package carries (`python -m traffic_cop_guarded` prints its path),
world `http-guarded`; spin.toml gives the lease component as the guard's dependency.
"""

from pathlib import Path

# The WIT the app is built against: world `http-guarded` and its dependencies.
WIT = str(Path(__file__).with_name("wit"))


def __getattr__(name):
    # Their module needs the app's bindings, which exist only while componentize-py builds the
    # app, so it is imported when they are asked for (and only for them: the import machinery
    # asks this module for other names while it runs).
    if name not in ("guarded", "current_run", "respond"):
        raise AttributeError(f"module 'traffic_cop_guarded' has no attribute {name!r}")
    from . import _guarded

    return getattr(_guarded, name)

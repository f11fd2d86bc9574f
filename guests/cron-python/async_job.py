"""A plain async cron job in Python (componentize-py's async exports, `spin:cron@3.0.0`), that
knows nothing of traffic-cop: the async cron wrapper makes it a guarded singleton. Prints
`handler called for <timestamp>` on every call; its wait awaits, so the wrapper's `hold`
renews the lease meanwhile."""

import wit_world
from wit_world.imports import monotonic_clock
from wit_world.imports.cron_types import Metadata

import behaviour


class WitWorld(wit_world.WitWorld):
    async def handle_cron_event(self, metadata: Metadata) -> None:
        print(f"handler called for {metadata.timestamp}", flush=True)
        await monotonic_clock.wait_for(behaviour.work_ms() * 1_000_000)
        behaviour.answer(metadata.timestamp)

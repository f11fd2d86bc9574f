"""A plain sync cron job in Python (componentize-py, `fermyon:spin-cron@2.0.0`), written as
the toolchain's docs show an export, that knows nothing of traffic-cop: the sync cron wrapper
makes it a guarded singleton. Prints `handler called for <timestamp>` on every call."""

import time

import wit_world
from wit_world.imports.cron_types import Metadata

import behaviour


class WitWorld(wit_world.WitWorld):
    def handle_cron_event(self, metadata: Metadata) -> None:
        print(f"handler called for {metadata.timestamp}", flush=True)
        time.sleep(behaviour.work_ms() / 1000)
        behaviour.answer(metadata.timestamp)

//! Three instances of a guest job in the test host (wasmtime 48, the guest composed with the
//! lease component), each with its own holder, against Azurite. A kill traps the holder's
//! instance in the middle of its run: no `complete`, no release, the lease left to expire.

use crate::drive::{self, cron_every, Fire, INTERVAL, WORK_MS};
use crate::story::{self, Killed, Tick, LEASE_SECONDS, LOCK};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_wasm_host::component::LeaseState;
use traffic_cop_wasm_host::guests::Guest;

pub struct HostStory {
    pub ticks: Vec<Tick>,
    pub killed: Killed,
    pub printed: Vec<String>,
}

pub fn run(language: &str, wasm: &Path) -> HostStory {
    let guest = Arc::new(Guest::load(wasm).unwrap_or_else(|e| panic!("{language}: {e}")));
    let container = format!("{language}host{}", std::process::id());
    let holders: Vec<String> = (0..3).map(|i| format!("{language}-{i}")).collect();
    let variables: Vec<BTreeMap<String, String>> = holders
        .iter()
        .map(|holder| {
            [
                ("connection_string", Azurite::shared().connection_string()),
                ("container", container.clone()),
                ("lock", LOCK.to_string()),
                ("holder", holder.clone()),
                ("lease_seconds", LEASE_SECONDS.to_string()),
                ("schedule", cron_every(INTERVAL)),
                // Any zone gives a seconds step the same due times: this one checks the
                // variable reaches the guard as an IANA name it accepts.
                ("time_zone", "Europe/Berlin".to_string()),
                ("work_ms", WORK_MS.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
        })
        .collect();
    let kills: Vec<Arc<AtomicBool>> = (0..3).map(|_| Arc::new(AtomicBool::new(false))).collect();
    let printed = Arc::new(Mutex::new(Vec::<String>::new()));
    let fire: Fire = {
        let (kills, printed) = (kills.clone(), printed.clone());
        Arc::new(move |node| {
            let answer = guest.http(&variables[node], "POST", "/run", kills[node].clone())?;
            printed.lock().unwrap().extend(answer.stdout.lines().map(str::to_string));
            match answer.status {
                200 => Ok(answer.body),
                status => Err(format!("HTTP {status}: {}", answer.body)),
            }
        })
    };
    let (ticks, killed) = drive::run(fire, || {
        let entry = story::lock_entry(&container)?;
        if !entry.running || entry.state != LeaseState::Leased || entry.fencing_token < 3 {
            return None;
        }
        let holder = entry.holder?;
        let node = holders.iter().position(|h| *h == holder)?;
        let start_ms = entry.last_start_ms?;
        kills[node].store(true, Ordering::SeqCst);
        let at = start_ms / 1000 / INTERVAL * INTERVAL;
        Some(Killed { node, holder, token: entry.fencing_token, start_ms, at })
    });
    let printed = printed.lock().unwrap().clone();
    HostStory { ticks, killed, printed }
}

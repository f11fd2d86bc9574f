//! The decision log of the cron-triggered replicas: one JSON line per tick on stdout, read
//! back with the tick's time from the line for people on stderr.

use crate::story::Node;
use serde_json::Value;
use std::collections::BTreeMap;

/// One decision: the JSON line a replica printed on stdout.
#[derive(Debug, Clone)]
pub struct Decision {
    pub holder: String,
    pub run: bool,
    pub reason: Option<String>,
    pub token: Option<u64>,
    pub due_s: Option<u64>,
    pub abandoned: bool,
    pub granted_ms: Option<u64>,
    /// A run asked for with run-now: who asked.
    pub manual_by: Option<String>,
    /// Due times a run caught up for.
    pub missed: Option<u64>,
    /// A run's tick: the trigger's scheduled time (from the line for people).
    pub tick_s: Option<u64>,
}

pub fn decisions(node: &Node) -> Vec<Decision> {
    // The line for people (stderr) has the tick's time; a run's is found by its token.
    let ticks: BTreeMap<u64, u64> = node
        .replica
        .log("cron-job")
        .lines()
        .filter_map(|l| {
            let (tick, report) = traffic_cop_testbed::tick_line(l)?;
            let token = report.split(" with fencing token ").nth(1)?;
            let token = token.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
            Some((token, tick))
        })
        .collect();
    node.replica
        .stdout("cron-job")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|v| {
            let due_ms = v["due_at_ms"].as_u64();
            Decision {
                holder: v["holder"].as_str().unwrap_or("?").to_string(),
                run: v["decision"] == "run",
                reason: v["reason"].as_str().map(str::to_string),
                token: v["fencing_token"].as_u64(),
                due_s: due_ms.map(|ms| ms / 1000),
                abandoned: v["previous_abandoned"] == true,
                granted_ms: due_ms.zip(v["late_by_ms"].as_u64()).map(|(d, l)| d + l),
                manual_by: v["manual_by"].as_str().map(str::to_string),
                missed: v["missed"].as_u64(),
                tick_s: v["fencing_token"].as_u64().and_then(|t| ticks.get(&t).copied()),
            }
        })
        .collect()
}

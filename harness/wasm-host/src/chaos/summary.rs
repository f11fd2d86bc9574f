//! The chaos run's counts, as printed by `scripts/chaos` and the short test.

use super::report::{Report, Write};
use std::collections::BTreeMap;
use std::time::Duration;
use traffic_cop_testbed::faults::FaultProxy;

#[derive(Debug, Default)]
pub struct Summary {
    pub ticks: usize,
    pub runs: usize,
    pub took_over: usize,
    pub skips: BTreeMap<&'static str, usize>,
    pub written: usize,
    pub refused_stale: usize,
    pub write_other: usize,
    pub complete_lost: usize,
    pub requests: u64,
    pub faults: BTreeMap<String, usize>,
    pub blackholed: u64,
    pub kills: usize,
    pub terminations: usize,
    pub pauses: usize,
    pub pauses_past_lease: usize,
    pub partitions: usize,
    pub events_dropped: usize,
    pub elapsed: Duration,
    /// The runs events struck (events aimed at whoever was running).
    pub struck: Vec<super::Struck>,
    /// From SIGTERM/SIGINT to `spin up`'s exit, per graceful stop.
    pub stop_times: Vec<Duration>,
    /// Graceful stops after which part of the group was still there 0.5 s later.
    pub lingering: usize,
}

impl Summary {
    /// The counts of `reports` and of the replicas' fault proxies.
    pub fn fill<'a>(
        &mut self,
        reports: &[Report],
        proxies: impl IntoIterator<Item = &'a FaultProxy>,
        elapsed: Duration,
    ) {
        self.ticks = reports.len();
        for report in reports {
            let Some(write) = &report.write else {
                *self.skips.entry(report.skip_reason()).or_default() += 1;
                continue;
            };
            self.runs += 1;
            self.took_over += usize::from(report.took_over);
            self.complete_lost += usize::from(report.complete_lost);
            match write {
                Write::Written(_) => self.written += 1,
                Write::Stale { .. } => self.refused_stale += 1,
                Write::Other(_) => self.write_other += 1,
            }
        }
        for proxy in proxies {
            self.requests += proxy.requests();
            self.blackholed += proxy.blackholed();
            for fault in proxy.injected() {
                let kind = format!("{fault:?}");
                let kind = kind.split('(').next().unwrap_or_default().to_string();
                *self.faults.entry(kind).or_default() += 1;
            }
        }
        self.elapsed = elapsed;
    }

    pub fn lines(&self, violations: &[String]) -> Vec<String> {
        let mut out = vec![
            format!("ticks logged          {}", self.ticks),
            format!(
                "runs                  {} ({} took over an abandoned run)",
                self.runs, self.took_over
            ),
        ];
        for (reason, count) in &self.skips {
            out.push(format!("skips {reason:<18}{count}"));
        }
        out.push(format!("results written       {}", self.written));
        out.push(format!("writes refused stale  {}", self.refused_stale));
        out.push(format!(
            "runs without a write  {} (stopped, or the write failed)",
            self.write_other
        ));
        out.push(format!("complete lease-lost   {}", self.complete_lost));
        let injected: usize = self.faults.values().sum();
        let kinds: Vec<String> = self.faults.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push(format!("requests              {}", self.requests));
        out.push(format!("faults injected       {injected} ({})", kinds.join(", ")));
        out.push(format!("requests blackholed   {}", self.blackholed));
        out.push(format!(
            "events                {} SIGKILL, {} SIGTERM, {} SIGSTOP ({} past the lease), {} partitions, {} dropped",
            self.kills, self.terminations, self.pauses, self.pauses_past_lease, self.partitions, self.events_dropped
        ));
        out.push(format!("wall time             {:.0} s", self.elapsed.as_secs_f64()));
        out.push(format!("violations            {}", violations.len()));
        out.extend(violations.iter().map(|v| format!("  {v}")));
        out
    }
}

//! `/metrics`: the board as Prometheus series, one set per lock (labels `container` and
//! `lock`). Every replica serves the same series for the same locks (they read one storage
//! account), so alert rules aggregate with `max by (container, lock)`. Prometheus' text format
//! 0.0.4 by default, OpenMetrics 1.0 when the scraper's `Accept` asks for it.
//!
//! Series whose value is unknown (a lock that never succeeded has no last-success time) are
//! left out rather than given a made-up value.

use crate::board::{BoardRow, Snapshot};
use crate::settings::BadVariable;

pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether an `Accept` header asks for OpenMetrics.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.contains("application/openmetrics-text"))
}

enum Kind {
    Gauge,
    Counter,
}

/// One sample of a lock: extra labels (or none), and its value when known.
type Sample = (&'static str, Option<f64>);

/// One metric family: name (counters without `_total`), help, unit, and a value per lock.
struct Family {
    name: &'static str,
    kind: Kind,
    unit: Option<&'static str>,
    help: &'static str,
    samples: fn(&BoardRow) -> Vec<Sample>,
}

fn seconds(ms: Option<u64>) -> Option<f64> {
    ms.map(|ms| ms as f64 / 1000.0)
}

fn flag(on: bool) -> Option<f64> {
    Some(if on { 1.0 } else { 0.0 })
}

const FAMILIES: &[Family] = &[
    Family {
        name: "traffic_cop_last_start_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "When the last run started (storage service clock).",
        samples: |r| vec![("", seconds(r.last_start_ms))],
    },
    Family {
        name: "traffic_cop_last_stop_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "When the last completed run stopped.",
        samples: |r| vec![("", seconds(r.last_stop_ms))],
    },
    Family {
        name: "traffic_cop_last_success_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "When the last successful run stopped.",
        samples: |r| vec![("", seconds(r.last_success_ms))],
    },
    Family {
        name: "traffic_cop_last_failure_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "When the last failed run stopped.",
        samples: |r| vec![("", seconds(r.last_failure_ms))],
    },
    Family {
        name: "traffic_cop_last_duration_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "How long the last completed run took.",
        samples: |r| {
            let took = match (r.last_start_ms, r.last_stop_ms) {
                (Some(start), Some(stop)) if !r.running => Some(stop.saturating_sub(start)),
                _ => None,
            };
            vec![("", seconds(took))]
        },
    },
    Family {
        name: "traffic_cop_next_due_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "The next due time after the last scheduled run's.",
        samples: |r| vec![("", seconds(r.next_due_ms))],
    },
    Family {
        name: "traffic_cop_overdue",
        kind: Kind::Gauge,
        unit: None,
        help: "1 when a due time passed (beyond its grace) with no run for it and the job is not paused.",
        samples: |r| vec![("", flag(r.overdue))],
    },
    Family {
        name: "traffic_cop_running",
        kind: Kind::Gauge,
        unit: None,
        help: "1 while a run is granted and not completed (with held 0: abandoned).",
        samples: |r| vec![("", flag(r.running))],
    },
    Family {
        name: "traffic_cop_held",
        kind: Kind::Gauge,
        unit: None,
        help: "1 while the lock's lease is held.",
        samples: |r| vec![("", flag(r.held()))],
    },
    Family {
        name: "traffic_cop_paused",
        kind: Kind::Gauge,
        unit: None,
        help: "1 while an operator has paused the job.",
        samples: |r| vec![("", flag(r.paused_by.is_some()))],
    },
    Family {
        name: "traffic_cop_schedules_alive",
        kind: Kind::Gauge,
        unit: None,
        help: "Schedules whose replicas ticked on the lock within the last three minutes (2 or more: a deploy or a rollback under way, or a replica with a stale configuration; the newest wins).",
        samples: |r| vec![("", Some(f64::from(r.schedules_alive)))],
    },
    Family {
        name: "traffic_cop_schedule_disagreement_start_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "Since when replicas with more than one schedule have ticked on the lock: the newest schedule's first tick (absent while they agree).",
        samples: |r| vec![("", seconds(r.disagreeing_since_ms))],
    },
    Family {
        name: "traffic_cop_schedule_period_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "How far apart the due times of the schedule in force are.",
        samples: |r| vec![("", seconds(r.newest_period_ms))],
    },
    Family {
        name: "traffic_cop_consecutive_failures",
        kind: Kind::Gauge,
        unit: None,
        help: "Runs in a row, newest first, that did not succeed (at most 16, the history kept).",
        samples: |r| vec![("", Some(f64::from(r.consecutive_failures)))],
    },
    Family {
        name: "traffic_cop_fencing_token",
        kind: Kind::Gauge,
        unit: None,
        help: "The last fencing token granted on the lock.",
        samples: |r| vec![("", Some(r.fencing_token as f64))],
    },
    Family {
        name: "traffic_cop_runs",
        kind: Kind::Counter,
        unit: None,
        help: "Runs since the lock was created, by how they ended.",
        samples: |r| {
            vec![
                ("outcome=\"success\"", Some(r.successes as f64)),
                ("outcome=\"failure\"", Some(r.failures as f64)),
                ("outcome=\"abandoned\"", Some(r.abandoned as f64)),
            ]
        },
    },
    Family {
        name: "traffic_cop_missed_due_times",
        kind: Kind::Counter,
        unit: None,
        help: "Due times that passed with no run for them, since the lock was created.",
        samples: |r| vec![("", Some(r.missed as f64))],
    },
    Family {
        name: "traffic_cop_blocked_runs",
        kind: Kind::Counter,
        unit: None,
        help: "Runs during which their instance could not renew the lease when due (a blocking call in the job, or a host that froze it), since the lock was created; each is a failure too.",
        samples: |r| vec![("", Some(r.blocked as f64))],
    },
];

/// The exposition of `snapshot` (None: storage could not be listed, so only `storage_up` 0),
/// with a `misconfigured` sample per variable whose value cannot be used.
pub fn render(
    snapshot: Option<&Snapshot>,
    misconfigured: &[BadVariable],
    openmetrics: bool,
) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "traffic_cop_misconfigured",
        "gauge",
        None,
        "1 for each of this app's variables whose value cannot be used (the job cannot run until it is fixed).",
        openmetrics,
    );
    let mut variables: Vec<&str> = misconfigured.iter().map(|bad| bad.variable.as_str()).collect();
    variables.dedup();
    for variable in variables {
        out.push_str(&format!("traffic_cop_misconfigured{{variable=\"{}\"}} 1\n", label(variable)));
    }
    let container = snapshot.map(|s| s.container.as_str()).unwrap_or("");
    header(
        &mut out,
        "traffic_cop_storage_up",
        "gauge",
        None,
        "1 when the last listing of the lock container succeeded.",
        openmetrics,
    );
    out.push_str(&format!(
        "traffic_cop_storage_up{{container=\"{}\"}} {}\n",
        label(container),
        u8::from(snapshot.is_some())
    ));
    if let Some(snapshot) = snapshot {
        header(
            &mut out,
            "traffic_cop_info",
            "gauge",
            None,
            "The lease component's time-zone database.",
            openmetrics,
        );
        out.push_str(&format!("traffic_cop_info{{tzdata=\"{}\"}} 1\n", label(&snapshot.tzdata)));
        for family in FAMILIES {
            let (kind, sample_name) = match family.kind {
                Kind::Gauge => ("gauge", family.name.to_string()),
                Kind::Counter => ("counter", format!("{}_total", family.name)),
            };
            // The text format names a counter's family with its `_total`; OpenMetrics without.
            let family_name =
                if openmetrics { family.name.to_string() } else { sample_name.clone() };
            header(&mut out, &family_name, kind, family.unit, family.help, openmetrics);
            for row in &snapshot.locks {
                for (extra, value) in (family.samples)(row) {
                    let Some(value) = value else { continue };
                    let extra = if extra.is_empty() { String::new() } else { format!(",{extra}") };
                    out.push_str(&format!(
                        "{sample_name}{{container=\"{}\",lock=\"{}\"{extra}}} {value}\n",
                        label(&snapshot.container),
                        label(&row.name)
                    ));
                }
            }
        }
    }
    if openmetrics {
        out.push_str("# EOF\n");
    }
    out
}

fn header(out: &mut String, name: &str, kind: &str, unit: Option<&str>, help: &str, om: bool) {
    out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
    if let (true, Some(unit)) = (om, unit) {
        out.push_str(&format!("# UNIT {name} {unit}\n"));
    }
}

/// A label value: backslash, double quote and line feed escaped, as both formats require.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

//! The board as one HTML page, served by the component with no external assets: a table of the
//! locks, and for each a timeline of its recent runs (one mark per run, oldest on the left,
//! coloured by outcome, its details in the mark's tooltip) that a person reads at a glance.
//! Times are shown on each job's wall clock beside UTC; a run that started late or caught up
//! missed due times says so where it is shown, not only in a tooltip.

use crate::board::{BoardRow, PastRunRow, Snapshot};
use crate::words::{duration, shown, utc};

/// A run this late after its due time is flagged on the board (the overdue alert's grace).
const LATE_MS: u64 = 60_000;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;\
vertical-align:middle}th{background:#f4f4f4}.runs{display:flex;gap:3px;align-items:center}\
.run{width:14px;height:22px;border-radius:2px;display:inline-block}\
.success{background:#2e9e44}.failure{background:#d13438}.abandoned{background:#8a8886}\
.replaced{background:#e8912d}.running{background:#fff;border:2px dashed #0063b1;\
width:10px;height:18px}.manual{outline:2px solid #5c2e91;outline-offset:1px}\
.badge{padding:1px 6px;border-radius:8px;color:#fff;font-size:85%;white-space:nowrap}.overdue{background:#d13438}\
.paused{background:#5c2e91}.ok{background:#2e9e44}.late{background:#b35c00}\
.run.late-run{box-shadow:inset 0 -6px 0 #b35c00}.legend .run{vertical-align:middle}\
small{color:#666}";

pub fn board_html(snapshot: &Snapshot) -> String {
    let app = if snapshot.app.is_empty() { "traffic-cop" } else { snapshot.app.as_str() };
    let mut html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{app} \u{2014} traffic-cop \
         board</title><style>{STYLE}</style></head><body><h1>{app} <small>traffic-cop board</small>\
         </h1><p><small>container {container} &middot; listed {listed} &middot; tz database \
         {tzdata}</small></p>",
        app = escape(app),
        container = escape(&snapshot.container),
        listed = utc(Some(snapshot.listed_at_ms)),
        tzdata = escape(&snapshot.tzdata),
    );
    html.push_str("<table><tr>");
    for head in [
        "lock",
        "status",
        "recent runs (oldest \u{2192} newest)",
        "last run",
        "next due",
        "schedule",
        "fencing token",
    ] {
        html.push_str(&format!("<th>{head}</th>"));
    }
    html.push_str("</tr>");
    for row in &snapshot.locks {
        let zone = row.time_zone.as_deref();
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             </tr>",
            escape(&row.name),
            status(row),
            timeline(row),
            last_run(row),
            escape(&shown(row.next_due_ms, zone)),
            escape(row.schedule.as_deref().unwrap_or("-")),
            row.fencing_token,
        ));
    }
    html.push_str(
        "</table><p class=\"legend\"><small><span class=\"run success\"></span> success \
         <span class=\"run failure\"></span> failure <span class=\"run abandoned\"></span> \
         abandoned <span class=\"run replaced\"></span> replaced <span class=\"run running\">\
         </span> running; outlined: run now; <span class=\"run success late-run\"></span> \
         underlined: started more than a minute late</small></p></body></html>",
    );
    html
}

/// The last run's entry in the history, when the last run has finished.
fn last_finished(row: &BoardRow) -> Option<&PastRunRow> {
    row.history.first().filter(|run| run.fencing_token == row.fencing_token && !row.running)
}

fn status(row: &BoardRow) -> String {
    let mut badges = Vec::new();
    if let Some(by) = &row.paused_by {
        let reason = row.paused_reason.as_deref().unwrap_or("");
        badges.push(format!(
            "<span class=\"badge paused\" title=\"since {}: {}\">paused by {}</span>",
            escape(&shown(row.paused_since_ms, row.time_zone.as_deref())),
            escape(reason),
            escape(by)
        ));
    }
    if row.overdue {
        badges.push("<span class=\"badge overdue\">overdue</span>".into());
    }
    if let Some(run) = last_finished(row) {
        match run.late_by_ms {
            Some(late) if late > LATE_MS => badges.push(format!(
                "<span class=\"badge late\">last run {} late</span>",
                duration(late)
            )),
            _ => {}
        }
        if run.missed > 0 {
            let n = run.missed;
            badges
                .push(format!("<span class=\"badge late\">{n} due times missed before it</span>"));
        }
    }
    if row.consecutive_failures > 0 {
        let n = row.consecutive_failures;
        badges.push(format!("<span class=\"badge overdue\">{n} failed in a row</span>"));
    }
    if let Some(by) = &row.run_now_by {
        badges.push(format!("<small>run now asked by {}</small>", escape(by)));
    }
    if let Some(conflict) = &row.conflict {
        badges.push(format!("<small>schedule conflict: {}</small>", escape(conflict)));
    }
    if badges.iter().all(|b| b.contains("badge late")) {
        badges.push("<span class=\"badge ok\">ok</span>".into());
    }
    format!("{} <small>{}</small>", badges.join(" "), escape(&row.state))
}

fn timeline(row: &BoardRow) -> String {
    let zone = row.time_zone.as_deref();
    let mut marks: Vec<String> = row.history.iter().rev().map(|run| mark(run, zone)).collect();
    if row.running && row.held() {
        let title = format!(
            "token {}: running since {} ({})",
            row.fencing_token,
            shown(row.last_start_ms, zone),
            row.holder.as_deref().unwrap_or("-")
        );
        marks.push(format!("<span class=\"run running\" title=\"{}\"></span>", escape(&title)));
    }
    format!("<div class=\"runs\">{}</div>", marks.join(""))
}

fn mark(run: &PastRunRow, zone: Option<&str>) -> String {
    let took = match run.stopped_at_ms {
        Some(stop) => format!(", {:.1} s", stop.saturating_sub(run.started_at_ms) as f64 / 1000.0),
        None => String::new(),
    };
    let due = match (run.due_at_ms, run.late_by_ms) {
        (Some(due), Some(late)) => {
            format!("due {}, {} late; ", shown(Some(due), zone), duration(late))
        }
        _ => String::new(),
    };
    let missed = if run.missed > 0 { format!(", caught up {}", run.missed) } else { String::new() };
    let title = format!(
        "token {}: {}{}{} started {}{took}{missed} ({})",
        run.fencing_token,
        run.outcome,
        run.failure.as_deref().map(|f| format!(" ({f})")).unwrap_or_default(),
        if run.manual { " (run now);" } else { ";" },
        shown(Some(run.started_at_ms), zone),
        run.holder.as_deref().unwrap_or("-")
    );
    let mut class = run.outcome.clone();
    if run.manual {
        class.push_str(" manual");
    }
    if run.late_by_ms.is_some_and(|late| late > LATE_MS) {
        class.push_str(" late-run");
    }
    format!("<span class=\"run {class}\" title=\"{}{}\"></span>", escape(&due), escape(&title))
}

fn last_run(row: &BoardRow) -> String {
    if row.last_start_ms.is_none() {
        return "never".into();
    }
    let outcome = row.last_outcome.as_deref().unwrap_or(if row.running { "running" } else { "-" });
    let mut said = vec![format!(
        "started {} by {}",
        shown(row.last_start_ms, row.time_zone.as_deref()),
        row.holder.as_deref().unwrap_or("-")
    )];
    if let Some(run) = last_finished(row) {
        if let (Some(due), Some(late)) = (run.due_at_ms, run.late_by_ms) {
            said.push(format!(
                "for the due time {}, {} late",
                shown(Some(due), row.time_zone.as_deref()),
                duration(late)
            ));
        }
        if run.missed > 0 {
            said.push(format!("caught up {} missed due times", run.missed));
        }
    }
    format!("{} <small>{}</small>", escape(outcome), escape(&said.join("; ")))
}

/// Everything shown comes from storage (lock names, holder labels, outcomes): escape it all,
/// quotes included, so no value can open a tag or leave an attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

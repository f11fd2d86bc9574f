//! The board as one HTML page, served by the component with no external assets: a table of the
//! locks, and for each a timeline of its recent runs (one mark per run, oldest on the left,
//! coloured by outcome, its details in the mark's tooltip) that a person reads at a glance.

use crate::board::{time, BoardRow, PastRunRow, Snapshot};

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;\
vertical-align:middle}th{background:#f4f4f4}.runs{display:flex;gap:3px;align-items:center}\
.run{width:14px;height:22px;border-radius:2px;display:inline-block}\
.success{background:#2e9e44}.failure{background:#d13438}.abandoned{background:#8a8886}\
.replaced{background:#e8912d}.running{background:#fff;border:2px dashed #0063b1;\
width:10px;height:18px}.manual{outline:2px solid #5c2e91;outline-offset:1px}\
.badge{padding:1px 6px;border-radius:8px;color:#fff;font-size:85%}.overdue{background:#d13438}\
.paused{background:#5c2e91}.ok{background:#2e9e44}.legend .run{vertical-align:middle}\
small{color:#666}";

pub fn board_html(snapshot: &Snapshot) -> String {
    let mut html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>traffic-cop: {container}\
         </title><style>{STYLE}</style></head><body><h1>traffic-cop: {container}</h1>\
         <p><small>listed {listed} UTC &middot; tz database {tzdata}</small></p>",
        container = escape(&snapshot.container),
        listed = time(Some(snapshot.listed_at_ms)),
        tzdata = escape(&snapshot.tzdata),
    );
    html.push_str("<table><tr>");
    for head in [
        "lock",
        "status",
        "recent runs (oldest → newest)",
        "last run",
        "next due (UTC)",
        "schedule",
        "fencing token",
    ] {
        html.push_str(&format!("<th>{head}</th>"));
    }
    html.push_str("</tr>");
    for row in &snapshot.locks {
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             </tr>",
            escape(&row.name),
            status(row),
            timeline(row),
            last_run(row),
            time(row.next_due_ms),
            escape(row.schedule.as_deref().unwrap_or("-")),
            row.fencing_token,
        ));
    }
    html.push_str(
        "</table><p class=\"legend\"><small><span class=\"run success\"></span> success \
         <span class=\"run failure\"></span> failure <span class=\"run abandoned\"></span> \
         abandoned <span class=\"run replaced\"></span> replaced <span class=\"run running\">\
         </span> running; outlined: run now</small></p></body></html>",
    );
    html
}

fn status(row: &BoardRow) -> String {
    let mut badges = Vec::new();
    if let Some(by) = &row.paused_by {
        let reason = row.paused_reason.as_deref().unwrap_or("");
        badges.push(format!(
            "<span class=\"badge paused\" title=\"since {} UTC: {}\">paused by {}</span>",
            time(row.paused_since_ms),
            escape(reason),
            escape(by)
        ));
    }
    if row.overdue {
        badges.push("<span class=\"badge overdue\">overdue</span>".into());
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
    if badges.is_empty() {
        badges.push("<span class=\"badge ok\">ok</span>".into());
    }
    format!("{} <small>{}</small>", badges.join(" "), escape(&row.state))
}

fn timeline(row: &BoardRow) -> String {
    let mut marks: Vec<String> = row.history.iter().rev().map(mark).collect();
    if row.running && row.held() {
        let title = format!(
            "token {}: running since {} UTC ({})",
            row.fencing_token,
            time(row.last_start_ms),
            row.holder.as_deref().unwrap_or("-")
        );
        marks.push(format!("<span class=\"run running\" title=\"{}\"></span>", escape(&title)));
    }
    format!("<div class=\"runs\">{}</div>", marks.join(""))
}

fn mark(run: &PastRunRow) -> String {
    let took = match run.stopped_at_ms {
        Some(stop) => format!(", {:.1} s", stop.saturating_sub(run.started_at_ms) as f64 / 1000.0),
        None => String::new(),
    };
    let due = match (run.due_at_ms, run.late_by_ms) {
        (Some(due), Some(late)) => format!("due {} UTC, {} ms late; ", time(Some(due)), late),
        _ => String::new(),
    };
    let missed = if run.missed > 0 { format!(", caught up {}", run.missed) } else { String::new() };
    let title = format!(
        "token {}: {}{}{} started {} UTC{took}{missed} ({})",
        run.fencing_token,
        run.outcome,
        run.failure.as_deref().map(|f| format!(" ({f})")).unwrap_or_default(),
        if run.manual { " (run now);" } else { ";" },
        time(Some(run.started_at_ms)),
        run.holder.as_deref().unwrap_or("-")
    );
    let class = if run.manual { format!("{} manual", run.outcome) } else { run.outcome.clone() };
    format!("<span class=\"run {class}\" title=\"{}{}\"></span>", escape(&due), escape(&title))
}

fn last_run(row: &BoardRow) -> String {
    match row.last_start_ms {
        None => "never".into(),
        Some(_) => format!(
            "{} <small>{} UTC by {}</small>",
            escape(row.last_outcome.as_deref().unwrap_or(if row.running {
                "running"
            } else {
                "-"
            })),
            time(row.last_start_ms),
            escape(row.holder.as_deref().unwrap_or("-"))
        ),
    }
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

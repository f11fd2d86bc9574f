//! The status board as JSON and as a small readable HTML table.

use crate::guard::{self, BoardEntry};
use crate::lease::LeaseState;
use crate::Settings;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct BoardRow {
    pub name: String,
    pub state: &'static str,
    pub holder: Option<String>,
    pub fencing_token: u64,
    pub last_start_ms: Option<u64>,
    pub last_stop_ms: Option<u64>,
    pub running: bool,
    pub last_outcome: Option<String>,
    pub next_due_ms: Option<u64>,
    pub overdue: bool,
}

impl From<BoardEntry> for BoardRow {
    fn from(e: BoardEntry) -> BoardRow {
        BoardRow {
            name: e.name,
            state: state_name(e.state),
            holder: e.holder,
            fencing_token: e.fencing_token,
            last_start_ms: e.last_start_ms,
            last_stop_ms: e.last_stop_ms,
            running: e.running,
            last_outcome: e.last_outcome,
            next_due_ms: e.next_due_ms,
            overdue: e.overdue,
        }
    }
}

pub fn state_name(state: LeaseState) -> &'static str {
    match state {
        LeaseState::Available => "available",
        LeaseState::Leased => "leased",
        LeaseState::Expired => "expired",
        LeaseState::Breaking => "breaking",
        LeaseState::Broken => "broken",
    }
}

fn rows(settings: &Settings) -> Result<Vec<BoardRow>, String> {
    Ok(guard::board(&settings.location())
        .map_err(|e| format!("{e:?}"))?
        .into_iter()
        .map(BoardRow::from)
        .collect())
}

pub fn board_json(settings: &Settings) -> Result<String, String> {
    serde_json::to_string_pretty(&rows(settings)?).map_err(|e| e.to_string())
}

pub fn board_html(settings: &Settings) -> Result<String, String> {
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>traffic-cop board</title>\
         <style>body{font-family:sans-serif}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style></head><body>",
    );
    html.push_str(&format!("<h1>traffic-cop: {}</h1><table><tr>", escape(&settings.container)));
    for head in [
        "lock",
        "state",
        "holder",
        "fencing token",
        "last start (UTC)",
        "last stop (UTC)",
        "running",
        "outcome",
        "next due (UTC)",
        "overdue",
    ] {
        html.push_str(&format!("<th>{head}</th>"));
    }
    html.push_str("</tr>");
    for row in rows(settings)? {
        let cells = [
            escape(&row.name),
            row.state.to_string(),
            escape(row.holder.as_deref().unwrap_or("-")),
            row.fencing_token.to_string(),
            time(row.last_start_ms),
            time(row.last_stop_ms),
            row.running.to_string(),
            escape(row.last_outcome.as_deref().unwrap_or("-")),
            time(row.next_due_ms),
            row.overdue.to_string(),
        ];
        html.push_str("<tr>");
        for cell in cells {
            html.push_str(&format!("<td>{cell}</td>"));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></body></html>");
    Ok(html)
}

/// Everything shown comes from storage (lock names, holder labels, outcomes): escape it all,
/// quotes included, so no value can open a tag or leave an attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// `YYYY-MM-DD HH:MM:SS` from ms since the Unix epoch (civil-from-days, no date crate needed).
pub(crate) fn time(ms: Option<u64>) -> String {
    let Some(ms) = ms else { return "-".into() };
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02}")
}

//! One story for any three replicas of a guest job, wherever they run: every interval the test
//! POSTs /run to all live replicas at once (it is their scheduler, as a Kubernetes CronJob is
//! on SpinKube); once a run with token 3 or more is in the middle of its work, its replica is
//! killed; the story goes on until someone took over and two more intervals passed. The
//! replicas' schedule is the interval as a cron expression ([`cron_every`]).

use crate::story;
use crate::story::{Killed, Tick};
use std::sync::{mpsc, Arc};
use std::time::Instant;
use traffic_cop_testbed::{sleep_until_unix, unix_secs};

pub const INTERVAL: u64 = 3;
/// Long enough to be killed in the middle of, short enough to finish inside its interval.
pub const WORK_MS: u64 = 2000;
const MAX_INTERVALS: u64 = 20;

/// The cron expression (Spin's six-field dialect, seconds first) due every `seconds` on the
/// same grid as `k * seconds` since the Unix epoch: a divisor of a minute, so every minute
/// starts a step.
pub fn cron_every(seconds: u64) -> String {
    assert!(seconds > 0 && 60 % seconds == 0, "{seconds} s does not divide a minute");
    format!("*/{seconds} * * * * *")
}

/// Sends `POST /run` to replica `node`: the JSON body of a 200 answer, or why there was none.
pub type Fire = Arc<dyn Fn(usize) -> Result<String, String> + Send + Sync>;

/// Runs the story; `kill_running` kills the replica holding a running lease with token >= 3
/// (if any right now) and says whose run it was.
pub fn run(fire: Fire, mut kill_running: impl FnMut() -> Option<Killed>) -> (Vec<Tick>, Killed) {
    let (sent, answers) = mpsc::channel::<Tick>();
    let (mut ticks, mut killed, mut fired) = (Vec::<Tick>::new(), None::<Killed>, 0);
    let first = (unix_secs() + 2).div_ceil(INTERVAL) * INTERVAL;
    for k in 0..MAX_INTERVALS {
        let at = first + k * INTERVAL;
        sleep_until_unix(at, 300);
        for node in (0..3).filter(|n| killed.as_ref().is_none_or(|k| k.node != *n)) {
            let (fire, sent) = (fire.clone(), sent.clone());
            fired += 1;
            std::thread::spawn(move || {
                let started = Instant::now();
                let tick = match fire(node) {
                    Ok(body) => report_tick(at, node, &body),
                    Err(why) => no_answer(at, node, why),
                };
                let wall_ms = Some(started.elapsed().as_millis() as u64);
                let _ = sent.send(Tick { wall_ms, ..tick });
            });
        }
        ticks.extend(answers.try_iter());
        if killed.is_none() && k >= 3 {
            sleep_until_unix(at, 1000);
            killed = kill_running();
        }
        let took_over = ticks.iter().find(|t| t.took_over).map(|t| t.at);
        if took_over.is_some_and(|t| at >= t + 2 * INTERVAL) {
            break;
        }
    }
    let killed = killed.expect("a running replica was found and killed");
    let ticks = crate::story::settle(ticks, &answers, fired, &killed);
    (ticks, killed)
}

/// The guests answer with the Rust app's report fields (`TickReport` as JSON).
fn report_tick(at: u64, node: usize, body: &str) -> Tick {
    crate::story::json_tick(at, node, body)
        .unwrap_or_else(|| no_answer(at, node, format!("not JSON: {body}")))
}

fn no_answer(at: u64, node: usize, why: String) -> Tick {
    Tick {
        at,
        node,
        holder: format!("node-{node}"),
        token: None,
        took_over: false,
        detail: format!("no answer: {why}"),
        wall_ms: None,
        trips: None,
    }
}

/// What the guests printed (`http tick: <line>`, the Rust apps' `TickReport::line`) must say
/// the same as their answers: every run answered is printed with its holder, token and
/// takeover flag, nothing printed is a run nobody answered (so the killed run printed
/// nothing), and skips are printed too.
pub fn check_printed(ticks: &[Tick], printed: &[String]) {
    let lines: Vec<Tick> = printed
        .iter()
        .filter_map(|l| l.strip_prefix("http tick: "))
        .map(|l| crate::story::parse_report(0, 0, l).unwrap_or_else(|| panic!("unreadable {l:?}")))
        .collect();
    let runs: Vec<(String, u64, bool)> =
        lines.iter().filter_map(|t| Some((t.holder.clone(), t.token?, t.took_over))).collect();
    for t in ticks.iter().filter(|t| t.token.is_some()) {
        let run = (t.holder.clone(), t.token.unwrap(), t.took_over);
        assert!(runs.contains(&run), "run {t:?} not printed; printed: {printed:#?}");
    }
    for (holder, token, _) in &runs {
        assert!(
            ticks.iter().any(|t| &t.holder == holder && t.token == Some(*token)),
            "printed a run of {holder} with token {token} nobody answered"
        );
    }
    let skips = lines.iter().filter(|t| t.token.is_none()).count();
    assert!(skips > 0, "no skip printed: {printed:#?}");
}

/// The measured numbers, straight to stderr (the harness swallows println! of a passing test).
pub fn summary(what: &str, ticks: &[story::Tick], takeover: &story::Tick, started: Instant) {
    let mut walls: Vec<u64> =
        ticks.iter().filter(|t| t.token.is_none()).filter_map(|t| t.wall_ms).collect();
    walls.sort_unstable();
    let median = walls.get(walls.len() / 2).copied().unwrap_or_default();
    let runs = ticks.iter().filter(|t| t.token.is_some()).count();
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "{what}: {} answers, {runs} runs, follower answer median {median} ms; takeover by {} \
         at tick {} with token {:?}; {:.1} s",
        ticks.len(),
        takeover.holder,
        takeover.at,
        takeover.token,
        started.elapsed().as_secs_f64()
    );
}

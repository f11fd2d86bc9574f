//! The operator's verbs through a guest's own routes, in the test host: three replicas of a
//! guest with `board_token` set, on a cron schedule in a time zone. A pause makes every replica
//! skip with `paused`; after a resume the next due time runs once; a run-now is one manual run
//! at the next tick, after which that due time counts as run. And the routes' guard: without
//! `board_token` they answer 404, with a wrong or missing bearer token 401, and neither touches
//! the lock.

use crate::drive::cron_every;
use crate::story::{LEASE_SECONDS, LOCK};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;
use traffic_cop_testbed::azurite::Azurite;
use traffic_cop_testbed::{sleep_until_unix, unix_secs};
use traffic_cop_wasm_host::component::{fresh, v3};
use traffic_cop_wasm_host::guests::{Answer, Guest};

/// Room between due times for three ticks and an operator's call on a loaded machine.
const PERIOD: u64 = 6;
/// The test's own token, not a secret: the guests must still never echo it.
const BOARD_TOKEN: &str = "board-token-for-tests";
/// A request still unanswered by then is killed (a trap) and fails the test.
const REQUEST_LIMIT: Duration = Duration::from_secs(60);

struct Replicas {
    guest: Guest,
    variables: Vec<BTreeMap<String, String>>,
    container: String,
}

impl Replicas {
    fn new(language: &str, wasm: &Path, container: &str, board_token: Option<&str>) -> Replicas {
        let guest = Guest::load(wasm).unwrap_or_else(|e| panic!("{language}: {e}"));
        let variables = (0..3)
            .map(|i| {
                let mut variables: BTreeMap<String, String> = [
                    ("connection_string", Azurite::shared().connection_string()),
                    ("container", container.to_string()),
                    ("lock", LOCK.to_string()),
                    ("holder", format!("{language}-ops-{i}")),
                    ("lease_seconds", LEASE_SECONDS.to_string()),
                    ("schedule", cron_every(PERIOD)),
                    ("time_zone", "America/New_York".to_string()),
                    ("work_ms", "0".to_string()),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
                if let Some(token) = board_token {
                    variables.insert("board_token".into(), token.into());
                }
                variables
            })
            .collect();
        Replicas { guest, variables, container: container.into() }
    }

    /// One request to replica `node`, killed if it outlives [`REQUEST_LIMIT`].
    fn send(&self, node: usize, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
        let kill = Arc::new(AtomicBool::new(false));
        let (done, answered) = mpsc::channel();
        let answer = std::thread::scope(|scope| {
            let (variables, kill_switch) = (&self.variables[node], kill.clone());
            scope.spawn(move || {
                let _ =
                    done.send(self.guest.http_with(variables, method, path, headers, kill_switch));
            });
            let answer = answered.recv_timeout(REQUEST_LIMIT);
            kill.store(answer.is_err(), Ordering::SeqCst);
            answer
        });
        let answer = answer.unwrap_or_else(|_| panic!("{method} {path}: no answer in time"));
        answer.unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    /// `POST /run` to replica `node`, with the bearer token when `board_token` is set (then
    /// every route needs it).
    fn run(&self, node: usize) -> Answer {
        let bearer = self.variables[node].get("board_token").map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> =
            bearer.iter().map(|b| ("authorization", b.as_str())).collect();
        self.send(node, "POST", "/run", &headers)
    }

    /// `POST /run` to all three at once, as a scheduler fires them: each report and what its
    /// replica printed.
    fn tick_all(&self) -> Vec<(Value, String)> {
        std::thread::scope(|scope| {
            let ticks: Vec<_> = (0..3)
                .map(|node| {
                    scope.spawn(move || {
                        // With board_token set, /run needs the bearer token like every route.
                        let bearer =
                            self.variables[node].get("board_token").map(|t| format!("Bearer {t}"));
                        let headers: Vec<(&str, &str)> =
                            bearer.iter().map(|b| ("authorization", b.as_str())).collect();
                        self.send(node, "POST", "/run", &headers)
                    })
                })
                .collect();
            ticks
                .into_iter()
                .map(|t| report(t.join().unwrap_or_else(|p| std::panic::resume_unwind(p))))
                .collect()
        })
    }

    /// An operator's call on replica 0 with `authorization` as sent.
    fn operate(&self, path: &str, authorization: Option<&str>) -> Answer {
        let headers: Vec<(&str, &str)> =
            authorization.map(|a| ("authorization", a)).into_iter().collect();
        self.send(0, "POST", path, &headers)
    }

    fn entry(&self) -> Option<v3::BoardEntry> {
        let location = v3::Location {
            connection_string: Azurite::shared().connection_string(),
            container: self.container.clone(),
        };
        let board = fresh().board_v3(&location).ok()?;
        board.locks.into_iter().find(|e| e.name == LOCK)
    }
}

fn report(answer: Answer) -> (Value, String) {
    assert_eq!(answer.status, 200, "POST /run: {}", answer.body);
    let report =
        serde_json::from_str(&answer.body).unwrap_or_else(|e| panic!("{e}: {}", answer.body));
    (report, answer.stdout)
}

fn json(answer: &Answer) -> Value {
    assert_eq!(answer.status, 200, "{}", answer.body);
    serde_json::from_str(&answer.body).unwrap_or_else(|e| panic!("{e}: {}", answer.body))
}

/// The one run among `ticks` (the others skipped): its report.
fn one_run<'a>(ticks: &'a [(Value, String)], when: &str) -> &'a Value {
    let runs: Vec<&Value> =
        ticks.iter().map(|(r, _)| r).filter(|r| r["decision"] == "run").collect();
    assert_eq!(runs.len(), 1, "{when}: one run expected: {ticks:#?}");
    runs[0]
}

pub fn pause_resume_and_run_now(language: &str, wasm: &Path) {
    let container = format!("{language}ops{}", std::process::id());
    let replicas = Replicas::new(language, wasm, &container, Some(BOARD_TOKEN));
    let bearer = format!("Bearer {BOARD_TOKEN}");
    let first = (unix_secs() + 2).div_ceil(PERIOD) * PERIOD;
    sleep_until_unix(first, 300);
    let opening = replicas.tick_all();
    assert_eq!(one_run(&opening, "the first due time")["fencing_token"], 1);

    let paused = json(&replicas.operate("/pause?by=ops&reason=deploy%20v2", Some(&bearer)));
    assert_eq!(
        (&paused["paused"]["by"], &paused["paused"]["reason"]),
        (&"ops".into(), &"deploy v2".into())
    );
    assert!(paused["run_now_by"].is_null() && paused["running"].is_null(), "{paused}");
    assert!(replicas.entry().and_then(|e| e.paused).is_some(), "the pause is in the record");

    sleep_until_unix(first + PERIOD, 300);
    for (report, printed) in replicas.tick_all() {
        assert_eq!(report["skip"], "paused", "every replica skips while paused: {report}");
        let said = "skipped: paused by ops since ";
        assert!(printed.contains(said) && printed.contains("deploy v2"), "printed {printed:?}");
    }

    let resumed = json(&replicas.operate("/resume/?by=ops", Some(&bearer)));
    assert!(resumed["paused"].is_null(), "{resumed}");
    sleep_until_unix(first + 2 * PERIOD, 300);
    let after_resume = replicas.tick_all();
    let run = one_run(&after_resume, "the due time after the resume");
    assert_eq!((&run["fencing_token"], &run["manual_by"]), (&2.into(), &Value::Null), "{run}");
    // The paused due time is not made up: it is the one missed.
    assert_eq!(run["missed"], 1, "{run}");

    let asked = json(&replicas.operate("/run-now?by=ops", Some(&bearer)));
    assert_eq!(asked["run_now_by"], "ops", "{asked}");
    let manual = replicas.tick_all();
    let run = one_run(&manual, "the tick after run-now");
    assert_eq!((&run["fencing_token"], &run["manual_by"]), (&3.into(), &"ops".into()), "{run}");
    let printed: String = manual.iter().map(|(_, p)| p.as_str()).collect();
    assert!(printed.contains("ran the manual run asked by ops with fencing token 3"), "{printed}");
    // Still inside the due time that ran before the manual run: it stays run.
    let (again, _) = report(replicas.run(1));
    assert!(unix_secs() < first + 3 * PERIOD, "the checks outlasted the due time: too slow");
    assert_eq!(again["skip"], "already-ran", "{again}");
    let entry = replicas.entry().expect("the lock is on the board");
    assert_eq!((entry.totals.successes, entry.run_now_by), (3, None), "{:?}", entry.totals);
}

pub fn routes_are_guarded(language: &str, wasm: &Path) {
    let bearer = format!("Bearer {BOARD_TOKEN}");
    for (token, why) in [(None, "no board_token"), (Some(""), "an empty board_token")] {
        let container = format!("{language}closed{}", std::process::id());
        let replicas = Replicas::new(language, wasm, &container, token);
        for verb in ["/pause", "/resume", "/run-now"] {
            let answer = replicas.operate(&format!("{verb}?by=ops"), Some(&bearer));
            assert_eq!(answer.status, 404, "{verb} with {why}: {}", answer.body);
            assert!(!answer.body.contains("/pause"), "with {why} the routes are not listed");
        }
        assert!(replicas.entry().is_none(), "with {why} nothing touched the lock");
    }
    let container = format!("{language}guarded{}", std::process::id());
    let replicas = Replicas::new(language, wasm, &container, Some(BOARD_TOKEN));
    let same_length_guess = format!("Bearer {}", "x".repeat(BOARD_TOKEN.len()));
    let refused = [None, Some("Bearer wrong"), Some(same_length_guess.as_str()), Some(BOARD_TOKEN)];
    for verb in ["/pause", "/resume", "/run-now"] {
        for authorization in refused {
            let answer = replicas.operate(&format!("{verb}?by=ops"), authorization);
            assert_eq!(answer.status, 401, "{verb} with {authorization:?}: {}", answer.body);
            assert!(!answer.body.contains(BOARD_TOKEN) && !answer.body.contains("wrong"));
        }
    }
    // Exact routes, POST only, and `by` required: none of these reaches the lock either.
    for (method, path, status) in [
        ("POST", "/x/pause", 404),
        ("POST", "/pause/now", 404),
        ("GET", "/pause", 404),
        ("POST", "/pause", 400),
    ] {
        let answer =
            replicas.send(0, method, &format!("{path}?reason=r"), &[("authorization", &bearer)]);
        assert_eq!(answer.status, status, "{method} {path}: {}", answer.body);
    }
    // /run needs the token too when one is set.
    for authorization in refused {
        let headers: Vec<(&str, &str)> =
            authorization.map(|a| ("authorization", a)).into_iter().collect();
        let answer = replicas.send(0, "POST", "/run", &headers);
        assert_eq!(answer.status, 401, "/run with {authorization:?}: {}", answer.body);
    }
    assert!(replicas.entry().is_none(), "refused calls touched the lock");
    // Without a token and without a schedule, /run is refused: anyone could run the job.
    let open =
        Replicas::new(language, wasm, &format!("{language}open{}", std::process::id()), None);
    let mut unscheduled = open.variables[0].clone();
    unscheduled.insert("schedule".into(), String::new());
    let open = Replicas { variables: vec![unscheduled], ..open };
    assert_eq!(open.send(0, "POST", "/run", &[]).status, 403);
    assert_eq!(json(&replicas.operate("/run-now?by=ops", Some(&bearer)))["run_now_by"], "ops");
}

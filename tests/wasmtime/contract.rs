//! `traffic-cop:lease@1.0.0` through the built component, over Azurite on real time behind a
//! counting proxy: settings as raw variable strings, a decision with its line, a `run` resource
//! that renews, writes fenced data and completes with its line, claims, the board, the
//! operator's verbs and the settings check; a setting that cannot be used names its variable
//! and sends nothing; and no value or text the contract hands out holds the account key (in
//! any encoding) or a SAS signature.

use std::sync::atomic::{AtomicU32, Ordering};
use traffic_cop_testbed::azurite::{connection_string_for_port, Azurite};
use traffic_cop_testbed::proxy::CountingProxy;
use traffic_cop_testbed::runner::Test;
use traffic_cop_testbed::EMULATOR_KEY_B64;
use traffic_cop_wasm_host::component::v1::{self, Decision, Outcome, SkipReason};
use traffic_cop_wasm_host::component::ResourceAny;
use traffic_cop_wasm_host::component::{fresh, Instance};

struct Place {
    proxy: CountingProxy,
    connection_string: String,
    container: String,
}

impl Place {
    fn new() -> Place {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let proxy = CountingProxy::start(Azurite::shared().port);
        let container =
            format!("c1-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        let connection_string = connection_string_for_port(proxy.port, EMULATOR_KEY_B64);
        Place { proxy, connection_string, container }
    }

    fn settings(&self, holder: &str) -> v1::Settings {
        v1::settings(&self.connection_string, &self.container, "daily", holder)
    }
}

/// A run granted to `holder` on `instance`, which keeps it.
fn granted(instance: &mut Instance, settings: &v1::Settings) -> ResourceAny {
    match instance.guarded_invoke(settings) {
        Decision::Run(run) => run,
        Decision::Skip(skipped) => panic!("expected a run, got {skipped:?}"),
    }
}

fn a_run_decides_skips_renews_writes_and_completes_each_with_its_line() {
    let place = Place::new();
    let mut leader = fresh();
    let run = granted(&mut leader, &place.settings("replica-a"));
    let details = leader.run_details(run);
    assert_eq!(
        (details.fencing_token, details.lock.as_str(), details.holder.as_str()),
        (1, "daily", "replica-a")
    );
    let started = leader.run_text(run);
    assert!(
        started.starts_with("[replica-a] run for the due time ")
            && started.ends_with("fencing token 1"),
        "{started}"
    );

    // A follower skips, named by the run it waits for, in one round trip.
    let before = place.proxy.requests();
    let skipped = match fresh().guarded_invoke(&place.settings("replica-b")) {
        Decision::Skip(skipped) => skipped,
        Decision::Run(_) => panic!("two runs at once"),
    };
    assert_eq!(place.proxy.requests() - before, 1);
    assert!(
        matches!(&skipped.reason, SkipReason::HeldByOther(held) if held.holder.as_deref() == Some("replica-a"))
    );
    assert!(
        skipped.text.starts_with("[replica-b] skipped: held by replica-a, running since "),
        "{}",
        skipped.text
    );

    let renewed = leader.run_keep_alive(run).expect("renews");
    assert!(renewed >= details.deadline_ms, "{renewed} < {}", details.deadline_ms);
    let written = leader.run_write_fenced(run, "results/daily.json", b"{}").expect("writes");
    assert_eq!(written.fencing_token, 1);
    let finished = leader.run_complete(run, &Outcome::Success("3 reports sent".into()));
    assert_eq!(finished.text, "[replica-a] ran with fencing token 1: 3 reports sent");
    assert!(finished.error.is_none(), "{finished:?}");
    // A completed run refuses every call and sends nothing.
    let before = place.proxy.requests();
    let again = leader.run_complete(run, &Outcome::Success(String::new()));
    assert!(matches!(again.error, Some(v1::Error::InvalidArgument(_))), "{again:?}");
    assert!(
        again.text.contains("; complete failed: invalid argument: the run was completed"),
        "{}",
        again.text
    );
    assert!(leader.run_keep_alive(run).is_err());
    assert_eq!(place.proxy.requests(), before);
    leader.drop_run(run);

    // Without a schedule, the next tick runs once the lock is free: token 2, a failure.
    let mut next = fresh();
    let second = granted(&mut next, &place.settings("replica-b"));
    let failed = next.run_complete(second, &Outcome::Failure("disk full".into()));
    assert_eq!(failed.text, "[replica-b] ran with fencing token 2: failed: disk full");
    let data = fresh().read_fenced(&place.settings("x"), "results/daily.json").unwrap().unwrap();
    assert_eq!((data.contents.as_slice(), data.fencing_token), (b"{}".as_slice(), 1));
}

fn a_dropped_run_is_taken_over_as_abandoned_after_its_lease() {
    let place = Place::new();
    let mut crashed = fresh();
    let run = granted(&mut crashed, &place.settings("replica-a"));
    crashed.drop_run(run);
    drop(crashed);
    std::thread::sleep(std::time::Duration::from_secs(16));
    let mut next = fresh();
    let run = granted(&mut next, &place.settings("replica-b"));
    let details = next.run_details(run);
    assert!(details.previous_abandoned && details.fencing_token == 2, "{details:?}");
    let finished = next.run_complete(run, &Outcome::Success(String::new()));
    assert_eq!(
        finished.text,
        "[replica-b] ran with fencing token 2 (took over an abandoned run): succeeded"
    );
}

/// Makes one setting unusable.
type Breaks = fn(&mut v1::Settings);

fn a_setting_that_cannot_be_used_names_its_variable_and_sends_nothing() {
    let place = Place::new();
    let cases: [(Breaks, &str); 5] = [
        (|s| s.time_zone = Some("Mars/Olympus".into()), "time_zone"),
        (|s| s.lease_seconds = Some("ten".into()), "lease_seconds"),
        (|s| s.container = None, "container"),
        (
            |s| s.connection_string = Some("AccountName=x;AccountKey=%%%".into()),
            "connection_string",
        ),
        (|s| s.replace_after_seconds = Some("30".into()), "replace_after_seconds"),
    ];
    for (break_it, variable) in cases {
        let mut settings = place.settings("replica-a");
        settings.schedule = Some("0 0 2 * * *".into());
        break_it(&mut settings);
        let before = place.proxy.requests();
        let skipped = match fresh().guarded_invoke(&settings) {
            Decision::Skip(skipped) => skipped,
            Decision::Run(_) => panic!("{variable}: ran"),
        };
        assert_eq!(place.proxy.requests(), before, "{variable}: sent a request");
        let SkipReason::Error(error @ v1::Error::BadSetting(bad)) = &skipped.reason else {
            panic!("{variable}: {skipped:?}")
        };
        assert_eq!(bad.variable, variable);
        let words = fresh().error_text(error);
        assert!(words.starts_with(&format!("set the `{variable}` variable: ")), "{words}");
        assert_eq!(skipped.text, format!("[replica-a] error: {words}"));
        let check = fresh().check_settings(&settings, 3, true);
        assert!(
            check.problems.iter().any(|p| p.variable == variable),
            "{variable}: {:?}",
            check.problems
        );
    }
}

fn a_claim_a_board_and_the_operators_verbs_answer_under_the_same_settings() {
    let place = Place::new();
    let items: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let mut worker = fresh();
    let claimed = worker.claim(&place.settings("w1"), &items, 2).expect("claims");
    assert_eq!(claimed.runs.len(), 2);
    for run in claimed.runs {
        let finished = worker.run_complete(run, &Outcome::Success("done".into()));
        assert!(finished.error.is_none(), "{finished:?}");
    }
    let board = fresh().board(&place.settings("x")).expect("board");
    assert_eq!(board.locks.len(), 2, "{board:?}");
    assert!(board.locks.iter().all(|l| l.last_outcome.as_deref() == Some("success")));

    let settings = place.settings("replica-a");
    let paused = fresh().pause(&settings, "ops", "deploying", 0).expect("pauses");
    assert_eq!(paused.paused.map(|p| p.by), Some("ops".into()));
    let skipped = match fresh().guarded_invoke(&settings) {
        Decision::Skip(skipped) => skipped,
        Decision::Run(_) => panic!("ran while paused"),
    };
    assert!(
        skipped.text.starts_with("[replica-a] skipped: paused by ops since "),
        "{}",
        skipped.text
    );
    assert!(fresh().resume(&settings, "ops").expect("resumes").paused.is_none());
    assert_eq!(fresh().run_now(&settings, "ops").expect("asks").run_now_by.as_deref(), Some("ops"));
    let mut instance = fresh();
    let run = granted(&mut instance, &settings);
    assert_eq!(instance.run_details(run).manual_by.as_deref(), Some("ops"));
    let finished = instance.run_complete(run, &Outcome::Success(String::new()));
    assert_eq!(
        finished.text,
        "[replica-a] ran the manual run asked by ops with fencing token 1: succeeded"
    );
}

/// Every encoding of a secret a value or a text could leak.
pub fn secrets(key_b64: &str, sig: &str) -> Vec<String> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD.decode(key_b64).expect("a base64 key");
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let lossy =
        String::from_utf8_lossy(&raw).chars().filter(|c| c.is_alphanumeric()).collect::<String>();
    let percent = key_b64.replace('+', "%2B").replace('/', "%2F").replace('=', "%3D");
    let mut found =
        vec![key_b64.to_string(), hex, percent, sig.to_string(), sig.replace('%', "%25")];
    // A long enough run of the decoded key's printable bytes would be a leak too.
    if lossy.len() >= 16 {
        found.push(lossy);
    }
    found
}

fn no_value_or_text_the_contract_hands_out_holds_a_secret() {
    let place = Place::new();
    let sig = "c2VjcmV0LXNpZ25hdHVyZS1tYXJrZXI%3D";
    let marked = secrets(EMULATOR_KEY_B64, sig);
    let mut shown: Vec<String> = Vec::new();
    let settings = place.settings("replica-a");

    let mut leader = fresh();
    let run = granted(&mut leader, &settings);
    shown.push(format!("{:?}", leader.run_details(run)));
    shown.push(leader.run_text(run));
    match fresh().guarded_invoke(&settings) {
        Decision::Skip(skipped) => shown.push(format!("{skipped:?} {}", skipped.text)),
        Decision::Run(_) => panic!("two runs at once"),
    }
    shown.push(format!("{:?}", leader.run_write_fenced(run, "out", b"x")));
    shown.push(format!("{:?}", leader.run_complete(run, &Outcome::Success("ok".into()))));
    shown.push(format!("{:?}", leader.run_complete(run, &Outcome::Success("again".into()))));
    let claimed = leader.claim(&settings, &["i1".to_string()], 1).unwrap();
    for run in claimed.runs {
        shown.push(format!("{:?}", leader.run_details(run)));
        shown.push(format!("{:?}", leader.run_complete(run, &Outcome::Failure("no".into()))));
    }
    shown.push(format!("{:?}", fresh().board(&settings)));
    shown.push(format!("{:?}", fresh().pause(&settings, "ops", "why", 0)));
    shown.push(format!("{:?}", fresh().check_settings(&settings, 2, true)));

    // Refusals: a wrong key (the service's 403), a forged SAS, an unusable string that carries
    // the key, a key string asked for a token.
    let wrong_key =
        connection_string_for_port(place.proxy.port, "d3Jvbmcta2V5LXdyb25nLWtleS13cm9uZy1rZXk=");
    let sas = format!(
        "BlobEndpoint=http://127.0.0.1:{}/devstoreaccount1;SharedAccessSignature=sv=2020-08-04&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00:00:00Z&sig={sig}",
        place.proxy.port
    );
    let unusable = format!(
        "AccountName=devstoreaccount1;AccountKey={EMULATOR_KEY_B64};BlobEndpoint=ftp://nowhere"
    );
    for connection_string in [&wrong_key, &sas, &unusable] {
        let broken =
            v1::Settings { connection_string: Some(connection_string.clone()), ..settings.clone() };
        match fresh().guarded_invoke(&broken) {
            Decision::Skip(skipped) => {
                if let SkipReason::Error(error) = &skipped.reason {
                    shown.push(fresh().error_text(error));
                }
                shown.push(format!("{skipped:?} {}", skipped.text));
            }
            Decision::Run(_) => panic!("ran with a broken credential"),
        }
        shown.push(format!("{:?}", fresh().board(&broken)));
        shown.push(format!("{:?}", fresh().check_settings(&broken, 1, true)));
        let lock = v1::lease::Lock {
            connection_string: connection_string.clone(),
            container: place.container.clone(),
            blob: "daily".into(),
        };
        shown.push(format!("{:?}", fresh().inspect(&lock)));
    }
    shown.push(format!("{:?}", fresh().get_token(&place.connection_string)));
    for text in &shown {
        for secret in &marked {
            assert!(!text.contains(secret.as_str()), "a secret ({secret}) in {text}");
        }
    }
    // The refusals were heard: the check is not passing on empty texts.
    assert!(
        shown.iter().any(|t| t.contains("AuthenticationFailed") || t.contains("403")),
        "{shown:#?}"
    );
}

pub fn tests() -> Vec<Test> {
    traffic_cop_testbed::tests![
        a_run_decides_skips_renews_writes_and_completes_each_with_its_line,
        a_dropped_run_is_taken_over_as_abandoned_after_its_lease,
        a_setting_that_cannot_be_used_names_its_variable_and_sends_nothing,
        a_claim_a_board_and_the_operators_verbs_answer_under_the_same_settings,
        no_value_or_text_the_contract_hands_out_holds_a_secret,
    ]
}

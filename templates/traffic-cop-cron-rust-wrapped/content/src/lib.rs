//! {{project-description}}
//!
//! A plain cron handler: it knows nothing of traffic-cop. spin.toml puts traffic-cop's cron
//! wrapper on the trigger, which asks the guard on every tick and calls this handler only on
//! the replica whose turn it is, once per due time of the `schedule` variable in `time_zone`,
//! renewing the lease while the handler awaits. `metadata.timestamp` is the due time the run
//! is for (Unix seconds). `Ok` is the run's success; `Err` its failure, recorded with its text.
//! Await rather than block: a long computation without an await holds up the renewals.

wit_bindgen::generate!({ world: "plain-job", generate_all });

struct Job;

export!(Job);

impl Guest for Job {
    async fn handle_cron_event(metadata: Metadata) -> Result<(), Error> {
        // The singleton work goes here.
        println!("{{project-name | kebab_case}}: the job ran for the due time {}", metadata.timestamp);
        Ok(())
    }
}

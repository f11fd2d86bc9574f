//! A wrapped app as a user writes it, for the wrappers' stories (wrapper.rs: cron,
//! http_wrapper.rs: HTTP): which Spin, wrapper, lease component and job it runs, and its
//! spin.toml.

use std::path::PathBuf;
use traffic_cop_testbed::docs;
use traffic_cop_testbed::needs::require;
use traffic_cop_testbed::spin::{cron_line, find_spin};

pub const LEASE_SECONDS: u64 = 15;

/// The job is due every this many seconds (`*/3 * * * * *`).
pub const EVERY_SECONDS: u64 = 3;

/// Which trigger calls the wrapper.
#[derive(Clone, Copy, PartialEq)]
pub enum Trigger {
    Cron,
    Http,
}

/// What a fleet runs: the Spin CLI and plugin line, the wrapper, its lease component and the
/// wrapped job.
pub struct Wrapping {
    pub spin: PathBuf,
    pub data: Option<PathBuf>,
    pub trigger: Trigger,
    pub wrapper: PathBuf,
    pub lease: PathBuf,
    pub job: PathBuf,
    /// The wrapper's import the job fills; `None` when the job guards itself (`#[guarded]`,
    /// the one-line form) and is the trigger's component.
    pub wrapped: Option<&'static str>,
}

impl Wrapping {
    /// The async cron wrapper on Spin 4 with trigger-cron 0.5.0.
    pub fn async_on_spin_4() -> Wrapping {
        let spin = require("real spin (wrapper)", find_spin());
        let data = require("real spin (wrapper, cron 0.5.0)", cron_line("0.5.0"));
        traffic_cop_testbed::built::assert_app_built();
        let (lease, _) = traffic_cop_testbed::built::async_components();
        Wrapping {
            spin,
            data: Some(data),
            trigger: Trigger::Cron,
            wrapper: traffic_cop_testbed::built::app_wasm("cron_wrapper_async"),
            lease,
            job: traffic_cop_testbed::built::wrapped_job("async"),
            wrapped: Some("handle-cron-event"),
        }
    }

    /// The job-interface wrapper on Spin 4 with trigger-cron 0.5.0: the job exports
    /// `traffic-cop:job` and is given the run.
    pub fn job_on_spin_4() -> Wrapping {
        Wrapping {
            wrapper: traffic_cop_testbed::built::app_wasm("cron_wrapper_job"),
            job: traffic_cop_testbed::built::wrapped_job("job"),
            wrapped: Some("traffic-cop:job/job@0.1.0"),
            ..Wrapping::async_on_spin_4()
        }
    }

    /// The sync cron wrapper under `spin` with trigger-cron 0.3.0 in `data`.
    pub fn sync_on(spin: PathBuf, data: PathBuf) -> Wrapping {
        traffic_cop_testbed::built::assert_app_built();
        Wrapping {
            spin,
            data: Some(data),
            trigger: Trigger::Cron,
            wrapper: traffic_cop_testbed::built::app_wasm("cron_wrapper"),
            lease: traffic_cop_testbed::built::lease_component(),
            job: traffic_cop_testbed::built::wrapped_job("sync"),
            wrapped: Some("handle-cron-event"),
        }
    }

    pub fn sync_on_spin_4() -> Wrapping {
        let spin = require("real spin (sync wrapper)", find_spin());
        let data = require("real spin (sync wrapper, cron 0.3.0)", cron_line("0.3.0"));
        Wrapping::sync_on(spin, data)
    }

    /// The same wrapper around another job: a guest in another language (target/guests).
    pub fn around(self, job: PathBuf) -> Wrapping {
        Wrapping { job, ..self }
    }

    /// The async HTTP wrapper on Spin 4 (its HTTP trigger hosts WASI 0.3 handlers).
    pub fn http_on_spin_4() -> Wrapping {
        let spin = require("real spin (HTTP wrapper)", find_spin());
        traffic_cop_testbed::built::assert_app_built();
        let (lease, _) = traffic_cop_testbed::built::async_components();
        Wrapping {
            spin,
            data: None,
            trigger: Trigger::Http,
            wrapper: traffic_cop_testbed::built::app_wasm("http_wrapper_async"),
            lease,
            job: traffic_cop_testbed::built::wrapped_job("http"),
            wrapped: Some("wasi:http/handler@0.3.0-rc-2026-03-15"),
        }
    }

    /// The one-line form under `spin` (WASI 0.2 HTTP, so Spin 3.6.3 too): a spin-sdk handler
    /// under `#[traffic_cop_guarded::guarded]`, on the route itself, with the lease component.
    pub fn guarded_on(spin: PathBuf) -> Wrapping {
        Wrapping::guarding_itself(spin, traffic_cop_testbed::built::wrapped_job("guarded"))
    }

    /// The one-line form in another language under `spin`: a componentize-py handler under
    /// `@guarded` (`python`), a ComponentizeJS one under `guarded(…)` (`js`).
    pub fn guarded_guest_on(spin: PathBuf, language: &str) -> Wrapping {
        let job = traffic_cop_testbed::built::guarded_guest(language);
        Wrapping::guarding_itself(spin, require("the guests (scripts/build-guests)", job))
    }

    /// A job on the route itself that guards itself, with the WASI 0.2 lease component.
    fn guarding_itself(spin: PathBuf, job: PathBuf) -> Wrapping {
        traffic_cop_testbed::built::assert_app_built();
        Wrapping {
            spin,
            data: None,
            trigger: Trigger::Http,
            wrapper: job.clone(),
            lease: traffic_cop_testbed::built::lease_component(),
            job,
            wrapped: None,
        }
    }
}

/// A wrapped app as a user writes it: the wrapper on the trigger, the lease component and the
/// user's unchanged job as its dependencies, settings as variables, and the board's routes to
/// the app's `http-job` component, the board shipped beside the wrappers (its cache off, so
/// that it shows the blob as it is). The HTTP app also routes `/hello` straight to the job (not
/// guarded). A job that guards itself (`#[guarded]`) is the component on the trigger, with the
/// lease component as its one dependency.
pub fn spin_toml(how: &Wrapping, storage: &str, handler: &str) -> String {
    let path = |p: &PathBuf| p.display().to_string();
    let (wrapper, lease) = (path(&how.wrapper), path(&how.lease));
    // The job behind the wrapper, filling its import; none when the job guards itself.
    let job = match how.wrapped {
        Some(wrapped) => format!(
            "\"{wrapped}\" = {{ component = \"job\" }}\n\n[component.job]\nsource = \"{}\"\n",
            path(&how.job)
        ),
        None => String::new(),
    };
    // Every wrapped app has the board beside it; the HTTP one also its guarded route and, with a
    // wrapper, a route straight to the job.
    let routes = match (how.trigger, how.wrapped) {
        (Trigger::Cron, _) => vec![],
        (Trigger::Http, Some(_)) => vec![("/run", "nightly"), ("/hello", "job")],
        (Trigger::Http, None) => vec![("/run", "nightly")],
    };
    let routes = routes.into_iter().chain([("/status", "board"), ("/metrics", "board")]);
    let mut triggers: String = routes
        .map(|(route, component)| {
            format!("[[trigger.http]]\nroute = \"{route}\"\ncomponent = \"{component}\"\n\n")
        })
        .collect();
    if how.trigger == Trigger::Cron {
        triggers.push_str(
            "[[trigger.cron]]\ncomponent = \"nightly\"\ncron_expression = \"*/3 * * * * *\"\n",
        );
    }
    let board = format!(
        r#"
[component.board]
source = "{board}"
allowed_outbound_hosts = ["{{{{ storage_endpoint }}}}"]
dependencies_inherit_configuration = true
key_value_stores = ["default"]
[component.board.variables]
{variables}board_cache_seconds = "0"
[component.board.dependencies]
"traffic-cop:lease" = {{ path = "{sync_lease}" }}
"#,
        board = path(&traffic_cop_testbed::built::app_wasm("http_job")),
        variables = component_variables(),
        sync_lease = path(&traffic_cop_testbed::built::lease_component()),
    );
    let manifest = format!(
        r#"spin_manifest_version = 2

[application]
name = "wrapped-job"
version = "0.1.0"

[variables]
connection_string = {{ default = "{storage}", secret = true }}
storage_endpoint = {{ default = "http://127.0.0.1:10000" }}
container = {{ default = "wrapped" }}
lock = {{ default = "nightly" }}
holder = {{ default = "" }}
lease_seconds = {{ default = "{LEASE_SECONDS}" }}
schedule = {{ default = "*/3 * * * * *" }}
time_zone = {{ default = "UTC" }}
max_job_seconds = {{ default = "" }}

{triggers}
[component.nightly]
source = "{wrapper}"
allowed_outbound_hosts = ["{{{{ storage_endpoint }}}}"]
key_value_stores = ["default"]
dependencies_inherit_configuration = true
environment = {{ {handler} }}
[component.nightly.variables]
{variables}max_job_seconds = "{{{{ max_job_seconds }}}}"
[component.nightly.dependencies]
"traffic-cop:lease" = {{ path = "{lease}" }}
{job}{board}"#,
        variables = component_variables(),
    );
    // docs/wrappers.md shows these manifests: its lines must be this one's.
    let documented = match (how.trigger, how.wrapped) {
        (Trigger::Http, Some(_)) => Some("http-wrapper-manifest"),
        (Trigger::Http, None) => Some("guarded-manifest"),
        (Trigger::Cron, _) => None,
    };
    if let Some(name) = documented {
        let shown = docs::output_matches(&docs::example(name), &manifest);
        assert!(shown.is_ok(), "docs/wrappers.md's {name}: {shown:?}\n{manifest}");
    }
    manifest
}

/// The settings both the wrapper and the board read, from the app's variables.
fn component_variables() -> String {
    ["connection_string", "container", "lock", "holder", "lease_seconds", "schedule", "time_zone"]
        .iter()
        .map(|name| format!("{name} = \"{{{{ {name} }}}}\"\n"))
        .collect()
}

//! The wrapped apps the benchmark runs beside the app's own components (docs/wrappers.md): a
//! wrapper on the trigger, the async lease component and a plain test job from
//! harness/cron-handler as its dependencies, or a job that guards itself (`#[guarded]`) with
//! the WASI 0.2 lease component; settings from `SPIN_VARIABLE_*`.

use traffic_cop_testbed::repo_root;

/// `trigger`: the manifest's trigger table for component `nightly`, whose source is `wrapper`;
/// `job`: the wrapper's import and the job that fills it (none: `wrapper` guards itself);
/// `environment`: the job's, as TOML inline-table entries. A cron app
/// gets the board beside it (the app's `http-job` on `/status`), as docs/wrappers.md has it:
/// the bench's `spin up` listens, and Spin refuses to listen for an app without HTTP routes.
pub fn manifest(
    trigger: &str,
    wrapper: &str,
    job: Option<(&str, &str)>,
    environment: &str,
) -> String {
    let wasm = |name: &str| {
        repo_root().join(format!("target/wasm32-wasip2/release/{name}.wasm")).display().to_string()
    };
    let variables = ["connection_string", "container", "lock", "holder", "lease_seconds"]
        .iter()
        .chain(&["schedule", "time_zone"])
        .map(|name| format!("{name} = \"{{{{ {name} }}}}\"\n"))
        .collect::<String>();
    let board = if trigger.contains("[[trigger.cron]]") {
        format!(
            r#"
[[trigger.http]]
route = "/status"
component = "board"

[component.board]
source = "{board}"
allowed_outbound_hosts = ["{{{{ storage_endpoint }}}}"]
dependencies_inherit_configuration = true
[component.board.variables]
{variables}[component.board.dependencies]
"traffic-cop:lease" = {{ path = "{lease}" }}
"#,
            board = wasm("http_job"),
            lease = wasm("traffic_cop"),
        )
    } else {
        String::new()
    };
    let (lease, job) = match job {
        Some((wrapped, job)) => (
            wasm("traffic_cop_async"),
            format!(
                "\"{wrapped}\" = {{ component = \"job\" }}\n\n[component.job]\nsource = \"{}\"\n",
                wasm(job)
            ),
        ),
        None => (wasm("traffic_cop"), String::new()),
    };
    format!(
        r#"spin_manifest_version = 2

[application]
name = "bench-wrapped"
version = "0.1.0"

[variables]
connection_string = {{ required = true, secret = true }}
storage_endpoint = {{ required = true }}
container = {{ required = true }}
lock = {{ default = "bench-wrapped" }}
holder = {{ required = true }}
lease_seconds = {{ required = true }}
schedule = {{ required = true }}
time_zone = {{ default = "UTC" }}
work_ms = {{ default = "0" }}

{trigger}
[component.nightly]
source = "{wrapper}"
allowed_outbound_hosts = ["{{{{ storage_endpoint }}}}"]
dependencies_inherit_configuration = true
environment = {{ {environment} }}
[component.nightly.variables]
{variables}[component.nightly.dependencies]
"traffic-cop:lease" = {{ path = "{lease}" }}
{job}{board}"#,
        wrapper = wasm(wrapper),
    )
}

//! The artifacts `scripts/test` builds before the tests run, and the check that a test never
//! runs against a stale one.

use std::path::{Path, PathBuf};

/// The release build of the lease component the tests exercise; `TRAFFIC_COP_WASM` overrides it.
pub fn wasm_path() -> PathBuf {
    std::env::var_os("TRAFFIC_COP_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_root().join("target/wasm32-wasip2/release/traffic_cop.wasm"))
}

/// Where `spin build` puts the app's components (see spin.toml).
pub fn app_wasm(name: &str) -> PathBuf {
    crate::repo_root().join("target/wasm32-wasip2/release").join(format!("{name}.wasm"))
}

/// Fails loudly when `wasm` is missing or older than any file under `sources` (unit-test files
/// `*_tests.rs` excepted), so a test run can never pass against a stale build.
pub fn assert_fresh(wasm: &Path, sources: &[PathBuf]) {
    let built = std::fs::metadata(wasm).and_then(|m| m.modified()).unwrap_or_else(|_| {
        panic!("{} missing: build it first (scripts/test does)", wasm.display())
    });
    let mut stack = sources.to_vec();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.to_string_lossy().ends_with("_tests.rs") {
            continue;
        } else if std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|m| m > built) {
            panic!(
                "{} is newer than {}: rebuild it (scripts/test does)",
                path.display(),
                wasm.display()
            );
        }
    }
}

/// The lease component, checked against its sources (unless `TRAFFIC_COP_WASM` names another).
pub fn lease_component() -> PathBuf {
    let wasm = wasm_path();
    if std::env::var_os("TRAFFIC_COP_WASM").is_none() {
        let root = crate::repo_root();
        assert_fresh(&wasm, &[root.join("src"), root.join("wit")]);
    }
    wasm
}

/// The async lease component (1.0 and `hold`, WASI 0.3: async/Cargo.toml) and the job that tests
/// its `hold` on Spin 4 (harness/hold-job), checked against their sources.
pub fn async_components() -> (PathBuf, PathBuf) {
    let root = crate::repo_root();
    let lease = async_lease();
    let job = app_wasm("hold_job");
    assert_fresh(
        &job,
        &[root.join("harness/hold-job/src"), root.join("harness/hold-job/wit"), root.join("wit")],
    );
    (lease, job)
}

/// A wrapped job of tests/spin/wrapper.rs and http_wrapper.rs (harness/cron-handler), checked
/// against its sources: a plain handler, `async` (spin:cron@3.0.0), `sync`
/// (fermyon:spin-cron@2.0.0) or `http` (WASI 0.3 `wasi:http/handler`), `job` (exports
/// `traffic-cop:job`), or `guarded` (a spin-sdk handler under `#[guarded]`, which builds
/// apps/guarded in). The wrappers themselves are checked with the app's components.
pub fn wrapped_job(kind: &str) -> PathBuf {
    let root = crate::repo_root().join("harness/cron-handler");
    let name = match kind {
        "sync" => "cron_handler_sync",
        "http" => "http_handler",
        "job" => "job_handler",
        "guarded" => "guarded_http_handler",
        _ => "cron_handler",
    };
    let job = app_wasm(name);
    let mut sources =
        vec![root.join(kind).join("src"), root.join("wit"), root.join("behaviour.rs")];
    if kind == "guarded" {
        let apps = crate::repo_root().join("apps");
        sources.extend(["guarded/src", "guarded-macro/src", "shared/src"].map(|p| apps.join(p)));
    }
    assert_fresh(&job, &sources);
    job
}

/// Fails when the components `spin up` of spin.toml loads are missing or older than their
/// sources: the lease component, the cron component and the HTTP component. What the demo runs,
/// and nothing it does not.
pub fn assert_app_components() {
    let root = crate::repo_root();
    lease_component();
    for app in ["cron-job", "http-job"] {
        assert_app_fresh(&root, app);
    }
}

fn assert_app_fresh(root: &Path, app: &str) {
    assert_fresh(
        &app_wasm(&app.replace('-', "_")),
        &[
            root.join("apps/shared/src"),
            root.join("apps/wit"),
            root.join("apps").join(app).join("src"),
        ],
    );
}

/// The async lease component (1.0 and `hold`, WASI 0.3: async/Cargo.toml), checked against its
/// sources.
fn async_lease() -> PathBuf {
    let root = crate::repo_root();
    let lease = app_wasm("traffic_cop_async");
    assert_fresh(&lease, &[root.join("src"), root.join("wit"), root.join("async/Cargo.toml")]);
    lease
}

/// Fails when any component of the app (every cron component, wrapper and the async lease
/// component the tests load) is missing or older than its sources.
pub fn assert_app_built() {
    lease_component();
    let root = crate::repo_root();
    // The async lease component and the hold job (tests/spin/hold.rs).
    async_components();
    let apps = [
        "cron-job",
        "cron-wrapper",
        "cron-wrapper-async",
        "cron-wrapper-job",
        "http-job",
        "http-wrapper-async",
    ];
    for app in apps {
        assert_app_fresh(&root, app);
    }
}

/// `target/guests/<language>_http_guarded.wasm` (`python` or `js`, from
/// `scripts/build-guests`): the one-line form's job in that language, guests/http-<language>
/// under `guarded` from its package (packages/<language>, built and installed as a user
/// installs it). `Err` says why it is missing; a stale build panics.
pub fn guarded_guest(language: &str) -> Result<PathBuf, String> {
    guarded_guest_under(&crate::repo_root(), language)
}

/// [`guarded_guest`] in the repository at `root`.
pub fn guarded_guest_under(root: &Path, language: &str) -> Result<PathBuf, String> {
    let wasm = guest_built(root, &format!("{language}_http_guarded"))?;
    let (package, job, extension) = match language {
        "js" => ("packages/js", "guests/http-js", "js"),
        _ => ("packages/python/traffic_cop_guarded", "guests/http-python", "py"),
    };
    assert_fresh(&wasm, &guest_sources(root, &[package, job], extension));
    Ok(wasm)
}

fn guest_built(root: &Path, name: &str) -> Result<PathBuf, String> {
    let wasm = root.join("target/guests").join(format!("{name}.wasm"));
    if !wasm.is_file() {
        return Err(format!(
            "{} missing: run scripts/build-guests (it installs the pinned toolchains)",
            wasm.display()
        ));
    }
    Ok(wasm)
}

/// A guest's own modules in each of `folders` (guarded.js and its siblings; not node_modules or
/// __pycache__), and the WIT its bindings come from.
fn guest_sources(root: &Path, folders: &[&str], extension: &str) -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = folders
        .iter()
        .flat_map(|folder| std::fs::read_dir(root.join(folder)))
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == extension))
        .collect();
    // Only the WIT the bindings come from: other files beside it (a wkg.toml) do not count.
    let mut dirs = vec![root.join("packages/wit")];
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "wit") {
                sources.push(path);
            }
        }
    }
    sources
}

/// `target/guests/<name>.wasm`, a cron job in another language behind the wrappers
/// (`python_cron_sync`, `python_cron_async`, `js_cron_sync`, from `scripts/build-guests`): its
/// sources are `guests/cron-<language>/` and the cron WIT of harness/cron-handler. `Err` says
/// why it is missing; a stale build panics.
pub fn cron_guest(name: &str) -> Result<PathBuf, String> {
    let root = crate::repo_root();
    let wasm = root.join("target/guests").join(format!("{name}.wasm"));
    if !wasm.is_file() {
        return Err(format!(
            "{} missing: run scripts/build-guests (it installs the pinned toolchains)",
            wasm.display()
        ));
    }
    let language = name.split('_').next().unwrap_or_default();
    let sources = [
        root.join("guests").join(format!("cron-{language}")),
        root.join("harness/cron-handler/wit"),
    ];
    // Not node_modules: the toolchain's own files are pinned, not sources.
    let sources: Vec<PathBuf> = sources
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| !p.ends_with("node_modules") && !p.ends_with("__pycache__"))
        .collect();
    assert_fresh(&wasm, &sources);
    Ok(wasm)
}

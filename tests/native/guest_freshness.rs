//! A guest build older than any of the guest's modules is never run: the check covers every
//! module of the one-line form and of its job, not only the entry file.

use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, SystemTime};
use traffic_cop_testbed::built::guarded_guest_under;

fn write_at(path: &Path, when: SystemTime) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "x").unwrap();
    File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
}

/// A scratch repository with the guest built at `built` and every source an hour older.
fn repo(name: &str, language: &str, entry: &str) -> (std::path::PathBuf, SystemTime) {
    let root = std::env::temp_dir().join(format!("tc-guest-fresh-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let built = SystemTime::now() - Duration::from_secs(60);
    let older = built - Duration::from_secs(3600);
    write_at(&root.join(format!("target/guests/{language}_http_guarded.wasm")), built);
    write_at(&root.join("guests").join(entry), older);
    write_at(&root.join("packages/wit/guest.wit"), older);
    (root, built)
}

#[test]
fn a_guest_module_newer_than_the_build_makes_it_stale() {
    for (language, entry, module) in [
        ("js", "http-js/guarded_job.js", "packages/js/guarded.js"),
        ("python", "http-python/guarded_job.py", "packages/python/traffic_cop_guarded/_guarded.py"),
    ] {
        let (root, built) = repo(language, language, entry);
        assert!(guarded_guest_under(&root, language).is_ok(), "{language}: fresh build refused");
        write_at(&root.join(module), built + Duration::from_secs(30));
        let stale = std::panic::catch_unwind(|| guarded_guest_under(&root, language));
        assert!(stale.is_err(), "{language}: a build older than {module} was accepted");
        fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn files_of_another_kind_beside_the_guest_do_not_count() {
    let (root, built) = repo("other", "js", "http-js/guarded_job.js");
    write_at(&root.join("guests/js/package-lock.json"), built + Duration::from_secs(30));
    write_at(&root.join("guests/js/node_modules/x/index.js"), built + Duration::from_secs(30));
    assert!(
        guarded_guest_under(&root, "js").is_ok(),
        "node_modules or the lock file made it stale"
    );
    fs::remove_dir_all(&root).unwrap();
}

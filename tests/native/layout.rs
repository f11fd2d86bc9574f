//! The folders say what ships and what only tests it: nothing outside the test bed (`harness/`,
//! `tests/`) reaches into it by a symbolic link, so a product folder copied or packaged alone
//! still has every file it names. (`packages/wit`'s Spin variables interface once pointed into
//! `harness/wasm-host/`.) And one workspace builds it all, with one lock.

use std::path::{Component, Path, PathBuf};

const TEST_BED: [&str; 2] = ["harness", "tests"];
/// Not the repository's own files: build output and installed tools.
const SKIPPED: [&str; 3] = ["target", "node_modules", ".git"];

/// The repository's symbolic links (`named` None) or its files of one name.
fn walk(dir: &Path, named: Option<&str>, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            if named.is_none() {
                found.push(path);
            }
        } else if kind.is_dir() {
            walk(&path, named, found);
        } else if named.is_some_and(|n| name == n) {
            found.push(path);
        }
    }
}

/// The top folder of `path` inside the repository, after resolving `..` lexically.
fn top_folder(root: &Path, path: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for part in path.strip_prefix(root).ok()?.components() {
        match part {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.into_iter().next()
}

#[test]
fn no_product_file_links_into_the_test_bed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    walk(root, None, &mut found);
    assert!(!found.is_empty(), "no links found: the walk is broken");
    let mut wrong = Vec::new();
    for link in &found {
        let from = top_folder(root, link).unwrap_or_default();
        let target = link.parent().unwrap().join(std::fs::read_link(link).unwrap());
        let to = top_folder(root, &target).unwrap_or_else(|| "outside the repository".into());
        if !TEST_BED.contains(&from.as_str()) && TEST_BED.contains(&to.as_str()) {
            wrong.push(format!("{} -> {}", link.display(), target.display()));
        }
    }
    assert!(wrong.is_empty(), "product files that are links into the test bed: {wrong:#?}");
}

/// One Cargo.lock, and every crate in the repository a member of the root's workspace (the
/// templates' projects excepted: `spin new` makes each a workspace of its own). There were
/// five workspaces, each with its lock, resolving the same dependencies apart.
#[test]
fn one_workspace_and_one_lock_build_everything() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut locks = Vec::new();
    walk(root, Some("Cargo.lock"), &mut locks);
    assert_eq!(locks, [root.join("Cargo.lock")], "lock files");

    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let members: Vec<PathBuf> = manifest["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| root.join(m.as_str().unwrap()).join("Cargo.toml"))
        .collect();
    let mut crates = Vec::new();
    walk(root, Some("Cargo.toml"), &mut crates);
    crates.retain(|c| !c.starts_with(root.join("templates")));
    assert!(crates.len() > 10, "the walk found {crates:?}");
    let outside: Vec<_> = crates
        .iter()
        .filter(|c| !members.iter().any(|m| m.canonicalize().ok() == c.canonicalize().ok()))
        .collect();
    assert!(outside.is_empty(), "crates outside the workspace: {outside:#?}");
    for member in &crates {
        let text = std::fs::read_to_string(member).unwrap();
        let table: toml::Value = toml::from_str(&text).unwrap();
        if member != &root.join("Cargo.toml") {
            assert!(table.get("workspace").is_none(), "{} is a workspace root", member.display());
            assert!(
                table.get("profile").is_none(),
                "{}: a member's profile is ignored",
                member.display()
            );
        }
    }
}

/// Lines of code: not blank, not a comment, not inside a Python docstring.
fn code_lines(text: &str) -> usize {
    let mut in_docstring = false;
    let mut count = 0;
    for line in text.lines().map(str::trim) {
        let quotes = line.matches("\"\"\"").count();
        if in_docstring || line.starts_with("\"\"\"") {
            in_docstring = if in_docstring { quotes == 0 } else { quotes == 1 };
            continue;
        }
        if !(line.is_empty() || line.starts_with("//") || line.starts_with('#')) {
            count += 1;
        }
    }
    count
}

/// Every consumer of the guard is a thin adapter over the lease component's one sequence: at
/// most 60 lines of code each (the Rust ones share apps/shared, the run's loop).
#[test]
fn every_adapter_is_at_most_sixty_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let adapters = [
        "apps/cron-wrapper/src/lib.rs",
        "apps/cron-wrapper-async/src/lib.rs",
        "apps/cron-wrapper-job/src/lib.rs",
        "apps/http-wrapper-async/src/lib.rs",
        "apps/guarded/src/lib.rs",
        "packages/python/traffic_cop_guarded/_guarded.py",
        "packages/js/guarded.js",
    ];
    let long: Vec<(&str, usize)> = adapters
        .iter()
        .map(|a| (*a, code_lines(&std::fs::read_to_string(root.join(a)).expect(a))))
        .filter(|(_, n)| *n > 60)
        .collect();
    assert!(long.is_empty(), "adapters over 60 lines of code: {long:?}");
    let docstring = "\"\"\"A module.\n\nMore.\n\"\"\"\n\nimport sys\n# a comment\n\nx = 1\n";
    assert_eq!(code_lines(docstring), 2, "the count itself");
}

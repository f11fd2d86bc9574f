//! The folders say what ships and what only tests it: nothing outside the test bed (`harness/`,
//! `tests/`) reaches into it by a symbolic link, so a product folder copied or packaged alone
//! still has every file it names. (`guests/wit`'s Spin variables interface once pointed into
//! `harness/wasm-host/`.)

use std::path::{Component, Path, PathBuf};

const TEST_BED: [&str; 2] = ["harness", "tests"];
/// Not the repository's own files: build output and installed tools.
const SKIPPED: [&str; 3] = ["target", "node_modules", ".git"];

fn links(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            found.push(path);
        } else if kind.is_dir() {
            links(&path, found);
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
    links(root, &mut found);
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

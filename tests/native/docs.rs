//! The user docs (README.md, docs/**, templates/README.md): within their budgets, free of the
//! development log, every relative link landing on a file and, with `#anchor`, on a heading,
//! every example run, part of a file the tests build or marked not runnable, and every version
//! they name one that release.toml lists and the tests run.

use std::path::{Path, PathBuf};
use traffic_cop_testbed::docs::{self, user_docs, Example, How};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The words a reader sees: an example's mark (an HTML comment) is not shown.
fn words(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("<!--"))
        .flat_map(str::split_whitespace)
        .count()
}

#[test]
fn the_docs_keep_their_budgets() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(readme.lines().count() <= 150, "README.md: {} lines", readme.lines().count());
    let long: Vec<(usize, &str)> =
        readme.lines().enumerate().filter(|(_, l)| l.chars().count() > 100).collect();
    assert!(long.is_empty(), "README.md lines over 100 characters: {long:#?}");
    let counts: Vec<(String, usize)> = user_docs()
        .iter()
        .map(|p| (p.display().to_string(), words(&std::fs::read_to_string(p).unwrap())))
        .collect();
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    assert!(total <= 15_000, "{total} words in the user docs: {counts:#?}");
    assert!(counts.len() >= 10, "{counts:?}");
}

/// A date (`2026-11-27`) at the start of `text`.
fn date_at(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// What belongs to contributors or nowhere: dates of findings, issue numbers, commit hashes,
/// the test bed's vocabulary.
#[test]
fn the_docs_hold_no_development_log() {
    let hash = |w: &str| {
        let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        (7..=40).contains(&w.len())
            && w.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            && w.chars().any(|c| c.is_ascii_digit())
            && w.chars().any(|c| c.is_ascii_alphabetic())
    };
    let mut found = Vec::new();
    for page in user_docs() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let dated = ["measured 20", "tried 20", "on 20", "found (20", "before (20"]
                .iter()
                .any(|d| lower.match_indices(d).any(|(at, d)| date_at(&lower[at + d.len() - 2..])))
                || lower.match_indices('(').any(|(at, _)| {
                    date_at(&lower[at + 1..])
                        && matches!(lower[at + 11..].chars().next(), Some(')' | ','))
                });
            let words_of_the_bed = ["spike", " stories", "issue #", "issue 4", "issue 2"]
                .iter()
                .any(|w| lower.contains(w));
            let hashed = line.split_whitespace().any(|w| hash(w) && !line.contains("sha256"));
            if dated || words_of_the_bed || hashed {
                found.push(format!("{}:{}: {line}", page.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "development log in the user docs: {found:#?}");
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines of a page outside its fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .into_iter()
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect()
}

/// The `](target)` links of a page, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            found.push(tail[..end].to_string());
            rest = &tail[end..];
        }
        // Reference-style definitions: `[name]: target`.
        if let Some(def) = line.strip_prefix('[').and_then(|l| l.split_once("]: ")) {
            found.push(def.1.trim().to_string());
        }
    }
    found
}

#[test]
fn every_relative_link_in_the_docs_lands() {
    let mut broken = Vec::new();
    let pages: Vec<PathBuf> = [user_docs(), vec![Path::new(ROOT).join("CONTRIBUTING.md")]].concat();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in links(&text) {
            if link.starts_with("http") || link.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target =
                if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            if !target.exists() {
                broken.push(format!("{}: {link} (no file)", page.display()));
                continue;
            }
            if !fragment.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let headings = anchors(&std::fs::read_to_string(&target).unwrap());
                if !headings.iter().any(|h| h == fragment) {
                    broken.push(format!("{}: {link} (no heading)", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links that land nowhere: {broken:#?}");
}

/// The link check can fail: a page with a link to a missing heading and a missing file.
#[test]
fn the_link_check_sees_a_broken_link() {
    let text = "see [x](missing.md) and [y](#nowhere)\n# Somewhere\n";
    assert_eq!(links(text), ["missing.md", "#nowhere"]);
    assert_eq!(anchors(text), ["somewhere"]);
    assert_eq!(anchor("The HTTP wrapper (Spin 4)"), "the-http-wrapper-spin-4");
    assert_eq!(anchor("`hold` (the async component)"), "hold-the-async-component");
    assert!(date_at("2026-11-27)") && !date_at("2026-11-2"));
}

/// An example held to its mark: a `run by` file that takes it by name, a `part of` file that
/// holds it.
fn judge(example: &Example) -> Result<How, String> {
    let how = docs::how(&example.mark)?;
    match &how {
        How::Run { name, by } => {
            if !try_read(by)?.contains(&format!("\"{name}\"")) {
                return Err(format!("{by} does not take the example {name:?}"));
            }
        }
        How::PartOf(path) => docs::part_of(example, &try_read(path)?)?,
        How::NotRunnable(_) => {}
    }
    Ok(how)
}

/// Where an example stands, as `page:line`.
fn place(example: &Example) -> String {
    let page = example.page.strip_prefix(ROOT).unwrap_or(&example.page);
    format!("{}:{}", page.display(), example.line)
}

#[test]
fn every_example_is_run_part_of_a_built_file_or_marked_not_runnable() {
    let examples = docs::all();
    assert!(examples.len() >= 20, "{} examples: {examples:#?}", examples.len());
    let (mut wrong, mut unrun, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for example in &examples {
        match judge(example) {
            Ok(How::NotRunnable(reason)) => unrun.push(format!("{}: {reason}", place(example))),
            Ok(How::Run { name, .. }) => names.push(name),
            Ok(How::PartOf(_)) => {}
            Err(why) => wrong.push(format!("{}: {why}", place(example))),
        }
    }
    assert!(wrong.is_empty(), "examples not held to their marks: {wrong:#?}");
    assert!(unrun.len() <= 10, "{} examples not runnable: {unrun:#?}", unrun.len());
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "two examples share a name: {names:?}");
}

/// The check fails a block without a mark, a reason outside the list, a run nobody takes, and
/// a `part of` example one line of which changed.
#[test]
fn the_example_check_sees_a_broken_example() {
    let page = Path::new(ROOT).join("docs/wrappers.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let examples = docs::examples_of(&page, &text);
    let part = examples
        .iter()
        .find(|e| matches!(docs::how(&e.mark), Ok(How::PartOf(_))))
        .expect("a part-of example in docs/wrappers.md");
    assert!(judge(part).is_ok(), "{part:#?}");
    let code = part.body.lines().find(|l| !l.trim().is_empty()).unwrap();
    let broken =
        Example { body: part.body.replacen(code, &format!("{code} x"), 1), ..part.clone() };
    assert!(judge(&broken).unwrap_err().contains("is not there"), "{broken:#?}");
    let unmarked = Example { mark: String::new(), ..part.clone() };
    assert!(judge(&unmarked).unwrap_err().contains("no `<!-- example"));
    let excuse =
        Example { mark: "<!-- example: not runnable, too slow -->".into(), ..part.clone() };
    assert!(judge(&excuse).unwrap_err().contains("not one of"));
    let orphan =
        Example { mark: "<!-- example nobody: run by docs/wrappers.md -->".into(), ..part.clone() };
    assert!(judge(&orphan).unwrap_err().contains("does not take"));
    let blocks = docs::examples_of(&page, "<!-- example: part of x -->\n```toml\na = 1\n```\n");
    assert_eq!((blocks[0].line, blocks[0].body.as_str()), (2, "a = 1\n"));
    assert_eq!(docs::how(&blocks[0].mark), Ok(How::PartOf("x".into())));
    let commands =
        docs::shell_commands("A=1 spin up --x 'a b' \\\n  -y & # note\ncd d && ls; pwd\n");
    let words: Vec<(String, Vec<String>, bool)> =
        commands.iter().map(|c| (c.program.clone(), c.args.clone(), c.background)).collect();
    assert_eq!(words[0].1, ["up", "--x", "a b", "-y"]);
    assert_eq!(commands[0].env, [("A".to_string(), "1".to_string())]);
    assert!(words[0].2 && !words[1].2);
    assert_eq!(words.iter().map(|w| w.0.as_str()).collect::<Vec<_>>(), ["spin", "cd", "ls", "pwd"]);
}

/// The docs' SQL fence (docs/guarantees-and-protocol.md) in SQLite (Python's sqlite3): an older
/// run's write changes no row, the same run's and a newer one's do.
#[test]
fn the_sql_example_lets_no_older_run_write() {
    let sql = docs::example("fenced-sql");
    let script = r#"
import sqlite3, sys
db = sqlite3.connect(":memory:")
db.execute("CREATE TABLE results (id INTEGER PRIMARY KEY, payload TEXT, fencing_token INTEGER)")
db.execute("INSERT INTO results VALUES (1, 'from run 5', 5)")
update = sys.stdin.read()
for token in (4, 5, 6, 5):
    changed = db.execute(update, {"id": 1, "payload": f"from run {token}", "token": token}).rowcount
    print(token, changed, db.execute("SELECT payload FROM results").fetchone()[0])
"#;
    let mut python = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    use std::io::Write;
    python.stdin.take().unwrap().write_all(sql.as_bytes()).unwrap();
    let out = python.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        said.lines().collect::<Vec<_>>(),
        ["4 0 from run 5", "5 1 from run 5", "6 1 from run 6", "5 0 from run 6"]
    );
}

/// A file of the repository, or why it cannot be read.
fn try_read(path: &str) -> Result<String, String> {
    std::fs::read_to_string(Path::new(ROOT).join(path)).map_err(|e| format!("{path}: {e}"))
}

fn read(path: &str) -> String {
    try_read(path).unwrap_or_else(|e| panic!("{e}"))
}

/// release.toml's `[versions]`: a name's versions.
fn listed_versions() -> Vec<(String, Vec<String>)> {
    let release: toml::Table = toml::from_str(&read("release.toml")).unwrap();
    let versions = release["versions"].as_table().expect("release.toml's [versions]");
    versions
        .iter()
        .map(|(name, list)| {
            let list = list.as_array().unwrap_or_else(|| panic!("{name}: a list"));
            (name.clone(), list.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        })
        .collect()
}

/// A package's version in an npm lock file.
fn npm_locked(lock: &str, package: &str) -> String {
    let lock: serde_json::Value = serde_json::from_str(&read(lock)).unwrap();
    let entry = &lock["packages"][format!("node_modules/{package}")]["version"];
    entry.as_str().unwrap_or_else(|| panic!("{package} in {lock}")).to_string()
}

/// What the tests install, build against or validate with, by release.toml's names.
fn tested_versions() -> Vec<(&'static str, Vec<String>)> {
    let spin_4 = std::fs::read_to_string(Path::new(ROOT).join("../shared/tools/spin/install.sh"))
        .ok()
        .and_then(|s| {
            let at = s.find("${SPIN_VERSION:-")? + "${SPIN_VERSION:-".len();
            Some(s[at..at + s[at..].find('}')?].to_string())
        });
    let mut spin = vec![traffic_cop_testbed::spin::SPIN_3.to_string()];
    // Without ../shared (a developer's checkout), the Spin 4 line goes unchecked.
    spin.extend(spin_4.or_else(|| {
        let listed = listed_versions();
        listed.iter().find(|(n, _)| n == "spin")?.1.iter().find(|v| v.starts_with('4')).cloned()
    }));
    let lock: toml::Table = toml::from_str(&read("Cargo.lock")).unwrap();
    let sdk = lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some("spin-sdk"))
        .map(|p| p["version"].as_str().unwrap().to_string())
        .expect("spin-sdk in Cargo.lock");
    let guest_tools = read("scripts/guest-tools");
    let py = guest_tools.lines().find_map(|l| l.strip_prefix("COMPONENTIZE_PY=")).unwrap();
    let cargo: toml::Table = toml::from_str(&read("Cargo.toml")).unwrap();
    let rust = cargo["package"]["rust-version"].as_str().unwrap().to_string();
    let operator = read("deploy/spinkube/schemas/README.md");
    let operator = operator.split("spin-operator **v").nth(1).and_then(|s| s.split("**").next());
    let kubernetes: Vec<String> =
        std::fs::read_dir(Path::new(ROOT).join("deploy/spinkube/schemas"))
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let version = name.strip_prefix("k8s-v")?.split('-').next()?.to_string();
                Some(
                    version
                        .rsplit_once('.')
                        .map_or(version.clone(), |(minor, _)| minor.to_string()),
                )
            })
            .collect();
    let mut kubernetes = kubernetes;
    kubernetes.dedup();
    let shim = |lock: &str| npm_locked(lock, "@bytecodealliance/preview2-shim");
    let pinned = |file: &str, package: &str| {
        let text = read(file);
        let line = text.lines().find_map(|l| l.strip_prefix(&format!("{package}==")));
        line.unwrap_or_else(|| panic!("{package} in {file}")).trim().to_string()
    };
    let metrics = read("apps/shared/src/metrics.rs");
    let format = metrics.split("text/plain; version=").nth(1).and_then(|s| s.split(';').next());
    vec![
        ("spin", spin),
        ("trigger-cron", traffic_cop_testbed::spin::CRON_LINES.map(str::to_string).to_vec()),
        ("spin-sdk", vec![sdk]),
        ("componentize-py", vec![py.to_string()]),
        (
            "componentize-js",
            vec![npm_locked("guests/js/package-lock.json", "@bytecodealliance/componentize-js")],
        ),
        (
            "preview2-shim",
            vec![shim("guests/js/package-lock.json"), shim("examples/node/package-lock.json")],
        ),
        ("jco", vec![npm_locked("examples/node/package-lock.json", "@bytecodealliance/jco")]),
        ("azurite", vec![npm_locked("tools/azurite/package-lock.json", "azurite")]),
        ("rust", vec![rust]),
        ("spin-operator", operator.map(str::to_string).into_iter().collect()),
        ("kubernetes", kubernetes),
        (
            "azure-storage-blob",
            vec![
                pinned("bench/requirements.txt", "azure-storage-blob"),
                pinned("tests/oracles/requirements.txt", "azure-storage-blob"),
            ],
        ),
        ("prometheus-text-format", format.map(str::to_string).into_iter().collect()),
    ]
}

#[test]
fn release_toml_lists_the_versions_the_tests_run() {
    let listed = listed_versions();
    for (name, mut tested) in tested_versions() {
        let (_, mut named) = listed.iter().find(|(n, _)| n == name).cloned().unwrap_or_default();
        tested.sort();
        tested.dedup();
        named.sort();
        assert_eq!(named, tested, "release.toml's {name} against what the tests run");
    }
}

/// Whether `said` names `version`: the same, a prefix at a dot (`4` of `4.0.2`), or a line
/// (`0.3.x`).
fn names(said: &str, version: &str) -> bool {
    let said = said.strip_suffix(".x").unwrap_or(said);
    version == said || version.strip_prefix(said).is_some_and(|rest| rest.starts_with('.'))
}

/// The versions in `text` after `name` (`Spin 4.0.2`, `trigger-cron 0.3.x`, `spin-operator
/// v0.6.1`): a version starts with a digit and holds digits, dots and a last `x`.
fn versions_after<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices(name) {
        let rest = &text[at + name.len()..];
        let rest = rest.strip_prefix(' ').map(|r| r.strip_prefix('v').unwrap_or(r));
        let Some(rest) = rest.filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) else {
            continue;
        };
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'x'))
            .unwrap_or(rest.len());
        found.push(rest[..end].trim_end_matches('.'));
    }
    found
}

/// Every `x.y.z` version in `text` that is not part of an address (`127.0.0.1`).
fn three_part_versions(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit()
            || (at > 0 && (bytes[at - 1].is_ascii_digit() || bytes[at - 1] == b'.'))
        {
            at += 1;
            continue;
        }
        let end = (at..bytes.len())
            .find(|&i| !(bytes[i].is_ascii_digit() || bytes[i] == b'.'))
            .unwrap_or(bytes.len());
        let word = text[at..end].trim_end_matches('.');
        if word.split('.').count() == 3 && word.split('.').all(|p| !p.is_empty()) {
            found.push(word.to_string());
        }
        at = end;
    }
    found
}

/// The WIT packages' versions in the repository (`@1.0.0`, `@0.3.0-rc-2026-03-15`).
fn wit_versions() -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs = vec![
        Path::new(ROOT).join("wit"),
        Path::new(ROOT).join("apps/wit"),
        Path::new(ROOT).join("packages/wit"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "wit") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (at, _) in text.match_indices('@') {
                    let rest = &text[at + 1..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                        .unwrap_or(rest.len());
                    found.push(rest[..end].to_string());
                }
            }
        }
    }
    found
}

/// The docs name the tools by these words; a version after one must be release.toml's.
const NAMED: [(&str, &[&str]); 12] = [
    ("Spin", &["spin"]),
    ("trigger-cron", &["trigger-cron", "trigger-cron-untested"]),
    ("spin-sdk", &["spin-sdk"]),
    ("componentize-py", &["componentize-py"]),
    ("ComponentizeJS", &["componentize-js"]),
    ("preview2-shim", &["preview2-shim"]),
    ("jco", &["jco"]),
    ("Azurite", &["azurite"]),
    ("Rust", &["rust"]),
    ("spin-operator", &["spin-operator"]),
    ("Kubernetes", &["kubernetes"]),
    ("shim up to", &["containerd-shim-spin"]),
];

#[test]
fn every_version_in_the_docs_is_release_tomls() {
    let listed = listed_versions();
    let release: toml::Table = toml::from_str(&read("release.toml")).unwrap();
    let package = release["version"].as_str().unwrap().to_string();
    let mut known: Vec<String> = listed.iter().flat_map(|(_, v)| v.clone()).collect();
    known.push(package);
    known.extend(wit_versions());
    let mut wrong = Vec::new();
    for page in user_docs() {
        let text = std::fs::read_to_string(&page).unwrap();
        let text = text.replace('\n', " ");
        for (word, keys) in NAMED {
            let allowed: Vec<&String> = listed
                .iter()
                .filter(|(n, _)| keys.contains(&n.as_str()))
                .flat_map(|(_, v)| v)
                .collect();
            for said in versions_after(&text, word) {
                if !allowed.iter().any(|v| names(said, v)) {
                    wrong.push(format!(
                        "{}: {word} {said} (release.toml: {allowed:?})",
                        page.display()
                    ));
                }
            }
        }
        for version in three_part_versions(&text) {
            if !known.iter().any(|k| k == &version || k.starts_with(&format!("{version}-"))) {
                wrong.push(format!(
                    "{}: {version} is not in release.toml or a WIT package",
                    page.display()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "versions the docs name that nothing pins: {wrong:#?}");
}

/// The version checks see a version nobody pins.
#[test]
fn the_version_check_sees_a_stray_version() {
    let text =
        "Spin 4.0.2 and Spin 4, trigger-cron 0.3.x, spin-operator v0.6.1. On 127.0.0.1 9.9.9.";
    assert_eq!(versions_after(text, "Spin"), ["4.0.2", "4"]);
    assert_eq!(versions_after(text, "trigger-cron"), ["0.3.x"]);
    assert_eq!(versions_after(text, "spin-operator"), ["0.6.1"]);
    assert_eq!(three_part_versions(text), ["4.0.2", "0.6.1", "9.9.9"]);
    assert!(names("4", "4.0.2") && names("0.3.x", "0.3.0") && names("3.6.3", "3.6.3"));
    assert!(!names("4.0.1", "4.0.2") && !names("3.6", "3.60.1") && !names("0.4.x", "0.3.0"));
}

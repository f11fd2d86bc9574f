//! The user docs (README.md, docs/**, templates/README.md): within their budgets, free of the
//! development log, and every relative link lands on a file and, with `#anchor`, on a heading.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn user_docs() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut docs = vec![root.join("README.md"), root.join("templates/README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

fn words(text: &str) -> usize {
    text.split_whitespace().count()
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

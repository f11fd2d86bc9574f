//! The user docs' fenced examples, as the tests read them. Every block in README.md,
//! templates/README.md and docs/*.md carries a mark on the line above it that says how it is
//! checked, and tests/native/docs.rs holds each to its mark:
//!
//! - `<!-- example NAME: run by PATH -->`: the test in PATH names it (`"NAME"`), takes the block
//!   with [`example`] and runs it (its commands, its manifest, its query), or holds what it ran
//!   to it (a manifest, a sample of output);
//! - `<!-- example: part of PATH -->`: the block's code lines stand, in order, in PATH, a file
//!   the tests build or run (an excerpt of a job, a template, a WIT package);
//! - `<!-- example: not runnable, REASON -->`: REASON is one of [`NOT_RUNNABLE`].

use std::path::{Path, PathBuf};

/// Why an example may stay unrun: what this machine cannot reach.
pub const NOT_RUNNABLE: [&str; 4] =
    ["needs real Azure", "needs GitHub", "needs the internet", "needs a Kubernetes cluster"];

/// How far apart (in lines of the file) two consecutive lines of a `part of` example may stand.
const PART_GAP: usize = 60;

/// One fenced block of a user doc.
#[derive(Debug, Clone)]
pub struct Example {
    pub page: PathBuf,
    /// The line of its opening fence (1-based).
    pub line: usize,
    pub lang: String,
    /// The `<!-- example… -->` comment on the line above the fence, or "".
    pub mark: String,
    pub body: String,
}

/// What a mark says.
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    Run { name: String, by: String },
    PartOf(String),
    NotRunnable(String),
}

/// The pages a user reads: README.md, templates/README.md and docs/*.md.
pub fn user_docs() -> Vec<PathBuf> {
    let root = crate::repo_root();
    let mut docs = vec![root.join("README.md"), root.join("templates/README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

/// The fenced blocks of `text` (the page `page`).
pub fn examples_of(page: &Path, text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        // A fence may be indented (a block inside a list item); its lines lose that indent.
        let indent = lines[at].len() - lines[at].trim_start().len();
        let Some(lang) = lines[at].trim_start().strip_prefix("```") else {
            at += 1;
            continue;
        };
        let end = (at + 1..lines.len())
            .find(|&i| lines[i].trim_start().starts_with("```"))
            .unwrap_or(lines.len());
        let above = if at > 0 { lines[at - 1].trim() } else { "" };
        let mark =
            if above.starts_with("<!-- example") { above.to_string() } else { String::new() };
        let fence_indent = &lines[at][..indent];
        let body = lines[at + 1..end]
            .iter()
            .map(|l| format!("{}\n", l.strip_prefix(fence_indent).unwrap_or(l)))
            .collect();
        found.push(Example {
            page: page.to_path_buf(),
            line: at + 1,
            lang: lang.trim().into(),
            mark,
            body,
        });
        at = end + 1;
    }
    found
}

/// Every fenced block of the user docs.
pub fn all() -> Vec<Example> {
    user_docs()
        .iter()
        .flat_map(|page| examples_of(page, &std::fs::read_to_string(page).expect("a user doc")))
        .collect()
}

/// The mark's meaning, or why it has none.
pub fn how(mark: &str) -> Result<How, String> {
    let inner = mark
        .strip_prefix("<!-- example")
        .and_then(|m| m.strip_suffix("-->"))
        .ok_or_else(|| format!("no `<!-- example… -->` mark above the block (found {mark:?})"))?;
    let (name, said) = inner.split_once(':').ok_or_else(|| format!("no `:` in {mark:?}"))?;
    let (name, said) = (name.trim(), said.trim());
    if let Some(by) = said.strip_prefix("run by ") {
        if name.is_empty() {
            return Err(format!("a run example needs a name: {mark:?}"));
        }
        return Ok(How::Run { name: name.into(), by: by.trim().into() });
    }
    if !name.is_empty() {
        return Err(format!("only a run example has a name: {mark:?}"));
    }
    if let Some(of) = said.strip_prefix("part of ") {
        return Ok(How::PartOf(of.trim().into()));
    }
    if let Some(reason) = said.strip_prefix("not runnable, ") {
        return NOT_RUNNABLE
            .iter()
            .find(|r| **r == reason.trim())
            .map(|r| How::NotRunnable(r.to_string()))
            .ok_or_else(|| format!("{reason:?} is not one of {NOT_RUNNABLE:?}"));
    }
    Err(format!("{mark:?} says neither `run by`, `part of` nor `not runnable`"))
}

/// The body of the one example marked `<!-- example NAME: run by … -->`.
pub fn example(name: &str) -> String {
    let named: Vec<Example> = all()
        .into_iter()
        .filter(|e| matches!(how(&e.mark), Ok(How::Run { name: n, .. }) if n == name))
        .collect();
    assert_eq!(named.len(), 1, "examples named {name:?} in the user docs: {named:#?}");
    named[0].body.clone()
}

/// `text` with each `(from, to)` replaced; a `from` the text lacks fails the test, so an example
/// that changed under its test is seen.
pub fn replaced(text: &str, edits: &[(&str, &str)]) -> String {
    let mut text = text.to_string();
    for (from, to) in edits {
        assert!(text.contains(from), "the example no longer holds {from:?}:\n{text}");
        text = text.replace(from, to);
    }
    text
}

/// A line without its trailing comment (`#` for shell, TOML and Python, `//` for Rust, JS and
/// WIT), outside quotes.
fn code_of<'a>(line: &'a str, lang: &str) -> &'a str {
    let slashes = matches!(lang, "rust" | "js" | "wit");
    let bytes = line.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if slashes && b == b'/' && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            None if !slashes && b == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) => {
                return &line[..i]
            }
            None => {}
        }
    }
    line
}

fn normal(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `line` matches `pattern`, whose `…` stands for any text.
fn matches_line(pattern: &str, line: &str) -> bool {
    let mut pieces = pattern.split('…');
    let first = pieces.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else { return false };
    let pieces: Vec<&str> = pieces.collect();
    for (i, piece) in pieces.iter().enumerate() {
        if i == pieces.len() - 1 {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether the example's code lines (comments dropped, whitespace normalised, `…` standing for
/// any text) stand in order in `file`, each within [`PART_GAP`] lines of the one before.
pub fn part_of(example: &Example, file: &str) -> Result<(), String> {
    let file: Vec<String> = file.lines().map(|l| normal(code_of(l, &example.lang))).collect();
    let mut from = 0;
    let mut first = true;
    for line in example.body.lines() {
        let code = normal(code_of(line, &example.lang));
        if code.is_empty() {
            continue;
        }
        let window = if first { file.len() } else { (from + PART_GAP).min(file.len()) };
        match (from..window).find(|&i| matches_line(&code, &file[i])) {
            Some(i) => from = i + 1,
            None => return Err(format!("{line:?} is not there (after line {from})")),
        }
        first = false;
    }
    Ok(())
}

/// Whether a sample of output (an example whose `…` stands for any text) is what a command
/// printed: its lines in order in `output`.
pub fn output_matches(sample: &str, output: &str) -> Result<(), String> {
    let sample = Example {
        page: PathBuf::new(),
        line: 0,
        lang: "text".into(),
        mark: String::new(),
        body: sample.into(),
    };
    part_of(&sample, output)
}

/// A command of a shell example: its environment, program and arguments, and whether it was
/// sent to the background (`&`).
#[derive(Debug, Clone, PartialEq)]
pub struct ShellCommand {
    pub env: Vec<(String, String)>,
    pub program: String,
    pub args: Vec<String>,
    pub background: bool,
}

/// The commands of a shell example: continuation lines joined, comments dropped, `&&` and `;`
/// split, words split as the shell splits them (no expansion: a test replaces `$variables`
/// first). `cd DIR` is a command like any other.
pub fn shell_commands(body: &str) -> Vec<ShellCommand> {
    let joined = body.replace("\\\n", "");
    let mut commands = Vec::new();
    for line in joined.lines() {
        let line = code_of(line, "sh").trim();
        for part in line.split("&&").flat_map(|p| p.split("; ")) {
            let part = part.trim();
            let (part, background) = match part.strip_suffix('&') {
                Some(p) => (p.trim(), true),
                None => (part, false),
            };
            if part.is_empty() {
                continue;
            }
            let words = shlex::split(part).unwrap_or_else(|| panic!("unbalanced quotes: {part}"));
            let mut env = Vec::new();
            let mut words = words.into_iter().peekable();
            while let Some((k, v)) = words.peek().and_then(|w| {
                w.split_once('=').filter(|(k, _)| {
                    !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                })
            }) {
                env.push((k.to_string(), v.to_string()));
                words.next();
            }
            let Some(program) = words.next() else { continue };
            commands.push(ShellCommand { env, program, args: words.collect(), background });
        }
    }
    commands
}

/// What a `curl` of an example asks: its method (`-X`, else GET), headers (`-H`), the port of
/// its `127.0.0.1` URL and its path and query.
#[derive(Debug, Clone, PartialEq)]
pub struct Curl {
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub port: u16,
    pub path: String,
}

/// The request of a `curl` command, or why it is none this reads.
pub fn curl(command: &ShellCommand) -> Result<Curl, String> {
    if command.program != "curl" {
        return Err(format!("not a curl: {command:?}"));
    }
    let (mut method, mut headers, mut url) = ("GET".to_string(), Vec::new(), None);
    let mut args = command.args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-X" => method = args.next().ok_or("-X without a method")?.clone(),
            "-H" => {
                let header = args.next().ok_or("-H without a header")?;
                let (name, value) = header.split_once(": ").ok_or("a header not `Name: value`")?;
                headers.push((name.to_string(), value.to_string()));
            }
            other if !other.starts_with('-') => url = Some(other.to_string()),
            other => return Err(format!("curl's {other} is not read here")),
        }
    }
    let url = url.ok_or("curl without a URL")?;
    let rest = url.strip_prefix("http://").unwrap_or(&url);
    let rest = rest.strip_prefix("127.0.0.1:").ok_or_else(|| format!("{url}: not on loopback"))?;
    let at = rest.find('/').ok_or_else(|| format!("{url}: no path"))?;
    let port = rest[..at].parse().map_err(|_| format!("{url}: no port"))?;
    Ok(Curl { method, headers, port, path: rest[at..].to_string() })
}

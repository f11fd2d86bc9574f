//! `scripts/release`: the release directory (every component of release.toml with its digest,
//! the templates' tarball, the spin.toml lines), the same bytes from a checkout in another
//! directory, and the refusals that keep a release to a commit and a version the CHANGELOG names.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// This checkout's target/ is copied by one test here (the release elsewhere) and built into by
/// another (the packaged crates): they take turns, or the copy finds cargo's temporary files
/// gone.
fn target_turn() -> MutexGuard<'static, ()> {
    static TARGET: Mutex<()> = Mutex::new(());
    TARGET.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(ROOT).join("target/tmp").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn version() -> String {
    let text = std::fs::read_to_string(Path::new(ROOT).join("release.toml")).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    table["version"].as_str().unwrap().to_string()
}

fn release(checkout: &Path, args: &[&str]) -> Output {
    Command::new(checkout.join("scripts/release"))
        .args(args)
        .current_dir(checkout)
        .env_remove("GITHUB_REPOSITORY")
        .output()
        .expect("scripts/release runs")
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A clone of this repository's commit with the working tree's tracked files over it, so what
/// is tested is what is here, uncommitted changes included.
fn checkout_elsewhere(dir: &Path, with_changes: bool) -> PathBuf {
    let copy = dir.join("traffic-cop");
    let cloned = Command::new("git").args(["clone", "-q", ROOT]).arg(&copy).status().unwrap();
    assert!(cloned.success(), "git clone");
    if with_changes {
        let listed = Command::new("git").args(["-C", ROOT, "ls-files", "-z"]).output().unwrap();
        for name in String::from_utf8(listed.stdout).unwrap().split('\0').filter(|n| !n.is_empty())
        {
            let from = Path::new(ROOT).join(name);
            if from.is_file() && !from.is_symlink() {
                std::fs::create_dir_all(copy.join(name).parent().unwrap()).unwrap();
                std::fs::copy(&from, copy.join(name)).unwrap();
            }
        }
    }
    copy
}

fn sums(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join("SHA256SUMS")).expect("SHA256SUMS");
    text.lines()
        .map(|line| {
            let (hex, name) = line.split_once("  ").expect("sha256sum's form");
            (name.to_string(), hex.to_string())
        })
        .collect()
}

/// The compiled crates.io dependencies of this checkout's release builds, copied into
/// `checkout`'s target/ with their times kept, so cargo finds them fresh there. Their bytes do
/// not depend on the checkout's path (their sources are the registry's, at one path); the
/// workspace's crates, whose do, are compiled afresh. Copying takes seconds where compiling
/// them took minutes of both cores.
fn seed_dependencies(checkout: &Path) {
    for profile in ["wasm32-wasip2/release", "release"] {
        let (from, to) =
            (Path::new(ROOT).join("target").join(profile), checkout.join("target").join(profile));
        std::fs::create_dir_all(&to).unwrap();
        for dir in ["deps", "build", ".fingerprint"] {
            if from.join(dir).is_dir() {
                let copied =
                    Command::new("cp").arg("-a").arg(from.join(dir)).arg(&to).status().unwrap();
                assert!(copied.success(), "cp -a {}", from.join(dir).display());
            }
        }
    }
}

/// Built here and built in another directory (its own target/, the workspace's crates compiled
/// afresh there: [`seed_dependencies`]), the release directory's files have the same sha256,
/// and each holds what release.toml names.
#[test]
fn the_release_is_the_same_bytes_built_in_another_directory() {
    let version = version();
    let dir = scratch("release-elsewhere");
    let elsewhere = checkout_elsewhere(&dir, true);
    {
        let _turn = target_turn();
        seed_dependencies(&elsewhere);
    }
    let there = release(&elsewhere, &[&version, "--out", dir.join("there").to_str().unwrap()]);
    assert!(there.status.success(), "{}", said(&there));
    let here = release(Path::new(ROOT), &[&version, "--out", dir.join("here").to_str().unwrap()]);
    assert!(here.status.success(), "{}", said(&here));
    let (here_sums, there_sums) = (sums(&dir.join("here")), sums(&dir.join("there")));
    assert_eq!(here_sums, there_sums, "the same commit built in two directories");

    let coordinates: toml::Table =
        toml::from_str(&std::fs::read_to_string(Path::new(ROOT).join("release.toml")).unwrap())
            .unwrap();
    let using = std::fs::read_to_string(dir.join("here/USING.md")).unwrap();
    let components = coordinates["component"].as_array().unwrap();
    assert!(components.len() >= 7, "{components:?}");
    for component in components {
        let file = component["file"].as_str().unwrap();
        let hex = &here_sums.iter().find(|(name, _)| name == file).expect(file).1;
        let bytes = std::fs::read(dir.join("here").join(file)).unwrap();
        assert!(bytes.starts_with(b"\0asm"), "{file}");
        let package = format!("package = \"traffic-cop:{}\"", component["name"].as_str().unwrap());
        assert!(using.contains(&package), "{package} in USING.md");
        assert!(using.contains(&format!("digest = \"sha256:{hex}\"")), "{file}'s digest");
    }
    let tarball = format!("traffic-cop-templates-{version}.tar.gz");
    assert!(here_sums.iter().any(|(name, _)| *name == tarball), "{here_sums:?}");
    let listed = Command::new("tar").arg("-tzf").arg(dir.join("here").join(&tarball)).output();
    let listed = String::from_utf8(listed.unwrap().stdout).unwrap();
    assert!(
        listed
            .lines()
            .any(|l| l == "templates/traffic-cop-cron-rust-wrapped/metadata/spin-template.toml"),
        "{listed}"
    );
    // The one-line forms, each carrying its module and the lease contract as the component
    // exports it.
    let contract = std::fs::read_to_string(Path::new(ROOT).join("wit/lease.wit")).unwrap();
    let wheel = format!("traffic_cop_guarded-{version}-py3-none-any.whl");
    let npm = format!("traffic-cop-guarded-{version}.tgz");
    for (package, module, wit) in [
        (&wheel, "traffic_cop_guarded/_guarded.py", "traffic_cop_guarded/wit/deps/lease/lease.wit"),
        (&npm, "package/guarded.js", "package/wit/deps/lease/lease.wit"),
    ] {
        assert!(here_sums.iter().any(|(name, _)| name == package), "{package}: {here_sums:?}");
        let file = dir.join("here").join(package);
        let read = |entry: &str| {
            let out = if package.ends_with(".whl") {
                let unzip = "import sys, zipfile; \
                    sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())";
                Command::new("python3").args(["-c", unzip]).arg(&file).arg(entry).output()
            } else {
                Command::new("tar").arg("-xzOf").arg(&file).arg(entry).output()
            };
            String::from_utf8(out.unwrap().stdout).unwrap()
        };
        assert!(read(module).contains("guarded"), "{package}: {module}");
        assert_eq!(read(wit), contract, "{package}: its lease.wit is not the contract");
        assert!(using.contains(package.as_str()), "{package} in USING.md");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A release to a registry beyond this machine refuses uncommitted changes and a version
/// without its CHANGELOG section, before it builds or sends anything; any release refuses a
/// version release.toml does not name.
#[test]
fn a_release_refuses_changes_an_unreleased_version_and_another_version() {
    let version = version();
    let dir = scratch("release-refusals");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let other = release(Path::new(ROOT), &["9.9.9", "--out", out]);
    assert!(!other.status.success());
    assert!(
        said(&other).contains(&format!("release.toml names version {version}, not 9.9.9")),
        "{}",
        said(&other)
    );

    let clean = checkout_elsewhere(&dir, false);
    let unreleased = release(&clean, &[&version, "--out", out, "--registry", "registry.invalid"]);
    assert!(!unreleased.status.success());
    assert!(
        said(&unreleased).contains(&format!("CHANGELOG.md has no released section for {version}")),
        "{}",
        said(&unreleased)
    );
    std::fs::write(clean.join("README.md"), "changed\n").unwrap();
    let dirty = release(&clean, &[&version, "--out", out, "--registry", "registry.invalid"]);
    assert!(!dirty.status.success());
    assert!(said(&dirty).contains("the tree has uncommitted changes"), "{}", said(&dirty));
    assert!(!Path::new(out).exists(), "a refused release wrote {out}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The templates name the release release.toml names: their `traffic-cop-version` default is
/// its version, and every package they take is one of its components in its namespace.
#[test]
fn the_templates_take_the_release_that_release_toml_names() {
    let coordinates: toml::Table =
        toml::from_str(&std::fs::read_to_string(Path::new(ROOT).join("release.toml")).unwrap())
            .unwrap();
    let namespace = coordinates["namespace"].as_str().unwrap();
    let names: Vec<&str> = coordinates["component"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let templates = Path::new(ROOT).join("templates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&templates).unwrap().flatten() {
        let metadata = entry.path().join("metadata/spin-template.toml");
        let Ok(text) = std::fs::read_to_string(&metadata) else { continue };
        let table: toml::Table = toml::from_str(&text).unwrap();
        let default = table["parameters"]["traffic-cop-version"]["default"].as_str();
        assert_eq!(default, coordinates["version"].as_str(), "{}", metadata.display());
        let manifest = std::fs::read_to_string(entry.path().join("content/spin.toml")).unwrap();
        let packages: Vec<&str> = manifest
            .split("package = \"")
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
            .collect();
        assert!(!packages.is_empty(), "{}: no package", entry.path().display());
        for package in packages {
            let (ns, name) = package.split_once(':').unwrap();
            assert!(ns == namespace && names.contains(&name), "{package} is not released");
        }
        checked += 1;
    }
    assert_eq!(checked, 3, "templates checked");
}

/// The crates a `#[guarded]` user depends on (traffic-cop-guarded, and through it
/// traffic-cop-guarded-macro and traffic-cop-app) package as crates.io takes them, at
/// release.toml's version, with both licenses and the WIT inside, and what was packaged builds
/// for `wasm32-wasip2`.
///
/// The build is `cargo package`'s verification done by hand: the packages unpacked into a
/// workspace of their own, each depending on the others' packages (as on crates.io, where they
/// are published together), with this workspace's lock and release profile and its target
/// directory. Cargo's own verification builds in a target directory and a profile of its own,
/// so every dependency and proc macro was compiled again: about 130 s of a core, where this
/// finds them compiled by scripts/build-components and compiles only the three crates.
#[test]
fn the_crates_a_user_depends_on_package_and_build_from_their_packages() {
    let version = version();
    let crates = ["traffic-cop-app", "traffic-cop-guarded-macro", "traffic-cop-guarded"];
    let mut command = Command::new(env!("CARGO"));
    command.current_dir(ROOT).args(["package", "--no-verify", "--allow-dirty"]);
    for name in crates {
        command.args(["-p", name]);
    }
    let packaged = command.output().unwrap();
    assert!(packaged.status.success(), "{}", said(&packaged));
    let dir = scratch("packaged-crates");
    for name in crates {
        let file = Path::new(ROOT).join(format!("target/package/{name}-{version}.crate"));
        let listed = Command::new("tar").arg("-tzf").arg(&file).output().unwrap();
        let listed = String::from_utf8(listed.stdout).unwrap();
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            assert!(listed.contains(&format!("{name}-{version}/{license}")), "{name}: {listed}");
        }
        if name == "traffic-cop-app" {
            let wit = format!("{name}-{version}/wit/deps/lease/lease.wit");
            assert!(listed.lines().any(|l| l == wit), "{name}: {listed}");
        }
        let unpacked = Command::new("tar").arg("-xzf").arg(&file).arg("-C").arg(&dir).status();
        assert!(unpacked.unwrap().success(), "tar -xzf {}", file.display());
    }
    let root: toml::Table =
        toml::from_str(&std::fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap())
            .unwrap();
    let profile = toml::to_string(&root["profile"]["release"]).unwrap();
    let members: Vec<String> = crates.iter().map(|name| format!("\"{name}-{version}\"")).collect();
    let patches: String =
        crates.iter().map(|name| format!("{name} = {{ path = \"{name}-{version}\" }}\n")).collect();
    let manifest = format!(
        "[workspace]\nmembers = [{}]\nresolver = \"2\"\n\n[patch.crates-io]\n{patches}\n\
         [profile.release]\n{profile}",
        members.join(", ")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(Path::new(ROOT).join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let turn = target_turn();
    let built = Command::new(env!("CARGO"))
        .current_dir(&dir)
        .args(["build", "--release", "--target", "wasm32-wasip2", "-p", "traffic-cop-guarded"])
        .arg("--target-dir")
        .arg(Path::new(ROOT).join("target"))
        // The components are built by plain rustc (scripts/build-components), not CI's linter.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .unwrap();
    drop(turn);
    // Built, not merely found: nothing but the patches names these crates (none is on
    // crates.io), so a patch that did not apply fails to resolve.
    assert!(built.status.success(), "the packaged crates do not build: {}", said(&built));
    let _ = std::fs::remove_dir_all(dir);
}

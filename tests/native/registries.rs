//! CI's installs wait out a registry that drops connections: `.ci/registries`, which `.ci/run`
//! sources before anything installs, gives npm more tries than its default two. Judged by npm
//! itself, against a registry on 127.0.0.1 behind the test bed's fault proxy, which drops the
//! first three connections: npm with its defaults gives up, npm with CI's settings installs.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use traffic_cop_testbed::faults::{Fault, FaultPlan, FaultProxy};

use crate::ecosystem::{on_path, run, scratch};

const PACKAGE: &str = "dropped-connections";

/// A registry holding one package, on 127.0.0.1. Ends with the test process: it only ever
/// answers this test's npm, through the proxies that drop connections in front of it.
fn registry(tarball: Vec<u8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = answer(stream, &tarball);
        }
    });
    port
}

/// One HTTP exchange: the package's document (its tarball at the address npm asked, the
/// proxy's) or its tarball, then the connection closes.
fn answer(stream: TcpStream, tarball: &[u8]) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut host = String::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("host") {
                host = value.trim().to_string();
            }
        }
    }
    let path = request_line.split(' ').nth(1).unwrap_or("");
    let tarball_path = format!("/{PACKAGE}/-/{PACKAGE}-1.0.0.tgz");
    let (status, kind, body) = if path == format!("/{PACKAGE}") {
        let document = format!(
            r#"{{"name":"{PACKAGE}","dist-tags":{{"latest":"1.0.0"}},"versions":{{"1.0.0":{{"name":"{PACKAGE}","version":"1.0.0","dist":{{"tarball":"http://{host}{tarball_path}"}}}}}}}}"#
        );
        ("200 OK", "application/json", document.into_bytes())
    } else if path == tarball_path {
        ("200 OK", "application/octet-stream", tarball.to_vec())
    } else {
        ("404 Not Found", "text/plain", b"not here".to_vec())
    };
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)
}

/// The package's tarball, as `npm pack` makes it (offline).
fn tarball(dir: &Path) -> Vec<u8> {
    let source = dir.join("source");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::write(
        source.join("package.json"),
        format!(r#"{{"name":"{PACKAGE}","version":"1.0.0"}}"#),
    )
    .unwrap();
    let packed = run(
        Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(dir)
            .current_dir(&source),
        Duration::from_secs(60),
    );
    assert!(packed.ok(), "npm pack: {}", packed.said());
    std::fs::read(dir.join(format!("{PACKAGE}-1.0.0.tgz"))).expect("npm pack wrote the tarball")
}

/// `npm install` of the package into a fresh project under `dir`, with an empty cache, through
/// bash (`setup` runs first): whether it installed, and what npm said.
fn install(dir: &Path, proxy: &FaultProxy, setup: &str) -> (bool, String) {
    let project: PathBuf = dir.join(format!("project-{}", proxy.port));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("package.json"), r#"{"name":"project","private":true}"#).unwrap();
    // CI's own settings, then the waits between tries shortened (npm waits 10 s, then a minute):
    // the number of tries is what is judged.
    let script = format!(
        "{setup}\nexport npm_config_fetch_retry_mintimeout=50 npm_config_fetch_retry_maxtimeout=200\n\
         exec npm install {PACKAGE} --registry \"$1\" --cache \"$2\" --prefix \"$3\" \
         --no-audit --no-fund --no-save --prefer-online"
    );
    let ran = run(
        Command::new("bash")
            .args(["-c", &script, "bash", &format!("http://127.0.0.1:{}/", proxy.port)])
            .arg(dir.join(format!("cache-{}", proxy.port)))
            .arg(&project)
            .current_dir(traffic_cop_testbed::repo_root())
            .env_remove("npm_config_fetch_retries")
            .env_remove("NPM_CONFIG_FETCH_RETRIES"),
        Duration::from_secs(120),
    );
    let installed = project.join("node_modules").join(PACKAGE).join("package.json").is_file();
    assert_eq!(ran.ok(), installed, "{}", ran.said());
    (installed, ran.said())
}

#[test]
fn ci_installs_from_npm_past_three_dropped_connections_where_npms_defaults_give_up() {
    if let Err(missing) = on_path("npm") {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI needs npm: {missing}");
        eprintln!("{missing}: not checked");
        return;
    }
    let dir = scratch("registries");

    let registry = registry(tarball(&dir));
    // Each proxy closes its first three connections unanswered (npm's "socket hang up", its
    // ECONNRESET), as a registry behind a flaky network does.
    let dropping = || FaultProxy::start(registry, FaultPlan::first(Fault::Reset, 3));

    let defaults = dropping();
    let (installed, said) = install(&dir, &defaults, "");
    assert!(!installed, "npm's defaults installed past three drops: too few dropped\n{said}");
    assert_eq!(defaults.requests(), 3, "npm tried three times\n{said}");

    let ci = dropping();
    let (installed, said) = install(&dir, &ci, "source .ci/registries");
    assert!(installed, "with .ci/registries npm still gave up after three drops\n{said}");
    assert_eq!(ci.injected().len(), 3, "{said}");
    assert!(ci.requests() > 3, "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

//! A throwaway certificate authority and a server certificate for 127.0.0.1, made once per test
//! process with the openssl CLI under target/tls/<pid>/ (ca.pem, cert.pem, key.pem). Azurite in
//! OAuth mode and the fake identity endpoint serve the leaf; only this process trusts the CA
//! (outbound.rs adds it to the component's wasi:http sender, [`client_config`] to native clients).
//! A CA plus a leaf, not one self-signed leaf: webpki refuses a CA certificate as an end entity,
//! and Spin's `ca_roots_file` wants a root.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

pub struct Tls {
    pub dir: PathBuf,
    /// The root to trust (PEM).
    pub ca_pem: PathBuf,
    /// The server certificate for IP 127.0.0.1 (PEM), issued by the CA.
    pub cert_pem: PathBuf,
    /// The server certificate's private key (PKCS#8 PEM).
    pub key_pem: PathBuf,
}

/// This process's certificates, made on first use.
pub fn shared() -> &'static Tls {
    static TLS: OnceLock<Tls> = OnceLock::new();
    TLS.get_or_init(|| {
        let base = crate::repo_root().join("target/tls");
        remove_dead(&base);
        make(&base.join(std::process::id().to_string()))
    })
}

/// Directories of test processes that no longer run: nothing removes them at exit (statics
/// have no Drop), so the next process does.
fn remove_dead(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.parse::<u32>().is_ok() && !Path::new("/proc").join(&name).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("/usr/bin/openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("/usr/bin/openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn make(dir: &Path) -> Tls {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("target/tls is writable");
    let subject = format!("/CN=traffic-cop throwaway test CA {}", std::process::id());
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    let ca_args = [&["req", "-x509"][..], &ec, &["-keyout", "ca.key", "-out", "ca.pem"]];
    let ca_exts = [
        "-days",
        "2",
        "-subj",
        &subject,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ];
    openssl(dir, &[&ca_args.concat()[..], &ca_exts].concat());
    let leaf_args = ["-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"];
    openssl(dir, &[&["req"][..], &ec, &leaf_args].concat());
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "cert.pem",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
        ],
    );
    Tls {
        dir: dir.to_path_buf(),
        ca_pem: dir.join("ca.pem"),
        cert_pem: dir.join("cert.pem"),
        key_pem: dir.join("key.pem"),
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client that trusts the public web roots (as wasmtime's default sender does) plus this
/// process's throwaway CA.
pub fn client_config() -> Arc<ClientConfig> {
    static CONFIG: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
            let ca = CertificateDer::from_pem_file(&shared().ca_pem).expect("ca.pem parses");
            roots.add(ca).expect("the throwaway CA is a usable root");
            let config = ClientConfig::builder_with_provider(provider())
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// The server side: the 127.0.0.1 leaf and its key.
pub fn server_config() -> Arc<ServerConfig> {
    static CONFIG: OnceLock<Arc<ServerConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let tls = shared();
            let cert = CertificateDer::from_pem_file(&tls.cert_pem).expect("cert.pem parses");
            let ca = CertificateDer::from_pem_file(&tls.ca_pem).expect("ca.pem parses");
            let key = PrivateKeyDer::from_pem_file(&tls.key_pem).expect("key.pem parses");
            let config = ServerConfig::builder_with_provider(provider())
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![cert, ca], key)
                .expect("the leaf and its key match");
            Arc::new(config)
        })
        .clone()
}

/// A native answer: status, headers (names lower-cased) and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request over TLS to 127.0.0.1:`port`, trusting the throwaway CA: the native
/// probe the infrastructure tests use before any component is involved. `Connection: close`
/// lets the body run to end of stream.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Answer> {
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(20)))?;
    let name = ServerName::from(std::net::Ipv4Addr::LOCALHOST);
    let conn =
        rustls::ClientConnection::new(client_config(), name).map_err(std::io::Error::other)?;
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()?;
    let mut raw = Vec::new();
    // Servers may close without close_notify; what arrived before that is the answer.
    if let Err(e) = stream.read_to_end(&mut raw) {
        if raw.is_empty() || e.kind() != std::io::ErrorKind::UnexpectedEof {
            return Err(e);
        }
    }
    parse_answer(&raw)
}

fn parse_answer(raw: &[u8]) -> std::io::Result<Answer> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) =
        text.split_once("\r\n\r\n").ok_or_else(|| std::io::Error::other("no head"))?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_string() };
    Ok(Answer { status, headers, body })
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

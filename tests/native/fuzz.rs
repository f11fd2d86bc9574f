//! Fuzzing on stable Rust: a seeded generator builds hostile inputs from fragments of the real
//! formats plus random bytes, and every parser must answer without panicking. The default run
//! is bounded (a few seconds); `FUZZ_ITERATIONS=1000000 cargo test --release --test fuzz` runs
//! longer, and `FUZZ_SEED` replays a run.

use traffic_cop::guard::{Outcome, RunRecord};
use traffic_cop::ops::{
    service_error, Acquire, Break, BreakPeriod, Change, CreateBlob, CreateContainer, Inspect,
    LeaseDuration, LeaseId, ListBlobs, Op, Release, Renew, SetMetadata,
};
use traffic_cop::{Account, Lock, StdRuntime};

/// Reads a response; true when it read as success.
type Parser<'a> = dyn Fn(&http::Response<Vec<u8>>) -> bool + 'a;

struct Gen(u64);

impl Gen {
    fn from_env() -> (Gen, u64, usize) {
        let seed =
            std::env::var("FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_CAFE);
        let iterations =
            std::env::var("FUZZ_ITERATIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
        (Gen(seed | 1), seed, iterations)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Fragments of the format, interleaved with noise: random bytes (lossily made UTF-8),
    /// unicode, control characters, and long runs.
    fn text(&mut self, fragments: &[&str], max_parts: usize) -> String {
        let mut out = String::new();
        for _ in 0..self.below(max_parts + 1) {
            match self.below(10) {
                0 => {
                    let bytes: Vec<u8> = (0..self.below(12)).map(|_| self.next() as u8).collect();
                    out.push_str(&String::from_utf8_lossy(&bytes));
                }
                1 => out.push_str(
                    [
                        "ü",
                        "ロック",
                        "\u{0}",
                        "\n",
                        "\r\n",
                        "\u{7f}",
                        "%",
                        "%zz",
                        "%4",
                        "&amp;",
                        "&",
                    ][self.below(11)],
                ),
                2 => out.push_str(&"x".repeat(self.below(3000))),
                _ => out.push_str(fragments[self.below(fragments.len())]),
            }
        }
        out
    }
}

const CONNECTION: &[&str] = &[
    ";",
    "=",
    " ",
    "AccountName=",
    "accountname=",
    "AccountKey=",
    "BlobEndpoint=",
    "SharedAccessSignature=",
    "DefaultEndpointsProtocol=",
    "EndpointSuffix=",
    "UseDevelopmentStorage=true",
    "DevelopmentStorageProxyUri=",
    "http://",
    "https://",
    "ftp://",
    "127.0.0.1:10000",
    "/devstoreaccount1",
    "devstoreaccount1",
    "acct1",
    "core.windows.net",
    "?sv=2025-11-05&sig=abc%2B=",
    "c2VjcmV0",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    "@",
    "#",
    "[::1]",
    ":99999",
    "//",
];

const XML: &[&str] = &[
    "<?xml version=\"1.0\"?>",
    "<Error>",
    "</Error>",
    "<Code>",
    "</Code>",
    "<Message>",
    "</Message>",
    "LeaseAlreadyPresent",
    "<EnumerationResults>",
    "<EnumerationResults ServiceEndpoint=\"x\">",
    "</EnumerationResults>",
    "<Blobs>",
    "</Blobs>",
    "<Blob>",
    "</Blob>",
    "<Name>",
    "</Name>",
    "<Name Encoded=\"true\">",
    "<Properties>",
    "</Properties>",
    "<Etag>",
    "</Etag>",
    "0x8D",
    "<LeaseState>",
    "</LeaseState>",
    "leased",
    "<Metadata>",
    "</Metadata>",
    "<tc_fence>",
    "</tc_fence>",
    "<tc_start />",
    "<a>",
    "</a>",
    "<",
    ">",
    "/>",
    "<NextMarker />",
    "<NextMarker>",
    "</NextMarker>",
    "&lt;",
    "&#x41;",
];

const HEADERS: &[(&str, &[&str])] = &[
    (
        "x-ms-lease-id",
        &[
            "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e",
            "",
            "garbage",
            "8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e ",
        ],
    ),
    ("x-ms-lease-time", &["0", "15", "-1", "99999999999999999999", "soon", ""]),
    ("x-ms-lease-state", &["available", "leased", "expired", "breaking", "broken", "LEASED", ""]),
    ("x-ms-lease-status", &["locked", "unlocked", "?"]),
    ("x-ms-lease-duration", &["fixed", "infinite", ""]),
    (
        "x-ms-error-code",
        &["LeaseAlreadyPresent", "LeaseLost", "BlobNotFound", "", "AuthenticationFailed"],
    ),
    ("date", &["Wed, 01 Jan 2025 00:00:00 GMT", "yesterday", "Wed, 01 Jan 2025 00:00:00", ""]),
    ("etag", &["\"0x1\"", "", "\""]),
    ("x-ms-meta-tc_fence", &["1", "-3", "18446744073709551616", ""]),
    ("x-ms-meta-tc_holder", &["%E3%83%AD", "%", "%zz"]),
];

fn response(g: &mut Gen) -> http::Response<Vec<u8>> {
    let statuses = [200, 201, 202, 304, 400, 403, 404, 408, 409, 412, 429, 500, 503, 599, 100];
    let mut builder = http::Response::builder().status(statuses[g.below(statuses.len())]);
    for _ in 0..g.below(8) {
        let (name, values) = HEADERS[g.below(HEADERS.len())];
        builder = builder.header(name, values[g.below(values.len())]);
    }
    let body = if g.below(3) == 0 {
        g.text(XML, 12).into_bytes()
    } else {
        (0..g.below(64)).map(|_| g.next() as u8).collect()
    };
    builder.body(body).unwrap()
}

#[test]
fn connection_strings_and_names_never_panic() {
    let (mut g, seed, iterations) = Gen::from_env();
    let mut accepted = 0;
    for _ in 0..iterations {
        let text = g.text(CONNECTION, 10);
        if let Ok(account) = Account::from_connection_string(&text) {
            accepted += 1;
            // Whatever parsed must also build requests for any valid lock without panicking.
            let container = g.text(&["abc", "-", "a", "locks", "A"], 4);
            let blob = g.text(&["a", "/", "..", ".", "jobs/nightly", "%2F"], 6);
            if let Ok(lock) = Lock::new(account, &container, &blob) {
                let _ = Inspect.request(&lock);
                let _ =
                    ListBlobs { marker: Some(g.text(XML, 3)), max_results: None }.request(&lock);
            }
        }
    }
    println!("fuzz connection strings: {iterations} inputs (seed {seed}), {accepted} accepted");
}

#[test]
fn response_parsers_never_panic() {
    let (mut g, seed, iterations) = Gen::from_env();
    let id = LeaseId::parse("8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e").unwrap();
    let ops: Vec<Box<Parser<'_>>> = vec![
        Box::new(|r| {
            Acquire::new(LeaseDuration::Fixed(15), id.clone()).unwrap().interpret(r).is_ok()
        }),
        Box::new(|r| Renew { lease_id: id.clone() }.interpret(r).is_ok()),
        Box::new(|r| Change { lease_id: id.clone(), proposed_id: id.clone() }.interpret(r).is_ok()),
        Box::new(|r| Release { lease_id: id.clone() }.interpret_after_ambiguous(r).is_ok()),
        Box::new(|r| Break { period: BreakPeriod(None) }.interpret(r).is_ok()),
        Box::new(|r| Inspect.interpret(r).is_ok()),
        Box::new(|r| ListBlobs::default().interpret(r).is_ok()),
        Box::new(|r| CreateBlob.interpret(r).is_ok()),
        Box::new(|r| CreateContainer.interpret(r).is_ok()),
        Box::new(|r| SetMetadata::new(vec![], None, None).unwrap().interpret(r).is_ok()),
    ];
    let mut ok = 0;
    for i in 0..iterations {
        let response = response(&mut g);
        let _ = service_error(&response);
        ok += usize::from(ops[i % ops.len()](&response));
    }
    println!("fuzz responses: {iterations} responses (seed {seed}) through {} parsers, {ok} read as success", ops.len());
}

#[test]
fn run_record_metadata_never_panics_and_round_trips() {
    let (mut g, seed, iterations) = Gen::from_env();
    let keys = [
        "tc_fence",
        "TC_FENCE",
        "tc_start",
        "tc_stop",
        "tc_running",
        "tc_outcome",
        "tc_holder",
        "other",
    ];
    let values = [
        "1",
        "0",
        "-1",
        "true",
        "false",
        "18446744073709551615",
        "18446744073709551616",
        "%",
        "%41",
        "%E3%83",
        "",
    ];
    for _ in 0..iterations {
        let pairs: Vec<(String, String)> = (0..g.below(8))
            .map(|_| {
                let value = if g.below(2) == 0 {
                    values[g.below(values.len())].to_string()
                } else {
                    g.text(&values, 3)
                };
                (keys[g.below(keys.len())].to_string(), value)
            })
            .collect();
        let record = RunRecord::from_metadata(&pairs);
        // Whatever was read, writing it and reading it back gives the same record.
        assert_eq!(RunRecord::from_metadata(&record.to_metadata()), record, "{pairs:?}");
        let holder = g.text(&["replica-1", " ", "%"], 4);
        let reason = g.text(&["failure: ", "disk full", "%20", ""], 4);
        let outcome = if reason.is_empty() { Outcome::Success } else { Outcome::Failure(reason) };
        let written = record
            .granted(g.next(), g.next(), &holder, &LeaseId::random(&StdRuntime))
            .completed(g.next(), &outcome);
        assert_eq!(RunRecord::from_metadata(&written.to_metadata()), written);
        assert!(
            SetMetadata::new(written.to_metadata(), None, None).is_ok(),
            "records are always writable"
        );
    }
    println!("fuzz run records: {iterations} metadata sets (seed {seed})");
}

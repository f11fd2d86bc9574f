//! SharedKey pinned by golden vectors computed by an independent implementation (the Azure SDK
//! for Python) and accepted by Azurite 3.35.0; see tests/vectors/README.md.

use std::time::{Duration, SystemTime};
use traffic_cop::config::{Account, Lock, EMULATOR_KEY};
use traffic_cop::ops::{
    prepare, Acquire, Break, BreakPeriod, CreateBlob, CreateContainer, Inspect, LeaseDuration,
    LeaseId, ListBlobs, Op, PutBlob, WriteCondition,
};
use traffic_cop::signing::{authorize, signature, string_to_sign};

#[derive(serde::Deserialize)]
struct Vector {
    name: String,
    method: String,
    /// The whole URL, for vectors not sent to the emulator's path-style endpoint.
    #[serde(default)]
    url: Option<String>,
    path_and_query: String,
    headers: std::collections::BTreeMap<String, String>,
    string_to_sign: String,
    signature: String,
}

fn vectors() -> Vec<Vector> {
    let text = include_str!("../vectors/shared_key.json");
    serde_json::from_str(text).expect("vector file parses")
}

fn vector(name: &str) -> Vector {
    vectors().into_iter().find(|v| v.name == name).expect("vector exists")
}

fn emulator() -> Account {
    Account::from_connection_string(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;\
         AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;\
         BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
    )
    .unwrap()
}

/// The same account and key addressed as Azure does: `https://<account>.blob.core.windows.net`,
/// no account in the path, so the canonical resource names it once.
fn host_style() -> Account {
    Account::from_connection_string(&format!(
        "DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey={EMULATOR_KEY}"
    ))
    .unwrap()
}

/// Wed, 01 Jan 2025 00:00:00 GMT, the vectors' date.
fn vector_date() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_735_689_600)
}

#[test]
fn every_vector_signs_to_the_published_string_and_signature() {
    let key = base64_decode(EMULATOR_KEY);
    let all = vectors();
    assert_eq!(all.len(), 12);
    for v in all {
        let url =
            v.url.clone().unwrap_or_else(|| format!("http://127.0.0.1:10000{}", v.path_and_query));
        let mut builder = http::Request::builder().method(v.method.as_str()).uri(url);
        for (name, value) in &v.headers {
            builder = builder.header(name, value);
        }
        let request = builder.body(Vec::new()).unwrap();
        let text = string_to_sign(&request, "devstoreaccount1");
        assert_eq!(text, v.string_to_sign, "string-to-sign of {}", v.name);
        assert_eq!(signature(&key, &text), v.signature, "signature of {}", v.name);

        let mut signed = request.clone();
        authorize(&mut signed, &emulator());
        let expected = format!("SharedKey devstoreaccount1:{}", v.signature);
        assert_eq!(signed.headers()["authorization"], expected.as_str(), "{}", v.name);
    }
}

/// Our own request builders, stamped at the vectors' date, must produce the same bytes to sign
/// as the independent implementation did for the same call.
fn assert_op_matches(op: &dyn OpAny, vector_name: &str) {
    assert_op_on_lock_matches(op, vector_name, &Lock::new(emulator(), "vectors", "lock").unwrap());
}

fn assert_op_on_lock_matches(op: &dyn OpAny, vector_name: &str, lock: &Lock) {
    let v = vector(vector_name);
    let (request, _) = prepare(op.request(lock), lock, vector_date());
    assert_eq!(request.method().as_str(), v.method, "{vector_name}");
    assert_eq!(request.uri().path_and_query().unwrap().as_str(), v.path_and_query, "{vector_name}");
    if let Some(url) = &v.url {
        assert_eq!(request.uri().to_string(), *url, "{vector_name}");
    }
    assert_eq!(string_to_sign(&request, "devstoreaccount1"), v.string_to_sign, "{vector_name}");
    let expected = format!("SharedKey devstoreaccount1:{}", v.signature);
    assert_eq!(request.headers()["authorization"], expected.as_str(), "{vector_name}");
}

trait OpAny {
    fn request(&self, lock: &Lock) -> traffic_cop::transport::Request;
}
impl<O: Op> OpAny for O {
    fn request(&self, lock: &Lock) -> traffic_cop::transport::Request {
        Op::request(self, lock)
    }
}

#[test]
fn our_requests_match_the_vectors() {
    let id = LeaseId::parse("8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e").unwrap();
    let acquire = Acquire::new(LeaseDuration::Fixed(15), id).unwrap();
    assert_op_matches(&acquire, "acquire lease 15s with proposed id");
    assert_op_matches(&Break::new(BreakPeriod(Some(0))).unwrap(), "break lease period 0");
    assert_op_matches(&Inspect, "get blob properties");
    assert_op_matches(&CreateBlob, "put zero-length block blob if-none-match *");
    assert_op_matches(&CreateContainer, "create container");
}

/// The four edges the first seven did not reach: a conditional header, a query with an opaque
/// marker that needs escaping, a host-style URL, and a blob name that needs escaping.
#[test]
fn our_requests_match_the_edge_vectors() {
    let id = LeaseId::parse("8b8a5d3e-2f4b-4c2a-9d0e-1f2a3b4c5d6e").unwrap();
    let acquire = Acquire::new(LeaseDuration::Fixed(15), id)
        .unwrap()
        .if_match(Some("\"0x8DD2A6F1C2B3A40\"".into()));
    assert_op_matches(&acquire, "acquire lease 15s if-match etag");

    let list = ListBlobs {
        marker: Some("2!72!am9icy9uaWdodGx5+IS8vISE=/MDA5".into()),
        max_results: Some(200),
    };
    assert_op_matches(&list, "list blobs with marker and maxresults");

    let host_lock = Lock::new(host_style(), "vectors", "lock").unwrap();
    assert_op_on_lock_matches(&Inspect, "host-style get blob properties", &host_lock);

    let name = "jobs/nächtlich run ☃ 100%";
    let encoded_lock = Lock::new(emulator(), "vectors", name).unwrap();
    assert_op_on_lock_matches(
        &CreateBlob,
        "put block blob with a percent-encoded name if-none-match *",
        &encoded_lock,
    );
}

/// A request with a body: its length and type are signed (a fenced write's Put Blob).
#[test]
fn a_put_blob_with_a_body_matches_its_vector() {
    let put = PutBlob {
        contents: b"fenced result",
        metadata: vec![("tc_fencing_token".into(), "42".into())],
        condition: WriteCondition::IfAbsent,
    };
    let lock = Lock::new(emulator(), "vectors", "results/daily.json").unwrap();
    assert_op_on_lock_matches(
        &put,
        "put block blob with a body and metadata if-none-match *",
        &lock,
    );
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).unwrap()
}

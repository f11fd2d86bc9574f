use super::*;
use crate::config::{Account, Lock};

fn listing(blobs: &str, tail: &str) -> Response {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults \
         ServiceEndpoint=\"https://acct.blob.core.windows.net/\" ContainerName=\"locks\">\
         <MaxResults>200</MaxResults><Blobs>{blobs}</Blobs>{tail}</EnumerationResults>"
    );
    http::Response::builder().status(200).body(body.into_bytes()).unwrap()
}

fn blob(name_element: &str, metadata: &str) -> String {
    format!(
        "<Blob>{name_element}<Properties><Etag>0x8DD1</Etag><LeaseStatus>locked</LeaseStatus>\
         <LeaseState>leased</LeaseState></Properties><Metadata>{metadata}</Metadata></Blob>"
    )
}

fn read(response: &Response) -> Result<BlobPage, Error> {
    ListBlobs::default().interpret(response)
}

#[test]
fn metadata_keys_named_like_the_schema_are_only_metadata() {
    let evil =
        "<NextMarker>evil</NextMarker><Blob>inner</Blob><Name>x</Name><tc_fence>4</tc_fence>";
    let body = format!("{}{}", blob("<Name>a</Name>", evil), blob("<Name>b</Name>", ""));
    let page = read(&listing(&body, "<NextMarker />")).unwrap();
    assert_eq!(page.next_marker, None, "the metadata key is not the marker");
    let names: Vec<&str> = page.blobs.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let metadata: Vec<(&str, &str)> =
        page.blobs[0].metadata.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        metadata,
        [("Blob", "inner"), ("Name", "x"), ("NextMarker", "evil"), ("tc_fence", "4")]
    );
    assert_eq!(page.blobs[0].etag.as_deref(), Some("\"0x8DD1\""));
    assert_eq!(page.blobs[0].state, LeaseState::Leased);
}

#[test]
fn blobs_named_like_the_schema_are_only_names() {
    let body = format!(
        "{}{}{}",
        blob("<Name>Blob</Name>", ""),
        blob("<Name>NextMarker</Name>", ""),
        blob("<Name>&lt;NextMarker&gt;m&lt;/NextMarker&gt;</Name>", "")
    );
    let page = read(&listing(&body, "<NextMarker>real</NextMarker>")).unwrap();
    let names: Vec<&str> = page.blobs.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["Blob", "NextMarker", "<NextMarker>m</NextMarker>"]);
    assert_eq!(page.next_marker.as_deref(), Some("real"));
}

#[test]
fn encoded_names_and_numeric_references_are_decoded() {
    let body = format!(
        "{}{}{}",
        blob("<Name Encoded=\"true\">jobs/a%01b%20c%25</Name>", ""),
        blob("<Name>caf&#233; &#x2603; &amp;#65;</Name>", "<tc_holder>&#x72;eplica</tc_holder>"),
        blob("<Name Encoded=\"false\">100%25</Name>", "")
    );
    let page = read(&listing(&body, "")).unwrap();
    let names: Vec<&str> = page.blobs.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["jobs/a\u{1}b c%", "café ☃ &#65;", "100%25"]);
    assert_eq!(page.blobs[1].metadata, [("tc_holder".to_string(), "replica".to_string())]);
}

#[test]
fn only_the_top_level_next_marker_pages() {
    let nested = "<Blob><Name>a</Name><NextMarker>nested</NextMarker></Blob>";
    let page = read(&listing(nested, "<NextMarker> 2!8!YQ== </NextMarker>")).unwrap();
    assert_eq!(page.next_marker.as_deref(), Some("2!8!YQ=="));
    assert_eq!(page.blobs.len(), 1);
}

#[test]
fn a_cut_or_foreign_body_is_an_error_not_a_shorter_page() {
    let full = listing(&blob("<Name>a</Name>", "<tc_fence>1</tc_fence>").repeat(3), "");
    let cut = full.body()[..full.body().len() - 40].to_vec();
    let truncated = http::Response::builder().status(200).body(cut).unwrap();
    for response in [
        truncated,
        http::Response::builder()
            .status(200)
            .body(b"<Error><Code>x</Code></Error>".to_vec())
            .unwrap(),
        http::Response::builder().status(200).body(b"<html>proxy</html>".to_vec()).unwrap(),
        http::Response::builder().status(200).body(vec![0xff, 0xfe]).unwrap(),
    ] {
        match read(&response) {
            Err(Error::UnexpectedAnswer(m)) => assert!(m.contains("(HTTP 200, "), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn pages_are_bounded_and_the_marker_is_escaped_like_the_sdks() {
    let account = Account::from_connection_string(
        "AccountName=acct;AccountKey=c2VjcmV0;DefaultEndpointsProtocol=https",
    )
    .unwrap();
    let lock = Lock::new(account, "locks", "-").unwrap();
    let first = ListBlobs::default().request(&lock);
    assert_eq!(
        first.uri().to_string(),
        "https://acct.blob.core.windows.net/locks?restype=container&comp=list&maxresults=200&include=metadata"
    );
    let next =
        ListBlobs { marker: Some("2!96!a+b/c= d~".into()), max_results: None }.request(&lock);
    assert_eq!(
        next.uri().query(),
        Some("restype=container&comp=list&marker=2%2196%21a%2Bb%2Fc%3D%20d~&maxresults=200&include=metadata")
    );
}

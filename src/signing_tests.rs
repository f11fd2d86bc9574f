use super::*;

fn request(uri: &str) -> Request {
    http::Request::builder().method("GET").uri(uri).body(Vec::new()).unwrap()
}

#[test]
fn canonical_resource_sorts_lowercases_decodes_and_groups_query_parameters() {
    let r = request("https://a.blob.core.windows.net/c/b%20x?Timeout=20&comp=list&include=metadata&include=deleted&prefix=a%2Fb");
    assert_eq!(
        canonical_resource(&r, "a"),
        "/a/c/b%20x\ncomp:list\ninclude:deleted,metadata\nprefix:a/b\ntimeout:20"
    );
}

#[test]
fn canonical_headers_take_only_x_ms_headers_sorted_with_folded_whitespace() {
    let r = http::Request::builder()
        .uri("http://h/x")
        .header("x-ms-version", "2025-11-05")
        .header("X-MS-Meta-Owner", "  node   one ")
        .header("content-type", "text/plain")
        .body(Vec::new())
        .unwrap();
    assert_eq!(canonical_headers(&r), "x-ms-meta-owner:node one\nx-ms-version:2025-11-05\n");
}

#[test]
fn nonzero_content_length_and_date_without_x_ms_date_are_signed() {
    let r = http::Request::builder()
        .method("PUT")
        .uri("http://h/a/c")
        .header("content-length", "12")
        .header("date", "Wed, 01 Jan 2025 00:00:00 GMT")
        .body(Vec::new())
        .unwrap();
    assert_eq!(
        string_to_sign(&r, "a"),
        "PUT\n\n\n12\n\n\nWed, 01 Jan 2025 00:00:00 GMT\n\n\n\n\n\n/a/a/c"
    );
}

#[test]
fn sas_is_appended_to_the_query_and_no_authorization_is_added() {
    let account = crate::config::Account::from_connection_string(
        "BlobEndpoint=https://acct1.blob.core.windows.net;SharedAccessSignature=sv=1&sig=abc",
    )
    .unwrap();
    let mut r = request("https://acct1.blob.core.windows.net/c/b?comp=lease");
    assert_eq!(authorize(&mut r, &account), None);
    assert_eq!(
        r.uri().to_string(),
        "https://acct1.blob.core.windows.net/c/b?comp=lease&sv=1&sig=abc"
    );
    assert!(r.headers().get("authorization").is_none());
    let mut bare = request("https://acct1.blob.core.windows.net/c/b");
    authorize(&mut bare, &account);
    assert_eq!(bare.uri().query(), Some("sv=1&sig=abc"));
}

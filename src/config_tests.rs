use super::*;

const KEY: &str = "c2VjcmV0LWtleS1ieXRlcy1mb3ItdGVzdHMtb25seQ==";

fn parse(text: &str) -> Result<Account, Error> {
    Account::from_connection_string(text)
}

fn reason(result: Result<Account, Error>) -> String {
    match result {
        Err(Error::InvalidConfig(reason)) => reason,
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn development_storage_points_at_azurite_defaults() {
    let account = parse("UseDevelopmentStorage=true").unwrap();
    assert_eq!(account.name, "devstoreaccount1");
    assert_eq!((account.scheme.as_str(), account.authority.as_str()), ("http", "127.0.0.1:10000"));
    assert_eq!(account.base_path, "/devstoreaccount1");
    assert!(matches!(account.credential, Credential::SharedKey(ref k) if k.len() == 64));
    assert!(reason(parse("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://x"))
        .contains("Proxy"));
}

#[test]
fn account_name_and_key_default_to_https_core_windows_net() {
    let account = parse(&format!("AccountName=myacct;AccountKey={KEY}")).unwrap();
    assert_eq!(
        (account.scheme.as_str(), account.authority.as_str()),
        ("https", "myacct.blob.core.windows.net")
    );
    assert_eq!(account.base_path, "");
    let sovereign = parse(&format!(
        "DefaultEndpointsProtocol=http;AccountName=myacct;AccountKey={KEY};EndpointSuffix=core.chinacloudapi.cn;"
    ))
    .unwrap();
    assert_eq!(
        (sovereign.scheme.as_str(), sovereign.authority.as_str()),
        ("http", "myacct.blob.core.chinacloudapi.cn")
    );
}

#[test]
fn explicit_blob_endpoint_wins_and_keeps_its_path() {
    let text = format!(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};\
         BlobEndpoint=http://127.0.0.1:41234/devstoreaccount1/;QueueEndpoint=http://127.0.0.1:1/x;"
    );
    let account = parse(&text).unwrap();
    assert_eq!(account.authority, "127.0.0.1:41234");
    assert_eq!(account.base_path, "/devstoreaccount1");
}

#[test]
fn sas_connection_strings_keep_the_token_and_guess_the_name() {
    let account = parse("BlobEndpoint=https://acct1.blob.core.windows.net;SharedAccessSignature=?sv=2025-11-05&sig=abc%2Bdef=").unwrap();
    assert_eq!(account.credential, Credential::Sas("sv=2025-11-05&sig=abc%2Bdef=".into()));
    assert_eq!(account.name, "acct1");
    let emulator = parse(
        "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;SharedAccessSignature=sv=1&sig=x",
    )
    .unwrap();
    assert_eq!(emulator.name, "devstoreaccount1");
}

#[test]
fn keys_are_case_insensitive_and_whitespace_tolerated() {
    let account = parse(&format!(" accountname = myacct ; ACCOUNTKEY = {KEY} ;")).unwrap();
    assert_eq!(account.name, "myacct");
}

#[test]
fn malformed_strings_are_rejected_with_a_reason_and_without_the_key() {
    let cases = [
        ("", "empty"),
        (";;", "empty"),
        ("AccountName", "without '='"),
        ("AccountName=", "empty key or value"),
        ("AccountKey=abc", "AccountName or BlobEndpoint"),
        ("AccountName=myacct", "AccountKey or SharedAccessSignature"),
        ("AccountName=myacct;AccountKey=not*base64!", "not valid base64"),
        ("AccountName=My_Acct;AccountKey=c2VjcmV0", "AccountName must be"),
        ("BlobEndpoint=ftp://x/y;AccountName=abc;AccountKey=c2VjcmV0", "http:// or https://"),
        ("BlobEndpoint=not a url;AccountName=abc;AccountKey=c2VjcmV0", "not a URL"),
        ("BlobEndpoint=http://u:p@host/;AccountName=abc;AccountKey=c2VjcmV0", "user info"),
        ("BlobEndpoint=http://h/?sv=1;AccountName=abc;AccountKey=c2VjcmV0", "query"),
        ("BlobEndpoint=http://h/;SharedAccessSignature=a b", "malformed"),
    ];
    for (text, expected) in cases {
        let reason = reason(parse(text));
        assert!(reason.contains(expected), "{text:?} gave {reason:?}, wanted {expected:?}");
        assert!(!reason.contains("not*base64"), "the key leaked into {reason:?}");
    }
}

#[test]
fn debug_output_never_shows_the_key_or_sas() {
    let keyed = parse(&format!("AccountName=myacct;AccountKey={KEY}")).unwrap();
    let sas = parse(
        "BlobEndpoint=https://a1b.blob.core.windows.net;SharedAccessSignature=sv=1&sig=SENTINELSIG",
    )
    .unwrap();
    let text = format!("{keyed:?} {sas:?} {:?}", Lock::new(keyed.clone(), "abc", "x").unwrap());
    assert!(!text.contains(KEY) && !text.contains("SENTINELSIG"), "{text}");
    assert!(text.contains("<redacted>"));
}

#[test]
fn container_names_follow_azure_rules() {
    for ok in ["abc", "a-b-c", "0leases", &"a".repeat(63)] {
        assert!(validate_container(ok).is_ok(), "{ok}");
    }
    for bad in [
        "ab",
        "-abc",
        "abc-",
        "a--b",
        "ABC",
        "a_b",
        "a/b",
        "../x",
        &"a".repeat(64),
        "lock\u{0}s",
        "läse",
    ] {
        assert!(matches!(validate_container(bad), Err(Error::InvalidArgument(_))), "{bad:?}");
    }
}

#[test]
fn blob_names_reject_traversal_and_control_characters() {
    for ok in ["lock", "jobs/nightly", "ünïcode-ロック", "a.b", &"x".repeat(1024)] {
        assert!(validate_blob(ok).is_ok(), "{ok}");
    }
    for bad in [
        "",
        "../etc",
        "a/../b",
        "a/./b",
        "a//b",
        "/lead",
        "trail/",
        "a\nb",
        "a\u{7f}",
        "a\\b",
        &"x".repeat(1025),
    ] {
        assert!(matches!(validate_blob(bad), Err(Error::InvalidArgument(_))), "{bad:?}");
    }
}

#[test]
fn blob_paths_are_percent_encoded_per_segment() {
    let account = parse("UseDevelopmentStorage=true").unwrap();
    let lock = Lock::new(account, "locks", "jobs/nächtlich run?#").unwrap();
    assert_eq!(lock.blob_path(), "/devstoreaccount1/locks/jobs/n%C3%A4chtlich%20run%3F%23");
    assert_eq!(lock.container_path(), "/devstoreaccount1/locks");
}

/// An instance reads the same connection string on every call: it is parsed once, and a
/// different one (or the first again after it) is parsed anew, each giving its own account.
#[test]
fn a_connection_string_read_again_is_not_parsed_again() {
    let key = "AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net";
    let sas = "BlobEndpoint=https://other.blob.core.windows.net;SharedAccessSignature=sv=1&sig=x";
    let before = super::PARSES.get();
    let first = Account::from_connection_string(key).unwrap();
    assert_eq!(Account::from_connection_string(key).unwrap(), first);
    assert_eq!(super::PARSES.get() - before, 1);
    let other = Account::from_connection_string(sas).unwrap();
    assert_eq!(other.authority, "other.blob.core.windows.net");
    assert_eq!(Account::from_connection_string(key).unwrap(), first);
    assert_eq!(super::PARSES.get() - before, 3);
    // A refused one is refused every time.
    assert!(Account::from_connection_string("AccountName=acct").is_err());
    assert!(Account::from_connection_string("AccountName=acct").is_err());
}

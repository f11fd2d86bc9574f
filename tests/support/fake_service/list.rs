//! The fake's List Blobs: pages of at most `maxresults` blobs in name order, continued with an
//! opaque `NextMarker`, in the document shape Azure and Azurite 3.35 send (checked against a
//! live Azurite 3.35 listing: `EnumerationResults` > `Blobs` > `Blob` > `Name`, `Properties`,
//! `Metadata`, then `NextMarker`).
//!
//! Like Azure (and unlike Azurite, which refuses to list them), a name holding a character XML
//! cannot carry is sent percent-encoded as `<Name Encoded="true">`. The markers are opaque
//! base64 with `!`, `+`, `/` and `=` in them, as Azure's are, so the client's escaping of the
//! marker is exercised; Azurite's markers are plain blob names.

use super::{error, settle, Answer, Blob, FakeService, Lease, State};
use base64::Engine as _;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::SystemTime;

/// The service's default and largest page.
const MAX_RESULTS: usize = 5000;

impl FakeService {
    /// Puts a blob straight into the store, for listings with names and metadata keys that the
    /// client itself would never write (a metadata key `NextMarker`, a control character).
    pub fn seed_blob(&self, container: &str, name: &str, metadata: &[(&str, &str)]) {
        let mut state = self.state.borrow_mut();
        state.containers.insert(container.to_string());
        state.next_etag += 1;
        let blob = Blob {
            created: std::time::SystemTime::UNIX_EPOCH,
            etag: state.next_etag,
            lease: Lease::Available,
            metadata: metadata.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: Vec::new(),
        };
        state.blobs.insert((container.to_string(), name.to_string()), blob);
    }

    /// The `maxresults` of every List Blobs request answered so far, in order (`None`: absent).
    pub fn list_requests(&self) -> Vec<Option<usize>> {
        self.state.borrow().list_requests.clone()
    }
}

impl State {
    pub(super) fn list(&mut self, container: &str, query: &str, now: SystemTime) -> Answer {
        let params: BTreeMap<&str, String> = query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .map(|(name, value)| (name, percent_decode(value)))
            .collect();
        let max_results = match params.get("maxresults").map(|m| m.parse::<usize>()) {
            None => None,
            Some(Ok(n)) if n >= 1 => Some(n),
            Some(_) => return error(400, "InvalidQueryParameterValue"),
        };
        self.list_requests.push(max_results);
        let page_size = max_results.unwrap_or(MAX_RESULTS).min(MAX_RESULTS);
        let start = match params.get("marker") {
            None => String::new(),
            Some(marker) => match decode_marker(marker) {
                Some(name) => name,
                None => return error(400, "InvalidQueryParameterValue"),
            },
        };
        if !self.containers.contains(container) {
            return error(404, "ContainerNotFound");
        }
        let mut names = self
            .blobs
            .range_mut((container.to_string(), start)..)
            .take_while(|((c, _), _)| c == container);
        let mut xml = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults \
             ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\" \
             ContainerName=\"{container}\"><Marker>{}</Marker><MaxResults>{page_size}</MaxResults>\
             <Blobs>",
            params.get("marker").map(|m| escape(m).into_owned()).unwrap_or_default()
        );
        for ((_, name), blob) in names.by_ref().take(page_size) {
            blob.lease = settle(blob.lease.clone(), now);
            blob.list_into(name, &mut xml);
        }
        let next = names.next().map(|((_, name), _)| encode_marker(name)).unwrap_or_default();
        xml.push_str(&format!("</Blobs><NextMarker>{next}</NextMarker></EnumerationResults>"));
        (200, vec![("content-type".into(), "application/xml".into())], xml.into_bytes())
    }
}

impl Blob {
    /// The ETag is listed unquoted, the same value the `ETag` header carries quoted, as Azure
    /// and Azurite do; `If-Match` with it must match. Written into the page as it grows: the
    /// 10,000-item claims (claim_scale.rs) list millions of blobs.
    fn list_into(&self, name: &str, xml: &mut String) {
        if name.chars().all(xml_char) {
            let _ = write!(xml, "<Blob><Name>{}</Name>", escape(name));
        } else {
            xml.push_str("<Blob><Name Encoded=\"true\">");
            for byte in name.bytes() {
                let _ = write!(xml, "%{byte:02X}");
            }
            xml.push_str("</Name>");
        }
        let _ = write!(
            xml,
            "<Properties><Creation-Time>{}</Creation-Time><Etag>{}</Etag><LeaseStatus>{}</LeaseStatus>\
             <LeaseState>{}</LeaseState></Properties><Metadata>",
            httpdate::fmt_http_date(self.created),
            self.etag,
            if self.locked() { "locked" } else { "unlocked" },
            self.state_name()
        );
        for (k, v) in &self.metadata {
            let _ = write!(xml, "<{k}>{}</{k}>", escape(v));
        }
        xml.push_str("</Metadata></Blob>");
    }
}

/// XML 1.0's `Char` production: no controls besides tab, newline and carriage return.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || c >= '\u{10000}'
}

fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;"))
}

/// Opaque, like Azure's `2!<n>!<base64>`: the client must pass it back exactly.
fn encode_marker(name: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{name}!~"));
    format!("2!{}!{encoded}", encoded.len())
}

fn decode_marker(marker: &str) -> Option<String> {
    let (length, encoded) = marker.strip_prefix("2!")?.split_once('!')?;
    (length.parse::<usize>().ok()? == encoded.len()).then_some(())?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
    String::from_utf8(bytes).ok()?.strip_suffix("!~").map(str::to_string)
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

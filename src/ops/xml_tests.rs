use super::*;

/// Every leaf's path and text, in document order.
fn leaves(document: &str) -> Result<Vec<(String, String)>, NotXml> {
    let mut out = Vec::new();
    walk(document, &mut |path, node| {
        if let Node::Close { text } = node {
            out.push((path.join("/"), text.to_string()));
        }
    })?;
    Ok(out)
}

#[test]
fn paths_name_the_structure_not_the_text() {
    let doc =
        "<?xml version=\"1.0\"?>\n<A x=\"1\"><B>b &amp; <![CDATA[<raw>]]></B><!-- <C>no</C> -->\
               <C/><C>NextMarker</C></A>\n";
    let found = leaves(doc).unwrap();
    let expected = [("A/B", "b & <raw>"), ("A/C", ""), ("A/C", "NextMarker"), ("A", "")];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    assert_eq!(found, expected);
}

#[test]
fn malformed_documents_are_refused() {
    for doc in [
        "",
        "plain text",
        "<A>",
        "<A></B>",
        "<A><B></A></B>",
        "<A></A><A></A>",
        "<A></A>trailing",
        "<!DOCTYPE A [<!ENTITY x \"y\">]><A>&x;</A>",
        "<A><B</A>",
        "<A><!-- open </A>",
        "<A><![CDATA[ open </A>",
        "< A></A>",
    ] {
        assert_eq!(leaves(doc), Err(NotXml), "{doc:?}");
    }
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{}{}", "<a>".repeat(MAX_DEPTH + 1), "</a>".repeat(MAX_DEPTH + 1));
    assert_eq!(leaves(&deep), Err(NotXml));
    let ok = format!("{}{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
    assert!(leaves(&ok).is_ok());
}

#[test]
fn a_greater_than_inside_an_attribute_value_does_not_end_the_tag() {
    let doc = "<A note=\"a > b\" Encoded='true'><B/></A>";
    let mut attributes = String::new();
    walk(doc, &mut |path, node| {
        if let (["A"], Node::Open { attributes: a }) = (path, node) {
            attributes = a.to_string();
        }
    })
    .unwrap();
    assert_eq!(attribute(&attributes, "note").as_deref(), Some("a > b"));
    assert_eq!(attribute(&attributes, "Encoded").as_deref(), Some("true"));
    assert_eq!(attribute(&attributes, "missing"), None);
}

#[test]
fn named_and_numeric_references_decode_and_others_stay() {
    assert_eq!(decode_entities("&lt;&gt;&amp;&quot;&apos;"), "<>&\"'");
    assert_eq!(decode_entities("&#65;&#x42;&#X43;&#x1F600;"), "ABC\u{1F600}");
    assert_eq!(decode_entities("&amp;lt;"), "&lt;", "decoded once, not twice");
    for kept in ["&nbsp;", "&#;", "&#x;", "&#xD800;", "&#0;", "&#x110000;", "&#+65;", "& ;", "&"] {
        assert_eq!(decode_entities(kept), kept);
    }
    assert_eq!(decode_entities("ü&lt;ü&#252;"), "ü<üü");
}

#[test]
fn error_bodies_are_read_at_error_code_and_error_message_only() {
    let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Detail><Code>Nested</Code></Detail>\
                <Code>AuthenticationFailed</Code><Message>Server failed to authenticate.\n\
                RequestId:r\nTime:t</Message><AuthenticationErrorDetail>The MAC signature found \
                in the HTTP request 'c2lnbmF0dXJl' is not the same</AuthenticationErrorDetail></Error>";
    let response = http::Response::builder().status(403).body(body.as_bytes().to_vec()).unwrap();
    let error = super::super::service_error(&response);
    assert_eq!(error.code.as_deref(), Some("AuthenticationFailed"));
    assert_eq!(error.message, "Server failed to authenticate.");

    // Not XML at all (a proxy's page): the status still speaks.
    let html = http::Response::builder().status(502).body(b"<html><p>bad".to_vec()).unwrap();
    let error = super::super::service_error(&html);
    assert_eq!((error.code, error.message.as_str()), (None, "Bad Gateway"));
}

//! The text sanitizer and redaction against their tree versions: the same
//! bytes as `serde_json::to_string` of the cleaned tree, on every JSON
//! document of the extractors' fixtures and on generated documents.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::sanitize::sanitize as sanitize_tree;

/// The tree path: parse, refuse a non-object, clean, write.
fn tree_sanitized(text: &str) -> Option<String> {
    let mut v: Value = serde_json::from_str(text).ok()?;
    if !v.is_object() {
        return None;
    }
    sanitize_tree(&mut v);
    Some(serde_json::to_string(&v).unwrap())
}

fn tree_redacted(text: &str, secrets: &Secrets) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    secrets.redact_json(&mut v);
    serde_json::to_string(&v).unwrap()
}

/// Both paths agree on `text`: the same text, or both refuse it.
fn assert_agrees(text: &str) {
    let tree = tree_sanitized(text);
    let streamed = sanitize(text).ok();
    assert_eq!(streamed, tree, "on {text:.300}");
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extractors")
}

/// Every JSON object in the extractors' fixtures: body files, inline
/// response bodies, `<script type="application/json">` of recorded pages,
/// and the case files themselves.
fn fixture_documents() -> Vec<(String, String)> {
    let mut docs = Vec::new();
    let mut files = Vec::new();
    let mut dirs = vec![fixtures_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.components().any(|c| c.as_os_str() == "fixtures") {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in files {
        let name = path.display().to_string();
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                if let Ok(Value::Object(case)) = serde_json::from_str::<Value>(&text) {
                    let bodies = case
                        .get("exchanges")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|x| x.pointer("/response/body").and_then(Value::as_str));
                    for body in bodies {
                        if body.trim_start().starts_with('{') {
                            docs.push((format!("{name} body"), body.to_string()));
                        }
                    }
                }
                docs.push((name, text));
            }
            Some("html") => {
                for script in text.split("<script").skip(1) {
                    let Some((tag, rest)) = script.split_once('>') else {
                        continue;
                    };
                    let Some((content, _)) = rest.split_once("</script>") else {
                        continue;
                    };
                    if tag.contains("json") && content.trim_start().starts_with('{') {
                        docs.push((format!("{name} script"), content.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    docs
}

#[test]
fn every_fixture_document_sanitizes_to_the_trees_bytes() {
    let docs = fixture_documents();
    assert!(docs.len() > 100, "found only {} documents", docs.len());
    let mut sanitized_something = 0;
    for (name, text) in &docs {
        let tree = tree_sanitized(text);
        let streamed = sanitize(text).ok();
        assert!(tree.is_some(), "{name} is a JSON object");
        assert_eq!(streamed, tree, "{name}");
        let tree = tree.unwrap();
        // The cleaned data parsed and written once more is unchanged.
        assert_eq!(sanitize(&tree).unwrap(), tree, "{name}");
        if tree.len() < text.len() {
            sanitized_something += 1;
        }
        // Redacting a string of the document agrees too.
        let secret = tree
            .split('"')
            .find(|s| s.len() >= 12 && !s.contains('\\'))
            .map(|s| s.to_string());
        if let Some(secret) = secret {
            let secrets = Secrets::new([secret]);
            assert_eq!(
                redact(&tree, &secrets).unwrap(),
                tree_redacted(&tree, &secrets),
                "{name}"
            );
        }
    }
    assert!(sanitized_something > 10, "{sanitized_something}");
}

#[test]
fn the_rules_apply_at_every_depth() {
    let text = r#"{"a":{"b":[{"sessionId":"s","x":-9007199254740993,"y":9007199254740992,"z":1.5E3}]},
        "token":{"deep":1},"u":"\u00e9\ud83d\ude00\n\"\/","email":"x","n":[12345678901234567890,-1e-7,0,-0]}"#;
    assert_eq!(
        sanitize(text).unwrap(),
        r#"{"a":{"b":[{"x":"-9007199254740993","y":9007199254740992,"z":1.5e+3}]},"u":"é😀\n\"/","n":["12345678901234567890",-1e-7,0,-0]}"#
    );
    assert_agrees(text);
}

#[test]
fn only_json_objects_are_accepted() {
    for text in [
        "[1]",
        "\"s\"",
        "12",
        "null",
        "",
        "{",
        "{\"a\":1,}",
        "{\"a\":1} x",
        "{'a':1}",
        "{\"a\":NaN}",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\u{1}\"}",
        "{\"$serde_json::private::Number\":\"12\"}",
        "{\"$serde_json::private::RawValue\":\"[1]\"}",
        "{\"$serde_json::private::Number\":\"x\"}",
    ] {
        assert!(sanitize(text).is_err(), "{text}");
        assert_agrees(text);
    }
    assert!(matches!(sanitize("[1]"), Err(SanitizeError::NotAnObject)));
    assert!(matches!(
        sanitize("{\"a\":}"),
        Err(SanitizeError::NotJson(_))
    ));
    for text in [
        " {}",
        "{\"a\":1}\n",
        "{\"$serde_json::private::RawValue\":1,\"b\":2}",
    ] {
        assert_agrees(text);
    }
}

#[test]
fn marker_objects_inside_read_as_the_tree_reads_them() {
    for text in [
        r#"{"a":{"$serde_json::private::Number":"1E5"}}"#,
        r#"{"a":{"$serde_json::private::Number":"12345678901234567890"}}"#,
        r#"{"a":{"$serde_json::private::RawValue":"{\"token\":1,\"b\":[2]}"}}"#,
        r#"{"a":{"b":1,"$serde_json::private::Number":"x"}}"#,
    ] {
        assert!(sanitize(text).is_ok(), "{text}");
        assert_agrees(text);
    }
}

#[test]
fn duplicate_members_keep_the_last_value_at_the_first_place() {
    let text = r#"{"a":1,"b":{"c":1,"c":[2]},"a":3,"token":1,"token":2}"#;
    assert_eq!(sanitize(text).unwrap(), r#"{"a":3,"b":{"c":[2]}}"#);
    let many: String = (0..100).map(|i| format!("\"k{i}\":{i},")).collect();
    let text = format!("{{{many}\"k7\":\"again\"}}");
    assert_agrees(&text);
    assert!(sanitize(&text).unwrap().contains(r#""k7":"again","k8""#));
}

#[test]
fn nesting_is_bounded_as_serde_json_bounds_it() {
    let nested = |n: usize| format!("{}{}", "{\"a\":[".repeat(n / 2), "]}".repeat(n / 2));
    let deepest = nested(MAX_DEPTH - 1);
    assert!(sanitize(&deepest).is_ok());
    assert_agrees(&deepest);
    let too_deep = nested(MAX_DEPTH + 1);
    assert!(sanitize(&too_deep).is_err());
    assert_agrees(&too_deep);
}

#[test]
fn secrets_are_masked_as_the_tree_masks_them() {
    let secrets = Secrets::new(["sessionid=abc123def; other=zz".to_string()]);
    for text in [
        r#"{"u":"https://x/?s=abc123def&t=1","n":1}"#,
        r#"{"u":"sessionid=abc123def; other=zz","l":["abc123def","x"]}"#,
        r#"{"u":"quote\"abc123def\\","v":{"w":"abc123de"}}"#,
        // A name holding a secret: the tree moves the masked member last.
        r#"{"abc123def":1,"b":2,"c":{"x_abc123def":3,"y":4}}"#,
        r#"{"big":"12345678901234567890"}"#,
    ] {
        let clean = sanitize(text).unwrap();
        assert_eq!(
            redact(&clean, &secrets).unwrap(),
            tree_redacted(&clean, &secrets),
            "{text}"
        );
    }
    let secrets = Secrets::new(["12345678901234567890".to_string()]);
    let clean = sanitize(r#"{"big":12345678901234567890}"#).unwrap();
    assert_eq!(redact(&clean, &secrets).unwrap(), r#"{"big":"[redacted]"}"#);
}

/// A JSON text of random shape and spelling, with sensitive names planted
/// at any depth.
fn document() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        prop::sample::select(vec![
            "id",
            "title",
            "desc",
            "tip",
            "vip",
            "clip",
            "sign",
            "authority",
            "token",
            "xsec_token",
            "Cookie",
            "ip_location",
            "email",
            "lat",
            "sessionId",
            "a",
            "b",
            "a",
            "\\u0074oken",
            "caf\\u00e9",
            "emoji😀",
            "with\\\"quote",
            "\\/slash",
        ])
        .prop_map(String::from),
        "[a-zA-Z_-]{1,8}",
    ];
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        "-?[1-9][0-9]{15,30}",
        "-?(0|[1-9][0-9]{0,5})\\.[0-9]{1,6}([eE][+-]?[0-9]{1,3})?",
        "-?[1-9][eE][0-9]{1,2}",
        Just("-0".to_string()),
        "[ -~]{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        prop::sample::select(vec![
            r#""\u00e9\ud83d\ude00""#,
            r#""a\/b\\c\"d\n\t\u0000""#,
            r#""中文 emoji 😀""#,
            r#""abc123def-secret""#,
        ])
        .prop_map(String::from),
    ];
    leaf.prop_recursive(6, 96, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec(
                (
                    name.clone(),
                    inner,
                    prop::sample::select(vec!["", " ", "\n "])
                ),
                0..7
            )
            .prop_map(|members| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, v, ws)| format!("{ws}\"{k}\"{ws}:{ws}{v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
    .prop_map(|doc| {
        if doc.starts_with('{') {
            doc
        } else {
            format!("{{\"item\":{doc}}}")
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_documents_sanitize_and_redact_to_the_trees_bytes(doc in document()) {
        let tree = tree_sanitized(&doc);
        prop_assert!(tree.is_some(), "{}", doc);
        let streamed = sanitize(&doc).ok();
        prop_assert_eq!(&streamed, &tree);
        let clean = tree.unwrap();
        let secrets = Secrets::new(["abc123def".to_string(), "tle".to_string(), "emoji😀".to_string()]);
        prop_assert_eq!(redact(&clean, &secrets).unwrap(), tree_redacted(&clean, &secrets));
        // As a parse does it: the guest's text in, the answer's text out.
        for secrets in [secrets, Secrets::new(["with\"quote".to_string()]), Secrets::new(["zzzzzzzz".to_string()])] {
            let data = crate::PlatformData::from_guest(&doc).unwrap().redacted(&secrets);
            prop_assert_eq!(data.as_str(), tree_redacted(&clean, &secrets));
        }
    }
}

/// Tree against text on TikTok's item of a recorded page (the bulk of its
/// platform data). Prints µs; not a timed assertion.
/// `cargo test -p mediaparse-core --release --lib sanitize::text::tests::cost -- --ignored --nocapture`
#[test]
#[ignore]
fn cost_on_tiktok_platform_data() {
    let page = std::fs::read_to_string(fixtures_dir().join("tiktok/fixtures/video_post/page.html"))
        .unwrap();
    let (_, script) = page
        .split_once(r#"id="__UNIVERSAL_DATA_FOR_REHYDRATION__""#)
        .unwrap();
    let json = &script[script.find('>').unwrap() + 1..script.find("</script>").unwrap()];
    let page: Value = serde_json::from_str(json).unwrap();
    let item = page
        .pointer("/__DEFAULT_SCOPE__/webapp.video-detail/itemInfo/itemStruct")
        .unwrap();
    let text = serde_json::to_string(item).unwrap();
    let secrets = Secrets::new(["yRh3fIwDWgKe5bUxUfjaGQ==".to_string()]);
    let runs = 2000;
    let median = |f: &dyn Fn() -> String| {
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = std::time::Instant::now();
                std::hint::black_box(f());
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    };
    let tree = median(&|| {
        let mut v: Value = serde_json::from_str(&text).unwrap();
        sanitize_tree(&mut v);
        secrets.redact_json(&mut v);
        serde_json::to_string(&v).unwrap()
    });
    let streamed = median(&|| {
        let data = crate::PlatformData::from_guest(&text).unwrap();
        data.redacted(&secrets).as_str().to_string()
    });
    let forced = median(&|| redact(&sanitize(&text).unwrap(), &secrets).unwrap());
    println!(
        "TikTok item ({} bytes): tree parse+sanitize+redact+write {tree:.1} µs; \
         text sanitize+redact {streamed:.1} µs (with the redaction pass forced: {forced:.1} µs)",
        text.len()
    );
}

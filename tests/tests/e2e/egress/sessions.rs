//! Session pools through the real binary: the session reaches the
//! extractor as `context.config`, a `Set-Cookie` from the platform's host
//! rotates it, the fresh value is persisted beside the database and
//! scrubbed from what the extractor returns, and the listing shows labels only.

use mediaparse_tests::fake_upstream::{FakeUpstream, Route};

use crate::operations::{extractors, start};

#[tokio::test]
async fn set_cookie_rotates_the_session_persists_it_and_scrubs_it() {
    let route = |path: &str, set_cookie: &str| Route {
        method: "GET".into(),
        url: format!("https://api.mptest.example/{path}"),
        header_constraints: vec![],
        body_constraint: None,
        status: 200,
        headers: vec![
            mediaparse_sdk::Header::new("content-type", "text/plain"),
            mediaparse_sdk::Header::new("set-cookie", set_cookie),
        ],
        body: b"body".to_vec(),
    };
    let up = FakeUpstream::with_routes(vec![route("ok", "ct0=rotated4711; Path=/; Secure")])
        .await
        .expect("fake upstream");
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("mediaparse.toml");
    std::fs::write(
        &conf,
        "[[platforms.tiktok.sessions]]\nlabel = \"acct-1\"\ncookie = \"sid=original0815; ct0=old0000\"\n",
    )
    .unwrap();
    let run = start(dir.path(), &up.base_url(), Some(conf), None).await;
    let answer = run.parse("tiktok", "ok").await;
    assert_eq!(answer.status, 200, "{}", answer.body);

    let state = run.service.db.with_extension("sessions.json");
    let saved = std::fs::read_to_string(&state).expect("session state written");
    assert!(
        saved.contains("rotated4711") && saved.contains("original0815"),
        "{saved}"
    );
    assert!(!saved.contains("old0000"), "{saved}");

    // `leak` echoes every context.config value: the rotated cookie is there, scrubbed.
    let leak = run.parse("tiktok", "leak").await;
    assert_eq!(leak.status, 200, "{}", leak.body);
    let text = leak.body.to_string();
    assert!(text.contains("[redacted]"), "{text}");
    for secret in ["rotated4711", "original0815"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }

    let entry = run.admin_entry("tiktok").await;
    assert_eq!(entry["sessions"][0]["label"], "acct-1", "{entry}");
    assert_eq!(entry["sessions"][0]["cooling"], false, "{entry}");
    assert!(!entry.to_string().contains("original0815"));
}

/// A redirect chain on the platform's own host: the `Set-Cookie` of every
/// hop (not only the last answer's) is merged into the session and
/// persisted; a cookie a hop sets for another domain is not.
#[tokio::test]
async fn set_cookie_from_every_redirect_hop_is_merged_foreign_domains_are_not() {
    let hop = |path: &str, status: u16, headers: Vec<mediaparse_sdk::Header>| Route {
        method: "GET".into(),
        url: format!("https://api.mptest.example/{path}"),
        header_constraints: vec![],
        body_constraint: None,
        status,
        headers,
        body: b"body".to_vec(),
    };
    let h = mediaparse_sdk::Header::new;
    let up = FakeUpstream::with_routes(vec![
        hop(
            "ok",
            302,
            vec![
                h("location", "https://api.mptest.example/hop2"),
                h("set-cookie", "csrftoken=first4242; Path=/; Secure"),
                h(
                    "set-cookie",
                    "foreign=evil0001; Domain=evil.example; Path=/",
                ),
            ],
        ),
        hop(
            "hop2",
            302,
            vec![
                h("location", "/final"),
                h("set-cookie", "ct0=second5353; Domain=api.mptest.example"),
                h(
                    "set-cookie",
                    "sibling=evil0002; Domain=other.mptest.example",
                ),
            ],
        ),
        hop(
            "final",
            200,
            vec![
                h("content-type", "text/plain"),
                h("set-cookie", "msToken=last6464"),
            ],
        ),
    ])
    .await
    .expect("fake upstream");
    let dir = extractors(&[("tiktok", "1.0.0")]);
    let conf_dir = tempfile::tempdir().unwrap();
    let conf = conf_dir.path().join("mediaparse.toml");
    std::fs::write(
        &conf,
        "[[platforms.tiktok.sessions]]\nlabel = \"acct-1\"\ncookie = \"sid=original0815; ct0=old0000\"\n",
    )
    .unwrap();
    let run = start(dir.path(), &up.base_url(), Some(conf), None).await;
    let answer = run.parse("tiktok", "ok").await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    // The chain was followed: all three hops reached the fake upstream.
    let hits = up.hits();
    for path in ["/ok", "/hop2", "/final"] {
        assert!(
            hits.iter()
                .any(|h| h.contains(&format!("api.mptest.example{path}"))),
            "{path} not requested: {hits:?}"
        );
    }

    let state = run.service.db.with_extension("sessions.json");
    let saved = std::fs::read_to_string(&state).expect("session state written");
    for fresh in ["original0815", "first4242", "second5353", "last6464"] {
        assert!(saved.contains(fresh), "{fresh} not merged: {saved}");
    }
    for foreign in ["evil0001", "evil0002", "old0000"] {
        assert!(!saved.contains(foreign), "{foreign} merged: {saved}");
    }
}

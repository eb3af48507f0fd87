use std::sync::atomic::{AtomicUsize, Ordering};

use mediaparse_sdk as sdk;

use super::*;

#[test]
fn keys_are_bounded_visible_ascii() {
    assert!(validate("order-42_a.b").is_ok());
    assert!(validate(&"k".repeat(MAX_KEY_BYTES)).is_ok());
    assert!(validate(&"k".repeat(MAX_KEY_BYTES + 1)).is_err());
    assert!(validate("").is_err());
    assert!(validate("has space").is_err());
    assert!(validate("é").is_err());
}

#[test]
fn fingerprints_tell_requests_apart() {
    assert_eq!(
        fingerprint(&["rest", "a", "b"]),
        fingerprint(&["rest", "a", "b"])
    );
    assert_ne!(
        fingerprint(&["rest", "ab", ""]),
        fingerprint(&["rest", "a", "b"])
    );
    assert_ne!(fingerprint(&["rest", "a"]), fingerprint(&["mcp", "a"]));
}

#[test]
fn only_final_answers_are_stored() {
    for s in [200, 400, 402, 404, 422] {
        assert!(is_final(s), "{s}");
    }
    for s in [408, 429, 500, 502, 503, 504] {
        assert!(!is_final(s), "{s}");
    }
}

fn guard(name: &str) -> Idempotency {
    Idempotency {
        key: name.into(),
        fingerprint: "fp".into(),
    }
}

/// A parse run that charges 1 credit under its ledger id and answers a
/// title of `title_bytes`; counts its runs.
async fn charged_run(
    store: &Store,
    request_id: String,
    title_bytes: usize,
    runs: &AtomicUsize,
) -> ParseAnswer {
    runs.fetch_add(1, Ordering::SeqCst);
    store
        .charge_once("acme", "k1", "tiktok", 1, &request_id, 1)
        .unwrap();
    let media = sdk::Media {
        title: "m".repeat(title_bytes),
        images: vec![sdk::Image {
            url: "https://i.example/1.jpg".into(),
            width: 1,
            height: 1,
        }],
        ..Default::default()
    };
    ParseAnswer {
        request_id,
        charged: 1,
        shape: Shape::Common,
        outcome: Outcome::Media {
            platform: "tiktok".into(),
            media,
            platform_data: None,
        },
        cache: None,
        replayed: false,
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    store.add_credits("acme", 5, 0).unwrap();
    (dir, store)
}

#[tokio::test]
async fn a_repeat_is_the_typed_first_answer_uncharged() {
    let (_dir, store) = store();
    let key = KeyRecord::for_tests("k1", "acme");
    let ids = RequestIds::of(&mediaparse_core::ids::new_request_id(), None);
    let runs = AtomicUsize::new(0);
    let mut answers = Vec::new();
    for _ in 0..3 {
        let answer: ParseAnswer = once(&store, &key, &guard("small"), &ids, Shape::Common, |id| {
            charged_run(&store, id, 10, &runs)
        })
        .await;
        answers.push(answer);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the first runs");
    assert!(!answers[0].replayed);
    for again in &answers[1..] {
        assert!(again.replayed);
        assert_eq!(again.charged, 1, "the first cost");
        assert_eq!(again.body(), answers[0].body());
        assert_eq!(again.request_id, answers[0].request_id);
    }
    assert_eq!(store.balance("acme").unwrap(), 4, "charged once");
}

#[tokio::test]
async fn a_charged_answer_too_large_to_store_is_replayed_by_reference_uncharged() {
    let (_dir, store) = store();
    let key = KeyRecord::for_tests("k1", "acme");
    let ids = RequestIds::of(&mediaparse_core::ids::new_request_id(), None);
    let runs = AtomicUsize::new(0);
    let size = MAX_STORED_BYTES * 5;
    let mut answers = Vec::new();
    for _ in 0..3 {
        let answer: ParseAnswer = once(&store, &key, &guard("big"), &ids, Shape::Common, |id| {
            charged_run(&store, id, size, &runs)
        })
        .await;
        answers.push(answer);
    }
    let first = &answers[0];
    assert!(!first.replayed);
    assert_eq!((first.status(), first.charged), (200, 1));
    assert!(first.body().len() > size, "the whole answer, never cut");
    for again in &answers[1..] {
        assert!(again.replayed, "a repeat is a replay");
        assert_eq!((again.status(), again.charged), (200, 1), "the first cost");
        assert_eq!(again.body(), first.body());
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(store.balance("acme").unwrap(), 4, "charged once");
    assert_eq!(store.ledger_count(None).unwrap(), 1);
}

#[tokio::test]
async fn an_answer_stored_as_bytes_by_an_earlier_version_is_given_back_as_it_was() {
    let (_dir, store) = store();
    let key = KeyRecord::for_tests("k1", "acme");
    let old = StoredResponse {
        status: 200,
        credits: 1,
        body: r#"{"status":200,"data":{"platform":"tiktok"},"msg":"success"}"#.into(),
    };
    store
        .claim_idempotency_key(
            "k1",
            "old",
            "fp",
            "req_old",
            mediaparse_core::clock::unix_now_s(),
        )
        .unwrap();
    store.complete_idempotency_key("k1", "old", &old).unwrap();
    let ids = RequestIds::of("req_new", None);
    let answer: ParseAnswer = once(
        &store,
        &key,
        &guard("old"),
        &ids,
        Shape::Common,
        |_| async { panic!("a stored answer does not run again") },
    )
    .await;
    assert!(answer.replayed);
    assert_eq!((answer.status(), answer.charged), (200, 1));
    assert_eq!(answer.body(), old.body);
}

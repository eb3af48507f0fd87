//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_threads::Threads;
use mediaparse_sdk::{Header, testing};

/// Meta's own answer shapes, broken.
const BODIES: &[&str] = &[
    "{\"data\":{\"xig_polaris_media\":{\"if_not_gated_logged_out\":{\"code\":1}}}}",
    "<script type=\"application/json\" data-sjs>{\"a\":[[[[{\"code\":\"x\"}]]]]}</script>",
    "\"init\",[],[{\"contextJSON\":\"{\\\"gql_data\\\":{\\\"shortcode_media\\\":7}}\"}]",
    "\"init\",[],[",
    "<img class=\"EmbeddedMediaImage\" srcset=\"x 9999999999999w\">",
];

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Threads>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Threads>(
        &[
            "https://www.threads.com/share/BAd-r4UCHz/",
            "https://www.threads.net/@natgeo/post/C8CTu0iswgv",
        ],
        BODIES,
        &[Header::new("Set-Cookie", "csrftoken=; Path=/")],
    );
}

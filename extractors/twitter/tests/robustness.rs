//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_twitter::Twitter;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Twitter>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Twitter>(
        &[
            "https://x.com/DivineDropbear/status/1841206275088290279",
            "https://mobile.twitter.com/DivineDropbear/status/1841206275088290279",
        ],
        &[],
        &[],
    );
}

//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_youtube::YouTube;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<YouTube>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<YouTube>(
        &[
            "https://www.youtube.com/watch?v=M4gD1WSo5mA",
            "https://youtu.be/M4gD1WSo5mA",
        ],
        &[],
        &[],
    );
}

//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_toutiao::Toutiao;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Toutiao>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Toutiao>(
        &[
            "https://www.toutiao.com/video/7505382061495176511/",
            "https://m.toutiao.com/video/7479446610359878153/",
        ],
        &[],
        &[],
    );
}

//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_bilibili::Bilibili;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Bilibili>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Bilibili>(
        &[
            "https://www.bilibili.com/video/BV117411r7R1",
            "https://b23.tv/5x4wy5f",
            "https://www.bilibili.com/bangumi/play/ss42290",
        ],
        &[],
        &[],
    );
}

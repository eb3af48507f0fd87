//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_tiktok::TikTok;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<TikTok>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<TikTok>(
        &[
            "https://www.tiktok.com/@vantoan___/video/7305827432509082913",
            "https://vm.tiktok.com/ZSe4FqkKd/",
        ],
        &[],
        &[],
    );
}

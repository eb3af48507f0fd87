//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_douyin::Douyin;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Douyin>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Douyin>(
        &[
            "https://www.douyin.com/video/6961737553342991651",
            "https://v.douyin.com/u-fCCopjutU",
            "https://iesdouyin.com/share/note/7616399587141737704/",
        ],
        &[],
        &[],
    );
}

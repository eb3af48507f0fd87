//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_xiaohongshu::Xiaohongshu;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Xiaohongshu>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Xiaohongshu>(
        &[
            "https://www.xiaohongshu.com/explore/6411cf99000000001300b6d9",
            "https://xhslink.com/o/5HXq7pL2Ab",
        ],
        &[],
        &[],
    );
}

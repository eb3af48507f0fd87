//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_kuaishou::Kuaishou;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Kuaishou>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Kuaishou>(
        &[
            "https://www.kuaishou.com/short-video/3x43cyvcyph57i4",
            "https://v.kuaishou.com/13x0B9e",
            "https://v.m.chenzhongtech.com/fw/photo/3xbr5pi8hxi4e6s",
        ],
        &[],
        &[],
    );
}

//! Hostile or broken upstream answers end in a result or a failure, never a
//! panic (a panic in a component is a trap and the caller's `500`).

use mediaparse_extractor_weibo::Weibo;
use mediaparse_sdk::testing;

#[test]
fn broken_recorded_answers_never_panic() {
    testing::assert_survives_broken_fixtures::<Weibo>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn hostile_answers_never_panic() {
    testing::assert_survives_answers::<Weibo>(
        &[
            "https://m.weibo.cn/detail/4910815147462302",
            "https://weibo.com/1111681197/MohObmHwb",
            "https://t.cn/A69UcM1M",
            "https://h5.video.weibo.com/show/1034:4857848069554290",
        ],
        &[],
        &[],
    );
}

#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_douyin::Douyin>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

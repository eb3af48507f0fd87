#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_toutiao::Toutiao>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

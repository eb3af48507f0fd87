#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_instagram::Instagram>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

#[test]
fn fixtures() {
    mediaparse_sdk::replay::assert_fixtures::<mediaparse_extractor_kuaishou::Kuaishou>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
}

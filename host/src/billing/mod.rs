//! Prices: one table, the only source for charging and for
//! `GET /api/v1/capabilities` `data.billing`.

/// Credits one successful parse (at least one media URL) costs (SPEC.md Limits).
pub fn price(platform: &str) -> i64 {
    match platform {
        "youtube" => 3,
        "threads" | "kuaishou" => 2,
        "xiaohongshu" => 10,
        _ => 1,
    }
}

/// `{platform: credits}` for every platform, in SPEC order.
pub fn price_table() -> serde_json::Map<String, serde_json::Value> {
    mediaparse_sdk::spec::PLATFORMS
        .iter()
        .map(|p| ((*p).to_string(), price(p).into()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn spec_prices() {
        let t = super::price_table();
        assert_eq!(t["youtube"], 3);
        assert_eq!(t["threads"], 2);
        assert_eq!(t["kuaishou"], 2);
        assert_eq!(t["xiaohongshu"], 10);
        assert_eq!(t["tiktok"], 1);
        assert_eq!(t.len(), 11);
    }
}

//! Prices: the only source for charging and for
//! `GET /api/v1/capabilities` `data.billing`. A platform's price is its
//! `platform.toml` `price`, unless the operator configuration sets
//! `[platforms.<id>] price`.

use mediaparse_catalogue::{Catalogue, Manifest};

use crate::config::OperatorConfig;

/// Credits one successful parse (at least one media URL) of `manifest`'s platform costs.
pub fn price(manifest: &Manifest, config: &OperatorConfig) -> i64 {
    config
        .platforms
        .get(&manifest.id)
        .and_then(|p| p.price)
        .unwrap_or(manifest.price)
}

/// `{platform: credits}` for every platform of `catalogue`, in listing order.
pub fn price_table(
    catalogue: &Catalogue,
    config: &OperatorConfig,
) -> serde_json::Map<String, serde_json::Value> {
    catalogue
        .iter()
        .map(|m| (m.id.clone(), price(m, config).into()))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn bundled() -> Catalogue {
        Catalogue::from_source_tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../extractors"))
            .unwrap()
    }

    #[test]
    fn spec_prices() {
        let t = price_table(&bundled(), &OperatorConfig::default());
        assert_eq!(t["youtube"], 3);
        assert_eq!(t["threads"], 2);
        assert_eq!(t["kuaishou"], 2);
        assert_eq!(t["xiaohongshu"], 10);
        assert_eq!(t["tiktok"], 1);
        assert_eq!(t.keys().next().map(String::as_str), Some("tiktok"));
    }

    #[test]
    fn the_operator_overrides_a_price() {
        let config = OperatorConfig::parse("[platforms.youtube]\nprice = 5\n").unwrap();
        let t = price_table(&bundled(), &config);
        assert_eq!((t["youtube"].clone(), t["threads"].clone()), (5.into(), 2.into()));
    }
}

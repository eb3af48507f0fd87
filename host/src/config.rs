//! The operator configuration file (TOML, `--config` / `MEDIAPARSE_CONFIG`):
//! per-platform switches and the values handed to extractors as
//! `context.config` (cookies, tokens, query ids). Those values are secrets:
//! they are never logged and never reach a caller.
//!
//! ```toml
//! [platforms.twitter]
//! enabled = true
//! [platforms.twitter.config]
//! cookie = "auth_token=…; ct0=…"
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use mediaparse_sdk::Header;
use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    #[serde(default)]
    pub platforms: BTreeMap<String, PlatformSettings>,
    /// `[rate_limit] per_minute = N`: the per-key default (`0` = unlimited).
    #[serde(default)]
    pub rate_limit: RateLimitSettings,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSettings {
    pub per_minute: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSettings {
    /// A disabled platform answers `503 extractor_unavailable`.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Name/value pairs for the extractor's `context.config`.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

impl OperatorConfig {
    pub fn load(path: &Path) -> anyhow::Result<OperatorConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let config: OperatorConfig =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        for name in config.platforms.keys() {
            if !mediaparse_sdk::spec::PLATFORMS.contains(&name.as_str()) {
                anyhow::bail!("{}: unknown platform [platforms.{name}]", path.display());
            }
        }
        Ok(config)
    }

    pub fn enabled(&self, platform: &str) -> bool {
        self.platforms.get(platform).is_none_or(|p| p.enabled)
    }

    pub fn extractor_config(&self, platform: &str) -> Vec<Header> {
        self.platforms
            .get(platform)
            .map(|p| {
                p.config
                    .iter()
                    .map(|(k, v)| Header::new(k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_unknown_platforms() {
        let c: OperatorConfig = toml::from_str(
            "[platforms.twitter]\nenabled = false\n[platforms.weibo.config]\ncookie = \"SUB=x\"\n",
        )
        .unwrap();
        assert!(!c.enabled("twitter"));
        assert!(c.enabled("weibo") && c.enabled("tiktok"));
        assert_eq!(
            c.extractor_config("weibo"),
            vec![Header::new("cookie", "SUB=x")]
        );
        assert_eq!(c.rate_limit.per_minute, None);
        let limited: OperatorConfig = toml::from_str("[rate_limit]\nper_minute = 120\n").unwrap();
        assert_eq!(limited.rate_limit.per_minute, Some(120));
        assert!(toml::from_str::<OperatorConfig>("[rate_limit]\nburst = 1\n").is_err());
        let dir = std::env::temp_dir().join(format!("mp-config-{}", std::process::id()));
        std::fs::write(&dir, "[platforms.myspace]\n").unwrap();
        assert!(OperatorConfig::load(&dir).is_err());
        let _ = std::fs::remove_file(&dir);
    }
}

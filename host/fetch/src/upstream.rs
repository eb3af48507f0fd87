//! The upstream override, a public contract (DESIGN.md §5): with
//! `MEDIAPARSE_UPSTREAM=http://127.0.0.1:PORT`, a request for
//! `https://HOST/PATH?QUERY` is sent as `http://127.0.0.1:PORT/HOST/PATH?QUERY`
//! with the same method, headers and body; a `Location` naming the override
//! is read back as the platform URL it stands for.

use url::Url;

#[derive(Clone, Debug)]
pub struct UpstreamOverride {
    base: Url,
}

impl UpstreamOverride {
    pub fn parse(raw: &str) -> anyhow::Result<Self> {
        let base = Url::parse(raw.trim())
            .map_err(|e| anyhow::anyhow!("invalid --upstream {raw:?}: {e}"))?;
        if base.scheme() != "http" && base.scheme() != "https" {
            anyhow::bail!("--upstream must be an http(s) URL");
        }
        Ok(UpstreamOverride { base })
    }

    pub fn base(&self) -> &Url {
        &self.base
    }

    fn prefix(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_string()
    }

    /// `https://HOST[:PORT]/PATH?QUERY` → `{base}/HOST[:PORT]/PATH?QUERY`.
    pub fn to_wire(&self, logical: &Url) -> Url {
        let host = match logical.port() {
            Some(port) => format!("{}:{port}", logical.host_str().unwrap_or_default()),
            None => logical.host_str().unwrap_or_default().to_string(),
        };
        let mut wire = format!("{}/{host}{}", self.prefix(), logical.path());
        if let Some(q) = logical.query() {
            wire.push('?');
            wire.push_str(q);
        }
        Url::parse(&wire).unwrap_or_else(|_| self.base.clone())
    }

    /// A URL under the override (`{base}/HOST/PATH?Q`) → `https://HOST/PATH?Q`.
    pub fn to_logical(&self, wire: &str) -> Option<String> {
        let rest = wire.strip_prefix(&self.prefix())?.strip_prefix('/')?;
        let (host, path) = rest
            .split_once('/')
            .map(|(h, p)| (h, format!("/{p}")))
            .unwrap_or((rest, "/".into()));
        let host = host.split(['?', '#']).next().filter(|h| !h.is_empty())?;
        Some(format!("https://{host}{path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_both_ways() {
        let up = UpstreamOverride::parse("http://127.0.0.1:9000").unwrap();
        let logical = Url::parse("https://www.tiktok.com/@a/video/1?x=%2F&y=2").unwrap();
        let wire = up.to_wire(&logical);
        assert_eq!(
            wire.as_str(),
            "http://127.0.0.1:9000/www.tiktok.com/@a/video/1?x=%2F&y=2"
        );
        assert_eq!(up.to_logical(wire.as_str()).unwrap(), logical.as_str());
        assert_eq!(up.to_logical("https://elsewhere.example/x"), None);
        assert_eq!(
            up.to_logical("http://127.0.0.1:9000/vt.tiktok.com")
                .unwrap(),
            "https://vt.tiktok.com/"
        );
    }
}

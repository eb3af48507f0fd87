//! Which extractor serves an input.

use std::sync::Arc;

use mediaparse_sdk as sdk;
use mediaparse_sdk::urls::InputUrl;

use super::ParseError;
use mediaparse_registry::{LoadedExtractor, Registry};

/// Pick the extractor: by the first URL's host, checked against the path platform.
pub fn route(
    registry: &Registry,
    input: &str,
    path_platform: Option<&str>,
) -> Result<Arc<LoadedExtractor>, ParseError> {
    let url_text = sdk::share::first_url(input).unwrap_or_else(|| input.trim().to_string());
    let url = InputUrl::parse(&url_text)
        .map_err(|_| ParseError::Unsupported("the input holds no http(s) URL".into()))?;
    match path_platform {
        Some(platform) => {
            let ext = registry
                .get(platform)
                .ok_or_else(|| ParseError::ExtractorUnavailable(platform.into()))?;
            if !ext.accepts_host(&url.host) {
                return Err(ParseError::Unsupported(format!(
                    "{} is not a {platform} URL",
                    url.host
                )));
            }
            Ok(ext)
        }
        None => registry
            .route(&url.host)
            .ok_or_else(|| match registry.retired_route(&url.host) {
                Some(platform) => ParseError::ExtractorUnavailable(platform),
                None => ParseError::Unsupported(format!(
                    "{} is not a supported platform host",
                    url.host
                )),
            }),
    }
}

//! Media requests for the tunnel: one GET or HEAD whose body is
//! handed back unread, for the caller to stream. Only the platform's
//! declared media hosts are reached, every redirect hop is re-checked
//! (host list and non-public addresses), and the upstream override applies.

use std::time::Duration;

use mediaparse_sdk::Header;

use super::{FetchError, Fetcher, classify, is_forwardable, parse_logical};

/// How long a media response may take overall: streams of large files run
/// long; stalls are the caller's to time out chunk by chunk.
const WHOLE_STREAM: Duration = Duration::from_secs(6 * 3600);

/// One media request.
pub struct MediaRequest<'a> {
    pub platform: &'a str,
    /// The platform's `media_hosts` (catalogue).
    pub media_hosts: &'a [String],
    pub url: &'a str,
    /// `GET` or `HEAD`.
    pub head: bool,
    /// The token's headers and the caller's range/conditional headers.
    pub headers: &'a [Header],
    /// The platform's outbound proxy, if configured.
    pub proxy: Option<&'a str>,
    /// Connect and first-byte deadline of each hop.
    pub connect_timeout: Duration,
    pub max_redirects: usize,
}

impl Fetcher {
    /// Send `request`, following redirects to declared media hosts only;
    /// the answer's body is unread.
    pub async fn open_media(
        &self,
        request: &MediaRequest<'_>,
    ) -> Result<reqwest::Response, FetchError> {
        let client = self.client_for(request.proxy)?;
        let mut url = parse_logical(request.url)?;
        for _ in 0..=request.max_redirects {
            self.check_destination(request.media_hosts, &url)?;
            let wire = match &self.upstream {
                Some(up) => up.to_wire(&url),
                None => url.clone(),
            };
            let method = if request.head {
                reqwest::Method::HEAD
            } else {
                reqwest::Method::GET
            };
            let mut builder = client.request(method, wire).timeout(WHOLE_STREAM);
            for h in request.headers {
                if is_forwardable(&h.name) {
                    builder = builder.header(&h.name, &h.value);
                }
            }
            let response = tokio::time::timeout(request.connect_timeout, builder.send())
                .await
                .map_err(|_| FetchError::Timeout)?
                .map_err(classify)?;
            if !response.status().is_redirection() {
                return Ok(response);
            }
            let Some(location) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
            else {
                return Ok(response);
            };
            url = self.next_hop(&url, location)?;
        }
        Err(FetchError::TooManyRedirects(request.max_redirects))
    }
}

//! Following short links hop by hop. A short link (`v.douyin.com/{code}`,
//! `t.cn/…`) answers a redirect; the extractor fetches each hop without
//! following redirects (so it sees every `Location`) and stops when one
//! names a post. Extractors are stateless, so the walk is re-read from
//! `done` on every call: [`ShortLinks::follow`] answers the next request
//! to make, or where the link arrived.
//!
//! ```
//! use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
//! use mediaparse_sdk::*;
//!
//! let links = ShortLinks { link: "the short link", post: "an Example post", max_hops: 3, hosts: &["s.example.com"] };
//! let land = |u: &urls::InputUrl| match u.path("/v/{id}") {
//!     Some(c) if u.host == "example.com" => Landing::Arrived(c.get("id").unwrap_or_default().to_string()),
//!     _ if u.host == "s.example.com" => Landing::Hop(u.url.to_string()),
//!     _ => Landing::Elsewhere,
//! };
//! let request = |url: &str, _: &[&Exchange]| HttpRequest::get(url).no_redirects();
//!
//! // Nothing fetched yet: fetch the link itself.
//! let Ok(Followed::Fetch(first)) = links.follow("https://s.example.com/abc", &[], request, land) else { panic!() };
//! assert!(!first.follow_redirects);
//!
//! // It redirected to a post.
//! let response = HttpResponse {
//!     request_url: first.url.clone(), final_url: first.url.clone(), status: 302,
//!     headers: vec![Header::new("Location", "https://example.com/v/42")], body: vec![],
//! };
//! let done = [Exchange { request: first, response }];
//! let Ok(Followed::Arrived { post, hops }) = links.follow("https://s.example.com/abc", &done, request, land) else { panic!() };
//! assert_eq!((post.as_str(), hops.len()), ("42", 1));
//! ```

use crate::urls::InputUrl;
use crate::{Exchange, Failure, HttpRequest, HttpResponse, Result};

/// Where one redirect led, as the extractor classifies its `Location`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Landing<T> {
    /// A post: the walk ends here with what the extractor needs of it.
    Arrived(T),
    /// Another short link: fetch this URL as the next hop.
    Hop(String),
    /// Neither (a profile, the home page, another platform).
    Elsewhere,
    /// Neither, and the extractor knows what it means (a login wall, a
    /// not-found page).
    Failed(Failure),
}

/// The state of a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Followed<'d, T> {
    /// Fetch this hop next (redirects not followed).
    Fetch(HttpRequest),
    /// The link named a post.
    Arrived {
        /// What the extractor's `land` made of the post URL.
        post: T,
        /// The exchanges of the walk, in order (for cookies they set).
        hops: Vec<&'d Exchange>,
    },
}

/// The rules of one platform's short links.
#[derive(Clone, Copy, Debug)]
pub struct ShortLinks<'a> {
    /// The link as failure messages name it: "the short link".
    pub link: &'a str,
    /// What arriving means, for failure messages: "a Douyin post".
    pub post: &'a str,
    /// Hops followed at most before giving up.
    pub max_hops: usize,
    /// Hosts a hop may be fetched from ([`crate::urls::host_matches`] patterns).
    pub hosts: &'a [&'a str],
}

impl ShortLinks<'_> {
    /// Walk from `start` through the hops recorded in `done`. `request`
    /// builds the request for a hop URL (given the hops so far, e.g. for
    /// their cookies) and must not follow redirects; `land` classifies each
    /// redirect target. Failures: rate limited (429), upstream error (5xx),
    /// and unsupported when a hop does not redirect (expired code), leads
    /// elsewhere or off the allowed hosts, or exceeds `max_hops`.
    pub fn follow<'d, T>(
        &self,
        start: &str,
        done: &'d [Exchange],
        request: impl Fn(&str, &[&'d Exchange]) -> HttpRequest,
        land: impl Fn(&InputUrl) -> Landing<T>,
    ) -> Result<Followed<'d, T>> {
        self.follow_judging(start, done, request, land, |r| self.dead_end(r))
    }

    /// How a hop that answers without a redirect fails by default: 429 rate
    /// limited, 5xx upstream error, anything else an expired or invalid
    /// link (unsupported).
    pub fn dead_end(&self, response: &HttpResponse) -> Failure {
        let link = self.link;
        match response.status {
            429 => Failure::RateLimited(format!("{link}'s host is rate-limiting")),
            status @ 500.. => Failure::upstream(format!("{link}'s host answered {status}")),
            _ => Failure::unsupported(format!(
                "{link} does not redirect to {} (expired or invalid code)",
                self.post
            )),
        }
    }

    /// As [`ShortLinks::follow`], with the platform's own reading of a hop
    /// that answered without a redirect.
    pub fn follow_judging<'d, T>(
        &self,
        start: &str,
        done: &'d [Exchange],
        request: impl Fn(&str, &[&'d Exchange]) -> HttpRequest,
        land: impl Fn(&InputUrl) -> Landing<T>,
        dead_end: impl Fn(&HttpResponse) -> Failure,
    ) -> Result<Followed<'d, T>> {
        let link = self.link;
        let mut url = start.to_string();
        let mut hops: Vec<&Exchange> = Vec::new();
        for _ in 0..self.max_hops {
            if !self.may_fetch(&url) {
                return Err(Failure::unsupported(format!(
                    "{link} leads to {url}, off the hosts it may go through"
                )));
            }
            let Some(exchange) = done.iter().rev().find(|e| e.request.url == url) else {
                return Ok(Followed::Fetch(request(&url, &hops)));
            };
            hops.push(exchange);
            let response = &exchange.response;
            let Some(location) = response.location().filter(|_| response.is_redirect()) else {
                return Err(dead_end(response));
            };
            let landing = InputUrl::parse(&location)?;
            match land(&landing) {
                Landing::Arrived(post) => return Ok(Followed::Arrived { post, hops }),
                Landing::Hop(next) => url = next,
                Landing::Failed(failure) => return Err(failure),
                Landing::Elsewhere => {
                    return Err(Failure::unsupported(format!(
                        "{link} leads to {}{}, which is not {}",
                        landing.host,
                        landing.url.path(),
                        self.post
                    )));
                }
            }
        }
        Err(Failure::unsupported(format!(
            "{link} redirects more than {} times",
            self.max_hops
        )))
    }

    fn may_fetch(&self, url: &str) -> bool {
        InputUrl::parse(url).is_ok_and(|u| u.url.scheme() == "https" && u.host_in(self.hosts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Header;

    const LINKS: ShortLinks = ShortLinks {
        link: "the short link",
        post: "a post",
        max_hops: 2,
        hosts: &["s.example.com"],
    };

    fn hop(url: &str, status: u16, location: Option<&str>) -> Exchange {
        Exchange {
            request: HttpRequest::get(url).no_redirects(),
            response: HttpResponse {
                request_url: url.into(),
                final_url: url.into(),
                status,
                headers: location
                    .map(|l| vec![Header::new("Location", l)])
                    .unwrap_or_default(),
                body: vec![],
            },
        }
    }

    fn walk(done: &[Exchange]) -> Result<Followed<'_, String>> {
        LINKS.follow(
            "https://s.example.com/a",
            done,
            |url, hops| HttpRequest::get(format!("{url}#{}", hops.len())),
            |u| match u.path("/v/{id}") {
                Some(c) if u.host == "example.com" => {
                    Landing::Arrived(c.get("id").unwrap_or_default().into())
                }
                _ if u.path("/{code}").is_some() => Landing::Hop(u.url.to_string()),
                _ => Landing::Elsewhere,
            },
        )
    }

    #[test]
    fn second_hop_is_requested_with_the_first_in_hand() {
        let done = [hop("https://s.example.com/a", 301, Some("/b"))];
        assert_eq!(
            walk(&done),
            Ok(Followed::Fetch(HttpRequest::get(
                "https://s.example.com/b#1"
            )))
        );
    }

    #[test]
    fn failures_say_why() {
        let one =
            |status, location| walk(&[hop("https://s.example.com/a", status, location)]).err();
        assert!(matches!(one(429, None), Some(Failure::RateLimited(_))));
        assert!(matches!(one(503, None), Some(Failure::UpstreamError(_))));
        assert!(
            matches!(one(200, None), Some(Failure::UnsupportedUrl(m)) if m.contains("does not redirect"))
        );
        assert!(
            matches!(one(302, Some("https://example.com/u/x/y")), Some(Failure::UnsupportedUrl(m)) if m.contains("not a post"))
        );
        assert!(
            matches!(one(302, Some("https://evil.example.net/b")), Some(Failure::UnsupportedUrl(m)) if m.contains("off the hosts"))
        );
        let looping = [
            hop("https://s.example.com/a", 302, Some("/b")),
            hop("https://s.example.com/b", 302, Some("/a")),
        ];
        assert!(
            matches!(walk(&looping), Err(Failure::UnsupportedUrl(m)) if m.contains("more than 2"))
        );
    }
}

//! Following a Meta share link (`/share/{id}/`) hop by hop with the SDK's
//! short-link walk ([`mediaparse_sdk::links`]), with Meta's own reading of
//! a dead end: a gone code is unavailable, a page instead of a redirect is
//! a changed upstream, and each site says what its home or login page
//! means.

use mediaparse_sdk::links::{Followed, Landing, ShortLinks};
use mediaparse_sdk::urls::InputUrl;
use mediaparse_sdk::{Exchange, Failure, HttpRequest, HttpResponse, Result};

/// Redirect hops a share link may take before it must name a post.
pub const MAX_HOPS: usize = 3;

/// How one site's share links behave.
pub struct ShareLinks<'a, T> {
    /// The site's name in messages ("Instagram").
    pub site: &'a str,
    /// The origin later hops are requested on (`https://www.instagram.com`).
    pub www: &'a str,
    /// Hosts a hop may lead to; anywhere else is a dead end.
    pub hosts: &'a [&'a str],
    /// The hop request for a URL (its UA and accept headers; redirects off).
    pub request: fn(&str) -> HttpRequest,
    /// What a landing path names, when it names a post.
    pub arrived: fn(&[&str]) -> Option<T>,
    /// The failure for a landing that is neither a post nor another share
    /// hop: `first` is its first path segment, `path` the whole path.
    pub dead_end: fn(first: Option<&str>, path: &str) -> Failure,
}

/// The next hop to request, or what the link arrived at.
#[derive(Debug, PartialEq)]
pub enum Hop<T> {
    /// Request this (a redirect-less GET) next.
    Next(HttpRequest),
    /// The link names this post.
    Arrived(T),
}

impl<T> ShareLinks<'_, T> {
    /// Follow the link from `start`, given the hops recorded in `done`.
    pub fn follow(&self, start: &str, done: &[Exchange]) -> Result<Hop<T>> {
        let walk = ShortLinks {
            link: "the share link",
            post: "a post",
            max_hops: MAX_HOPS,
            hosts: &[self.www.trim_start_matches("https://")],
        };
        let request = |url: &str, _: &[&Exchange]| (self.request)(url);
        match walk.follow_judging(
            start,
            done,
            request,
            |u| self.land(u),
            |r| self.no_redirect(r),
        )? {
            Followed::Fetch(request) => Ok(Hop::Next(request)),
            Followed::Arrived { post, .. } => Ok(Hop::Arrived(post)),
        }
    }

    /// A hop that did not redirect: a gone code is unavailable, a page is a
    /// changed upstream.
    fn no_redirect(&self, response: &HttpResponse) -> Failure {
        match response.status {
            404 | 410 => Failure::unavailable("the share link does not exist"),
            429 => Failure::RateLimited(format!("{} is rate-limiting share links", self.site)),
            _ if response.is_redirect() => {
                Failure::changed("the share link redirected without a Location")
            }
            status => Failure::changed(format!(
                "the share link answered HTTP {status} instead of redirecting"
            )),
        }
    }

    /// Where a redirect led: a post, another share hop (asked of the site's
    /// own origin), or a dead end (as the site reads it).
    fn land(&self, url: &InputUrl) -> Landing<T> {
        if !url.host_in(self.hosts) {
            return Landing::Failed(Failure::unavailable(format!(
                "the share link leads off {} ({})",
                self.site, url.host
            )));
        }
        let segs: Vec<&str> = url.segments.iter().map(String::as_str).collect();
        if let Some(found) = (self.arrived)(&segs) {
            return Landing::Arrived(found);
        }
        match segs.first() {
            Some(&"share") => {
                let mut next = format!("{}{}", self.www, url.url.path());
                if let Some(q) = url.url.query() {
                    next.push('?');
                    next.push_str(q);
                }
                Landing::Hop(next)
            }
            first => Landing::Failed((self.dead_end)(first.copied(), url.url.path())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::{Header, HttpResponse};

    fn links() -> ShareLinks<'static, String> {
        ShareLinks {
            site: "Example",
            www: "https://www.example.com",
            hosts: &["www.example.com"],
            request: |url| HttpRequest::get(url).no_redirects(),
            arrived: |segs| match segs {
                ["p", code] => Some(code.to_string()),
                _ => None,
            },
            dead_end: |_, path| Failure::unavailable(format!("the share link leads to {path}")),
        }
    }

    fn hop(url: &str, status: u16, location: Option<&str>) -> Exchange {
        let headers = location
            .map(|l| vec![Header::new("Location", l)])
            .unwrap_or_default();
        Exchange {
            request: HttpRequest::get(url).no_redirects(),
            response: HttpResponse {
                request_url: url.into(),
                final_url: url.into(),
                status,
                headers,
                body: vec![],
            },
        }
    }

    #[test]
    fn follows_share_hops_until_a_post() {
        let start = "https://www.example.com/share/a/";
        let Ok(Hop::Next(first)) = links().follow(start, &[]) else {
            panic!("first hop")
        };
        assert_eq!(first.url, start);
        assert!(!first.follow_redirects);
        let done = [hop(
            start,
            302,
            Some("https://www.example.com/share/b/?x=1"),
        )];
        let Ok(Hop::Next(second)) = links().follow(start, &done) else {
            panic!("second hop")
        };
        assert_eq!(second.url, "https://www.example.com/share/b/?x=1");
        let done = [
            done[0].clone(),
            hop(&second.url, 301, Some("https://www.example.com/p/C0de/")),
        ];
        assert_eq!(
            links().follow(start, &done),
            Ok(Hop::Arrived("C0de".to_string()))
        );
    }

    #[test]
    fn dead_ends_are_failures() {
        let start = "https://www.example.com/share/a/";
        let failure = |status, location| {
            links()
                .follow(start, &[hop(start, status, location)])
                .map(|_| ())
                .unwrap_err()
        };
        assert!(matches!(failure(429, None), Failure::RateLimited(_)));
        assert!(matches!(failure(404, None), Failure::Unavailable(_)));
        assert!(matches!(failure(200, None), Failure::UpstreamChanged(_)));
        assert!(matches!(failure(302, None), Failure::UpstreamChanged(_)));
        let off_site = failure(302, Some("https://evil.test/p/x"));
        assert!(matches!(off_site, Failure::Unavailable(m) if m.contains("off Example")));
        let profile = failure(302, Some("https://www.example.com/u/x"));
        assert!(matches!(profile, Failure::Unavailable(m) if m.contains("/u/x")));
        let circle = Some("https://www.example.com/share/a/");
        let done: Vec<Exchange> = (0..MAX_HOPS).map(|_| hop(start, 302, circle)).collect();
        assert!(matches!(
            links().follow(start, &done),
            Err(Failure::UnsupportedUrl(m)) if m.contains("more than 3")
        ));
    }
}

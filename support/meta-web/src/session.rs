//! The anonymous session a Meta homepage hands out: its cookies, the CSRF
//! token among them, and the LSD token the GraphQL endpoints want echoed.

use mediaparse_sdk::cookies::{jar, join};
use mediaparse_sdk::{Exchange, HttpRequest};

use crate::page::lsd_token;

/// How long the host may reuse a homepage answer (cookies + LSD), seconds.
pub const SESSION_TTL: u32 = 1800;

/// What the homepage answer gives a logged-out visitor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    /// Every cookie set, last value per name, as one `Cookie` header value.
    pub cookie: String,
    /// The `csrftoken` cookie, when set and not empty.
    pub csrf: Option<String>,
    /// The page's LSD token (only read from a successful answer).
    pub lsd: Option<String>,
}

impl Session {
    /// Read the session from the homepage exchange.
    ///
    /// ```
    /// use mediaparse_sdk::{Exchange, Header, HttpRequest, HttpResponse};
    /// let response = HttpResponse {
    ///     request_url: "https://www.threads.com/".into(), final_url: "https://www.threads.com/".into(), status: 200,
    ///     headers: vec![Header::new("Set-Cookie", "csrftoken=old; Path=/"), Header::new("Set-Cookie", "mid=m1"),
    ///                   Header::new("Set-Cookie", "csrftoken=t0k; Path=/")],
    ///     body: br#"<script>["LSD",[],{"token":"AVq1"},323]</script>"#.to_vec(),
    /// };
    /// let home = Exchange { request: HttpRequest::get("https://www.threads.com/"), response };
    /// let session = mediaparse_meta_web::session::Session::read(&home);
    /// assert_eq!(session.cookie, "csrftoken=t0k; mid=m1");
    /// assert_eq!(session.csrf.as_deref(), Some("t0k"));
    /// assert_eq!(session.lsd.as_deref(), Some("AVq1"));
    /// ```
    pub fn read(home: &Exchange) -> Session {
        let jar = jar([&home.response]);
        let csrf = jar
            .iter()
            .find(|(n, _)| n == "csrftoken")
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty());
        let lsd = if home.response.is_success() {
            lsd_token(&home.response.text())
        } else {
            None
        };
        Session {
            cookie: join(&jar),
            csrf,
            lsd,
        }
    }

    /// Add the session's cookie (when there is one) to a request.
    pub fn with_cookie(&self, request: HttpRequest) -> HttpRequest {
        if self.cookie.is_empty() {
            request
        } else {
            request.header("Cookie", &self.cookie)
        }
    }
}

/// The browser navigation to a Meta homepage that opens a session; the
/// host may reuse its answer for [`SESSION_TTL`].
pub fn home_request(url: &str, user_agent: &str) -> HttpRequest {
    document_request(url, user_agent)
        .header("Upgrade-Insecure-Requests", "1")
        .cache_for(SESSION_TTL)
}

/// A top-level browser navigation to a Meta page.
pub fn document_request(url: &str, user_agent: &str) -> HttpRequest {
    HttpRequest::get(url)
        .header("User-Agent", user_agent)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header("Accept-Language", "en-US,en;q=0.9")
        .header("Sec-Fetch-Dest", "document")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Site", "none")
}

//! Meta's logged-out web GraphQL endpoint (`/api/graphql`): a form-encoded
//! persisted query (`doc_id`) sent with the homepage session's LSD token.

use mediaparse_sdk::fields::RawValue;
use mediaparse_sdk::{Context, Exchange, Failure, HttpRequest};

use crate::cascade::{Judged, Next, miss, strategy};
use crate::session::Session;

/// The `X-ASBD-ID` both Instagram and Threads web send.
pub const ASBD_ID: &str = "359341";

/// One persisted query as a site's web app sends it.
pub struct Query<'a> {
    /// The endpoint, e.g. `https://www.threads.com/api/graphql`.
    pub endpoint: &'a str,
    /// The site's origin, e.g. `https://www.threads.com`.
    pub origin: &'a str,
    /// The web app id (`X-IG-App-ID`).
    pub app_id: &'a str,
    /// The query's friendly name (`fb_api_req_friendly_name`).
    pub friendly_name: &'a str,
    /// The persisted query id; the operator's `doc_id` config entry wins.
    pub doc_id: &'a str,
    /// Form pairs sent before the common ones (Threads' `av`, `__user`, `__a`).
    pub leading_pairs: &'a [(&'a str, &'a str)],
    /// Headers beyond the common ones.
    pub extra_headers: &'a [(&'a str, &'a str)],
    /// The `User-Agent` of the web app.
    pub user_agent: &'a str,
}

impl Query<'_> {
    /// The form body for `variables` (a JSON object as text).
    ///
    /// ```
    /// use mediaparse_meta_web::graphql::Query;
    /// let q = Query { endpoint: "https://x.test/api/graphql", origin: "https://x.test", app_id: "1",
    ///                 friendly_name: "Q", doc_id: "42", leading_pairs: &[("av", "0")], extra_headers: &[],
    ///                 user_agent: "UA" };
    /// let ctx = mediaparse_sdk::Context::default();
    /// assert_eq!(q.body("L", r#"{"id":"7"}"#, &ctx),
    ///     "av=0&lsd=L&fb_api_caller_class=RelayModern&fb_api_req_friendly_name=Q&server_timestamps=true&variables=%7B%22id%22%3A%227%22%7D&doc_id=42");
    /// ```
    pub fn body(&self, lsd: &str, variables: &str, ctx: &Context) -> String {
        let doc_id = ctx.config("doc_id").unwrap_or(self.doc_id);
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in self.leading_pairs {
            form.append_pair(name, value);
        }
        form.append_pair("lsd", lsd)
            .append_pair("fb_api_caller_class", "RelayModern")
            .append_pair("fb_api_req_friendly_name", self.friendly_name)
            .append_pair("server_timestamps", "true")
            .append_pair("variables", variables)
            .append_pair("doc_id", doc_id)
            .finish()
    }

    /// The POST carrying `body`, with the session's cookie and CSRF token.
    pub fn request(
        &self,
        session: &Session,
        lsd: &str,
        body: String,
        referer: &str,
    ) -> HttpRequest {
        let mut request = HttpRequest::post(self.endpoint, body)
            .header("User-Agent", self.user_agent)
            .header("Accept", "*/*")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Origin", self.origin)
            .header("Referer", referer)
            .header("X-IG-App-ID", self.app_id)
            .header("X-ASBD-ID", ASBD_ID)
            .header("X-FB-Friendly-Name", self.friendly_name)
            .header("X-FB-LSD", lsd)
            // Without these Meta answers error 1357055.
            .header("Sec-Fetch-Dest", "empty")
            .header("Sec-Fetch-Mode", "cors")
            .header("Sec-Fetch-Site", "same-origin");
        for (name, value) in self.extra_headers {
            request = request.header(*name, *value);
        }
        if let Some(csrf) = &session.csrf {
            request = request.header("X-CSRFToken", csrf);
        }
        session.with_cookie(request)
    }

    /// The GraphQL strategy of a cascade: this query for `variables` with
    /// the session the homepage answer `home` opened, judged by `judge`; a
    /// miss when the homepage gave no LSD token.
    pub fn strategy<T>(
        &self,
        home: &Exchange,
        variables: &str,
        referer: &str,
        ctx: &Context,
        done: &[Exchange],
        judge: impl FnOnce(&Exchange) -> Judged<T>,
    ) -> Judged<Next<T>> {
        let session = Session::read(home);
        let Some(lsd) = &session.lsd else {
            return miss(Failure::upstream(format!(
                "the homepage gave no LSD token (HTTP {})",
                home.response.status
            )));
        };
        let body = self.body(lsd, variables, ctx);
        let answer = self.answer(done, &body);
        strategy(
            answer,
            || self.request(&session, lsd, body.clone(), referer),
            judge,
        )
    }

    /// The answer to exactly this body, if it was fetched.
    pub fn answer<'e>(&self, done: &'e [Exchange], body: &str) -> Option<&'e Exchange> {
        done.iter().rev().find(|e| {
            e.request.url == self.endpoint && e.request.body.as_deref() == Some(body.as_bytes())
        })
    }
}

/// A JSON answer, without Meta's `for (;;);` anti-hijack prefix.
///
/// ```
/// use mediaparse_meta_web::graphql::strip_hijack_prefix;
/// assert_eq!(strip_hijack_prefix("  for (;;);{\"a\":1}"), "{\"a\":1}");
/// assert_eq!(strip_hijack_prefix("{}"), "{}");
/// ```
pub fn strip_hijack_prefix(text: &str) -> &str {
    let text = text.trim_start();
    text.strip_prefix("for (;;);").unwrap_or(text)
}

/// The JSON text of an answer's body `text` (prefix stripped), borrowed;
/// `None` when it is not JSON.
///
/// ```
/// use mediaparse_meta_web::graphql::json_text;
/// assert_eq!(json_text("for (;;);{\"a\":1} ").map(|r| r.get()), Some("{\"a\":1}"));
/// assert!(json_text("<html>").is_none());
/// ```
pub fn json_text(text: &str) -> Option<&RawValue> {
    serde_json::from_str(strip_hijack_prefix(text)).ok()
}

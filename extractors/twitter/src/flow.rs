//! The rounds (guide sections 3 and 6), re-derived from `done` on every
//! call: activate a guest token → GraphQL → (a fresh token → GraphQL) →
//! syndication → `TweetDetail` with the guest token; sensitive posts → the
//! operator's session, when configured.

use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::{Context, Exchange, Failure, HttpResponse, Result, Step, Target, ids};
use serde_json::Value;

use crate::map::{self, GqlAnswer, Outcome, Source, SyndicationKind};
use crate::{requests, urls};
use mediaparse_sdk::fields::RawValue;

fn is_activation(e: &Exchange) -> bool {
    e.request.url == requests::ACTIVATE_URL
}

fn is_graphql(e: &Exchange) -> bool {
    e.request.url.starts_with(requests::GRAPHQL_BASE)
        && e.request.url.contains("/TweetResultByRestId?")
}

fn is_detail(e: &Exchange) -> bool {
    e.request.url.starts_with(requests::GRAPHQL_BASE) && e.request.url.contains("/TweetDetail?")
}

fn is_session(e: &Exchange) -> bool {
    is_graphql(e) && e.request.header_value("x-twitter-auth-type").is_some()
}

fn guest_token(response: &HttpResponse) -> Option<String> {
    if !response.is_success() {
        return None;
    }
    let v: Value = response.json().ok()?;
    let token = ids::id_text(v.get("guest_token")?)?;
    (!token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(token)
}

/// What the fallbacks after GraphQL may use: the guest token X accepted
/// (`None` when activation failed or X refused the token twice).
struct Fallbacks<'a> {
    target: &'a Target,
    ctx: &'a Context,
    done: &'a [Exchange],
    token: Option<&'a str>,
}

impl Fallbacks<'_> {
    /// The syndication step: fetch it, or judge its answer. `why` is what
    /// the GraphQL path failed with, used when nothing after it says better.
    /// A 404 or a tombstone is final; a failed or unreadable answer moves on
    /// to `TweetDetail`.
    fn syndication(&self, why: Failure) -> Result<Step> {
        let Some(exchange) = self.done.last_to(requests::SYNDICATION_URL) else {
            return Ok(Step::one(requests::syndication(&self.target.id)));
        };
        let response = &exchange.response;
        match response.status {
            200..=299 => {}
            404 => {
                return Err(match why {
                    Failure::LoginRequired(_) => why,
                    _ => Failure::unavailable("the post does not exist or was deleted"),
                });
            }
            429 => {
                return self.tweet_detail(Failure::RateLimited(
                    "X rate-limits both GraphQL and syndication".into(),
                ));
            }
            _ => return self.tweet_detail(why),
        }
        let Ok(post) = mediaparse_sdk::fields::from_text::<&RawValue>(
            std::str::from_utf8(&response.body).unwrap_or_default(),
            "the syndication answer",
        ) else {
            return self.tweet_detail(why);
        };
        match map::syndication_kind(post) {
            SyndicationKind::Tombstone => Err(match why {
                Failure::Unavailable(_) | Failure::LoginRequired(_) => why,
                // The syndication answer for sensitive posts is a bare tombstone.
                _ => Failure::LoginRequired(
                    "the post is hidden from guests (sensitive media)".into(),
                ),
            }),
            SyndicationKind::Post => Ok(Step::Done(map::extraction(&Source::Syndication(post))?)),
            SyndicationKind::Unknown => self.tweet_detail(why),
        }
    }

    /// The last guest fallback: the post's conversation (`TweetDetail`),
    /// another GraphQL operation with its own rate limit, as cobalt asks it.
    /// Without an accepted guest token there is nothing to ask with.
    fn tweet_detail(&self, why: Failure) -> Result<Step> {
        let Some(token) = self.token else {
            return Err(why);
        };
        let Some(exchange) = self.done.last_where(is_detail) else {
            return Ok(Step::one(requests::tweet_detail_guest(
                &self.target.id,
                token,
                self.ctx,
            )));
        };
        match map::read_tweet_detail(&exchange.response, &self.target.id) {
            GqlAnswer::Result(Outcome::Post(post)) => {
                Ok(Step::Done(map::extraction(&Source::GraphQl(post))?))
            }
            GqlAnswer::Result(Outcome::Gone(gone)) => Err(Failure::unavailable(gone)),
            GqlAnswer::Result(Outcome::Sensitive(sensitive)) => {
                session_step(self.target, self.ctx, self.done, sensitive)
            }
            GqlAnswer::Result(Outcome::Missing) | GqlAnswer::BadToken | GqlAnswer::Fallback(_) => {
                Err(why)
            }
        }
    }
}

/// The whole strategy (guide section 3 and 6):
/// activate → GraphQL → (fresh token → GraphQL) → syndication →
/// `TweetDetail`; sensitive posts → the operator's session, when configured.
pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    if !urls::is_post_id(&target.id) {
        return Err(Failure::unsupported("not an X post id"));
    }
    let activations: Vec<usize> = (0..done.len())
        .filter(|&i| is_activation(&done[i]))
        .collect();
    let Some(&last_activation) = activations.last() else {
        return Ok(Step::one(requests::activate(ctx, false)));
    };
    let Some(token) = guest_token(&done[last_activation].response) else {
        let why = match done[last_activation].response.status {
            429 => Failure::RateLimited("X refused to activate a guest token (429)".into()),
            s => Failure::upstream(format!("guest token activation failed (HTTP {s})")),
        };
        let fallbacks = Fallbacks {
            target,
            ctx,
            done,
            token: None,
        };
        return fallbacks.syndication(why);
    };
    let mut fallbacks = Fallbacks {
        target,
        ctx,
        done,
        token: Some(&token),
    };
    let guest = done[last_activation..]
        .iter()
        .find(|e| is_graphql(e) && !is_session(e));
    let Some(guest) = guest else {
        return Ok(Step::one(requests::graphql_guest(&target.id, &token, ctx)));
    };
    match map::read_graphql(&guest.response) {
        GqlAnswer::Result(Outcome::Post(post)) => {
            Ok(Step::Done(map::extraction(&Source::GraphQl(post))?))
        }
        GqlAnswer::Result(Outcome::Gone(why)) => Err(Failure::unavailable(why)),
        GqlAnswer::Result(Outcome::Missing) => fallbacks.syndication(Failure::unavailable(
            "the post does not exist or was deleted",
        )),
        GqlAnswer::Result(Outcome::Sensitive(why)) => session_step(target, ctx, done, why),
        GqlAnswer::BadToken if activations.len() == 1 => {
            // Possibly a stale cached token: activate a fresh one, once.
            Ok(Step::one(requests::activate(ctx, true)))
        }
        GqlAnswer::BadToken => {
            // Refused twice: `TweetDetail` would be refused the same way.
            fallbacks.token = None;
            fallbacks.syndication(Failure::RateLimited("X refused the guest token".into()))
        }
        GqlAnswer::Fallback(why) => fallbacks.syndication(why),
    }
}

/// Sensitive media: only a logged-in session sees it.
fn session_step(target: &Target, ctx: &Context, done: &[Exchange], why: String) -> Result<Step> {
    let Some(cookie) = ctx.config("cookie") else {
        return Err(Failure::LoginRequired(why));
    };
    let Some(ct0) = requests::cookie_ct0(cookie) else {
        return Err(Failure::LoginRequired(format!(
            "{why}; the operator cookie has no ct0"
        )));
    };
    let Some(session) = done.last_where(is_session) else {
        return Ok(Step::one(requests::graphql_session(
            &target.id, cookie, ct0, ctx,
        )));
    };
    match map::read_graphql(&session.response) {
        GqlAnswer::Result(Outcome::Post(post)) => {
            Ok(Step::Done(map::extraction(&Source::GraphQl(post))?))
        }
        GqlAnswer::Result(Outcome::Gone(why)) => Err(Failure::unavailable(why)),
        GqlAnswer::Result(Outcome::Missing) => Err(Failure::unavailable(
            "the post does not exist or was deleted",
        )),
        GqlAnswer::Result(Outcome::Sensitive(_)) | GqlAnswer::BadToken => Err(
            Failure::LoginRequired(format!("{why}; the operator session was not accepted")),
        ),
        GqlAnswer::Fallback(f) => Err(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Twitter;
    use mediaparse_sdk::testing::exchange as answer;
    use mediaparse_sdk::{Extractor, HttpRequest, Plan};

    fn next(target: &Target, ctx: &Context, done: &[Exchange]) -> HttpRequest {
        match Twitter::plan(target, ctx, done) {
            Ok(Plan::Fetch(mut batch)) if batch.len() == 1 => batch.remove(0),
            other => panic!("expected one request, got {other:?}"),
        }
    }

    #[test]
    fn refused_guest_token_is_renewed_once_then_syndication() {
        let target =
            Twitter::detect("https://x.com/jack/status/20").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context::default();
        let mut done = Vec::new();

        let act = next(&target, &ctx, &done);
        assert_eq!(act.url, requests::ACTIVATE_URL);
        assert_eq!(act.cache_ttl_seconds, requests::GUEST_TOKEN_TTL);
        done.push(answer(act, 200, r#"{"guest_token":"111"}"#));

        let gql = next(&target, &ctx, &done);
        assert_eq!(gql.header_value("x-guest-token"), Some("111"));
        done.push(answer(
            gql,
            403,
            r#"{"errors":[{"code":239,"message":"Bad guest token."}]}"#,
        ));

        let fresh = next(&target, &ctx, &done);
        assert_eq!(fresh.url, requests::ACTIVATE_URL);
        assert_eq!(
            fresh.cache_ttl_seconds, 0,
            "the retry must bypass the host cache"
        );
        done.push(answer(fresh, 200, r#"{"guest_token":"222"}"#));

        let gql = next(&target, &ctx, &done);
        assert_eq!(gql.header_value("x-guest-token"), Some("222"));
        done.push(answer(
            gql,
            200,
            r#"{"errors":[{"code":239,"message":"Bad guest token."}]}"#,
        ));

        let synd = next(&target, &ctx, &done);
        assert_eq!(
            synd.url,
            "https://cdn.syndication.twimg.com/tweet-result?id=20&token=6dq1a2xwd93"
        );
        done.push(answer(synd, 503, ""));
        match Twitter::plan(&target, &ctx, &done) {
            Err(f) => assert_eq!(f.code(), "upstream_rate_limited"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn tweet_detail_follows_a_failed_syndication_and_keeps_its_failure() {
        let target =
            Twitter::detect("https://x.com/jack/status/20").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context::default();
        let mut done = Vec::new();
        let act = next(&target, &ctx, &done);
        done.push(answer(act, 200, r#"{"guest_token":"111"}"#));
        let gql = next(&target, &ctx, &done);
        done.push(answer(gql, 429, ""));
        let synd = next(&target, &ctx, &done);
        assert!(synd.url.starts_with(requests::SYNDICATION_URL));
        done.push(answer(synd, 429, ""));

        let detail = next(&target, &ctx, &done);
        assert!(
            detail.url.starts_with(
                "https://api.x.com/graphql/4Siu98E55GquhG52zHdY5w/TweetDetail?variables=%7B%22focalTweetId%22%3A%2220%22"
            ),
            "{}",
            detail.url
        );
        assert_eq!(detail.header_value("x-guest-token"), Some("111"));
        // A conversation without the post: the syndication failure stands.
        done.push(answer(
            detail,
            200,
            r#"{"data":{"threaded_conversation_with_injections_v2":{"instructions":[{"type":"TimelineAddEntries","entries":[]}]}}}"#,
        ));
        match Twitter::plan(&target, &ctx, &done) {
            Err(f) => assert_eq!(f.code(), "upstream_rate_limited"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn tweet_detail_tombstone_with_text_is_unavailable() {
        let target =
            Twitter::detect("https://x.com/jack/status/20").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context::default();
        let mut done = Vec::new();
        let act = next(&target, &ctx, &done);
        done.push(answer(act, 200, r#"{"guest_token":"111"}"#));
        let gql = next(&target, &ctx, &done);
        done.push(answer(gql, 404, ""));
        let synd = next(&target, &ctx, &done);
        done.push(answer(synd, 500, ""));
        let detail = next(&target, &ctx, &done);
        done.push(answer(
            detail,
            200,
            r#"{"data":{"threaded_conversation_with_injections_v2":{"instructions":[{"type":"TimelineAddEntries","entries":[{"entryId":"tweet-20","content":{"itemContent":{"tweet_results":{"result":{"__typename":"TweetTombstone","tombstone":{"text":{"text":"This Post was deleted by the Post author."}}}}}}}]}]}}}"#,
        ));
        match Twitter::plan(&target, &ctx, &done) {
            Err(f) => assert_eq!(f.code(), "content_unavailable"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn no_tweet_detail_without_an_accepted_token() {
        let target =
            Twitter::detect("https://x.com/jack/status/20").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context::default();
        let act = next(&target, &ctx, &[]);
        let mut done = vec![answer(act, 429, "")];
        let synd = next(&target, &ctx, &done);
        done.push(answer(synd, 500, ""));
        match Twitter::plan(&target, &ctx, &done) {
            Err(f) => assert_eq!(f.code(), "upstream_rate_limited"),
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn failed_activation_goes_to_syndication() {
        let target =
            Twitter::detect("https://x.com/jack/status/20").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context::default();
        let act = next(&target, &ctx, &[]);
        let done = vec![answer(act, 429, "")];
        let synd = next(&target, &ctx, &done);
        assert!(synd.url.starts_with(requests::SYNDICATION_URL));
    }

    #[test]
    fn operator_cookie_is_not_sent_to_guests() {
        let target =
            Twitter::detect("https://x.com/jack/status/20").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context {
            now_unix_ms: 0,
            config: vec![mediaparse_sdk::Header::new("cookie", "auth_token=a; ct0=b")],
            remembered: Vec::new(),
        };
        let act = next(&target, &ctx, &[]);
        assert!(act.header_value("cookie").is_none());
        let done = vec![answer(act, 200, r#"{"guest_token":"111"}"#)];
        let gql = next(&target, &ctx, &done);
        assert!(
            !gql.header_value("cookie")
                .unwrap_or_default()
                .contains("auth_token")
        );
    }
}

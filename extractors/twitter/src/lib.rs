//! X / Twitter: guest-token GraphQL `TweetResultByRestId` (primary), the
//! syndication `tweet-result` endpoint (fallback), and the operator's
//! session cookie for sensitive media only. See `docs/platforms/twitter.md`.

pub mod detect;
pub mod requests;
pub mod token;
pub mod tweet;

use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, HttpRequest, HttpResponse, Info, Plan,
    Result, Target,
};
use serde_json::Value;
use tweet::Outcome;

pub const PLATFORM: &str = "twitter";

pub struct Twitter;

/// Where the post comes from once it is known.
enum Source {
    GraphQl(Value),
    Syndication(Value),
}

/// One step of the strategy, re-derived from the exchanges on every call.
enum Step {
    Fetch(HttpRequest),
    Use(Box<Source>),
}

fn is_activation(e: &Exchange) -> bool {
    e.request.url == requests::ACTIVATE_URL
}

fn is_graphql(e: &Exchange) -> bool {
    e.request.url.starts_with(requests::GRAPHQL_BASE)
}

fn is_session(e: &Exchange) -> bool {
    is_graphql(e) && e.request.header_value("x-twitter-auth-type").is_some()
}

fn guest_token(response: &HttpResponse) -> Option<String> {
    if !response.is_success() {
        return None;
    }
    let v: Value = response.json().ok()?;
    let token = match v.get("guest_token")? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    (!token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(token)
}

/// What a GraphQL answer means for the strategy.
enum GqlAnswer {
    Result(Outcome),
    /// The guest token was refused (401/403, "Bad guest token").
    BadToken,
    /// Failed in a way syndication may get around; the failure is the
    /// answer when it does not.
    Fallback(Failure),
}

fn read_graphql(response: &HttpResponse) -> GqlAnswer {
    let envelope: Option<tweet::Envelope> = response.json().ok();
    let bad_token = envelope.as_ref().is_some_and(|e| {
        e.errors
            .iter()
            .any(|err| err.code == Some(239) || err.message.contains("Bad guest token"))
    });
    match response.status {
        401 | 403 => return GqlAnswer::BadToken,
        429 => {
            return GqlAnswer::Fallback(Failure::RateLimited(
                "X answered 429 Too Many Requests".into(),
            ));
        }
        400 | 404 | 422 => {
            return GqlAnswer::Fallback(Failure::changed(format!(
                "X GraphQL answered HTTP {} (stale query id or feature flags?)",
                response.status
            )));
        }
        s if !(200..300).contains(&s) => {
            return GqlAnswer::Fallback(Failure::upstream(format!("X GraphQL answered HTTP {s}")));
        }
        _ => {}
    }
    if bad_token {
        return GqlAnswer::BadToken;
    }
    match envelope {
        // `errors` next to data ("Dependency: Unspecified") is ignored when
        // the data is there (yt-dlp #15963).
        Some(tweet::Envelope {
            data: Some(tweet::Data {
                tweet_result: Some(holder),
            }),
            ..
        }) => GqlAnswer::Result(tweet::classify(holder.result)),
        Some(tweet::Envelope { data: Some(_), .. }) => GqlAnswer::Result(Outcome::Missing),
        Some(e) if !e.errors.is_empty() => GqlAnswer::Fallback(Failure::upstream(format!(
            "X GraphQL error: {}",
            e.errors
                .iter()
                .map(|x| x.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
        _ => GqlAnswer::Fallback(Failure::changed(
            "X GraphQL answer is not the expected JSON",
        )),
    }
}

/// The syndication step: fetch it, or judge its answer. `why` is what the
/// GraphQL path failed with, used when syndication cannot say better.
fn syndication_step(target: &Target, done: &[Exchange], why: Failure) -> Result<Step> {
    let Some(exchange) = done
        .iter()
        .rev()
        .find(|e| e.request.url.starts_with(requests::SYNDICATION_URL))
    else {
        return Ok(Step::Fetch(requests::syndication(&target.id)));
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
            return Err(Failure::RateLimited(
                "X rate-limits both GraphQL and syndication".into(),
            ));
        }
        _ => return Err(why),
    }
    let Ok(post) = response.json::<Value>() else {
        return Err(why);
    };
    match post.get("__typename").and_then(Value::as_str) {
        Some("TweetTombstone") => Err(match why {
            Failure::Unavailable(_) | Failure::LoginRequired(_) => why,
            // The syndication answer for sensitive posts is a bare tombstone.
            _ => Failure::LoginRequired("the post is hidden from guests (sensitive media)".into()),
        }),
        _ if post.get("id_str").and_then(Value::as_str).is_some() => {
            Ok(Step::Use(Box::new(Source::Syndication(post))))
        }
        _ => Err(why),
    }
}

/// The whole strategy (guide section 3 and 6):
/// activate → GraphQL → (fresh token → GraphQL) → syndication;
/// sensitive posts → the operator's session, when configured.
fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    let activations: Vec<usize> = (0..done.len())
        .filter(|&i| is_activation(&done[i]))
        .collect();
    let Some(&last_activation) = activations.last() else {
        return Ok(Step::Fetch(requests::activate(ctx, false)));
    };
    let Some(token) = guest_token(&done[last_activation].response) else {
        let why = match done[last_activation].response.status {
            429 => Failure::RateLimited("X refused to activate a guest token (429)".into()),
            s => Failure::upstream(format!("guest token activation failed (HTTP {s})")),
        };
        return syndication_step(target, done, why);
    };
    let guest = done[last_activation..]
        .iter()
        .find(|e| is_graphql(e) && !is_session(e));
    let Some(guest) = guest else {
        return Ok(Step::Fetch(requests::graphql_guest(
            &target.id, &token, ctx,
        )));
    };
    match read_graphql(&guest.response) {
        GqlAnswer::Result(Outcome::Post(post)) => Ok(Step::Use(Box::new(Source::GraphQl(post)))),
        GqlAnswer::Result(Outcome::Gone(why)) => Err(Failure::unavailable(why)),
        GqlAnswer::Result(Outcome::Missing) => syndication_step(
            target,
            done,
            Failure::unavailable("the post does not exist or was deleted"),
        ),
        GqlAnswer::Result(Outcome::Sensitive(why)) => session_step(target, ctx, done, why),
        GqlAnswer::BadToken if activations.len() == 1 => {
            // Possibly a stale cached token: activate a fresh one, once.
            Ok(Step::Fetch(requests::activate(ctx, true)))
        }
        GqlAnswer::BadToken => syndication_step(
            target,
            done,
            Failure::RateLimited("X refused the guest token".into()),
        ),
        GqlAnswer::Fallback(why) => syndication_step(target, done, why),
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
    let Some(session) = done.iter().rev().find(|e| is_session(e)) else {
        return Ok(Step::Fetch(requests::graphql_session(
            &target.id, cookie, ct0, ctx,
        )));
    };
    match read_graphql(&session.response) {
        GqlAnswer::Result(Outcome::Post(post)) => Ok(Step::Use(Box::new(Source::GraphQl(post)))),
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

impl Extractor for Twitter {
    fn info() -> Info {
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec!["*.x.com".into(), "*.twitter.com".into()],
            api_hosts: vec![requests::API_HOST.into(), requests::SYNDICATION_HOST.into()],
            url_shapes: vec![
                "/{user}/status/{id}".into(),
                "/{user}/status/{id}/video/{n}".into(),
                "/{user}/status/{id}/photo/{n}".into(),
                "/i/status/{id}".into(),
                "/i/web/status/{id}".into(),
                "/u/{user}/{id}".into(),
            ],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let id = detect::post_id(input)?;
        Ok(Target {
            platform: PLATFORM.into(),
            canonical_url: format!("https://x.com/i/status/{id}"),
            id,
            input: input.into(),
        })
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        if !detect::is_post_id(&target.id) {
            return Err(Failure::unsupported("not an X post id"));
        }
        Ok(match step(target, ctx, done)? {
            Step::Fetch(request) => Plan::one(request),
            Step::Use(_) => Plan::Ready,
        })
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        let source = match step(target, ctx, done)? {
            Step::Use(source) => *source,
            Step::Fetch(_) => {
                return Err(Failure::upstream("map called before the post was fetched"));
            }
        };
        let (media, data) = match &source {
            Source::GraphQl(post) => tweet::from_graphql(post)?,
            Source::Syndication(post) => tweet::from_syndication(post)?,
        };
        let mut data = match data {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        fill_missing_members(PLATFORM, &mut data);
        Ok(Extraction {
            media,
            platform_data: Value::Object(data),
        })
    }
}

mediaparse_sdk::export_extractor!(Twitter);

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(request: HttpRequest, status: u16, body: &str) -> Exchange {
        Exchange {
            response: HttpResponse {
                request_url: request.url.clone(),
                final_url: request.url.clone(),
                status,
                headers: Vec::new(),
                body: body.as_bytes().to_vec(),
            },
            request,
        }
    }

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

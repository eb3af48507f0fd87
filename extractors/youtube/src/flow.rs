//! The rounds: the configured clients in order (`clients`; today VISIONOS,
//! ANDROID, WEB), each asked only when the ones before it gave an answer
//! that is unusable for a reason another client may not share. The WEB
//! `$fields` call rides along with the first round. A client with
//! challenges first reads the embed page (current player id and signature
//! timestamp, shared by every such client), then makes its call together
//! with the player script unless that player's program is remembered.

use std::cell::RefCell;

use mediaparse_sdk::cascade::{Attempt, Cascade};
use mediaparse_sdk::exchanges::{Exchanges, checked};
use mediaparse_sdk::{
    Context, Exchange, HttpRequest, HttpResponse, Memo, Result, Step, Stepped, Target,
};
use mediaparse_youtube_solver::Program;

use crate::clients::{self, ClientDef, Endpoint};
use crate::innertube::{self, Extras};
use crate::map::{self, Player};
use crate::{challenges, pot, urls, web};

/// Where one client stands after the exchanges so far.
enum Answer {
    /// Ask for these next.
    Need(Vec<HttpRequest>),
    /// This client's answer is usable (and what was learned on the way).
    Usable(Box<Player>, Box<ClientDef>, Vec<Memo>),
}

pub fn stepped(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Stepped> {
    if target.id == crate::tool::TOOL_ID {
        return Ok(Step::Done(crate::tool::run(target, done)?).into());
    }
    if !urls::is_video_id(&target.id) {
        return Err(mediaparse_sdk::Failure::unsupported(
            "not a YouTube video id",
        ));
    }
    let provider = pot::provider(ctx)?;
    let defs = clients::configured(ctx)?;
    // Clients needing a PO token are skipped without a provider.
    let skipped: Vec<String> = defs
        .iter()
        .filter(|d| d.po_token && provider.is_none())
        .map(|d| d.id.clone())
        .collect();
    let cascade = defs.iter().fold(Cascade::new(), |cascade, def| {
        cascade.attempt_if(!skipped.contains(&def.id), || {
            client(def, provider.as_deref(), target, ctx, done)
        })
    });
    // The last client's own failure is the one to report.
    let answer = cascade.finish_last().map_err(|f| {
        if skipped.is_empty() {
            f
        } else {
            pot::with_skipped(f, &skipped)
        }
    })?;
    match answer {
        Answer::Usable(player, def, remember) => Ok(Stepped {
            next: Step::Done(map::extraction(target, done, *player, &def)),
            remember,
        }),
        Answer::Need(mut batch) => {
            // The microformat call rides along with the first round.
            if done.last_to(innertube::WEB_FIELDS_URL).is_none() {
                batch.push(innertube::web_fields(&target.id, ctx));
            }
            Ok(Step::Fetch(batch).into())
        }
    }
}

/// The exchange of exactly this request (bodies are deterministic).
fn answer_to<'a>(done: &'a [Exchange], request: &HttpRequest) -> Option<&'a Exchange> {
    done.last_where(|e| e.request.url == request.url && e.request.body == request.body)
}

/// The player script a client with challenges needs: its program, either
/// remembered or learned from the script fetched in this parse.
enum Script {
    Known(Program),
    Fetched(String, HttpRequest),
    Missing(HttpRequest),
}

/// A player's program and what to remember of it.
type Learned = (Program, Vec<Memo>);

/// One client's part of the cascade: ask it, or judge its answer.
fn client(
    def: &ClientDef,
    provider: Option<&str>,
    target: &Target,
    ctx: &Context,
    done: &[Exchange],
) -> Result<Attempt<Answer>> {
    let mut extras = Extras::default();
    let mut need = Vec::new();
    // The PO token first (the call carries it), asked once per parse.
    let mut token = None;
    if let (true, Some(provider)) = (def.po_token, provider) {
        let request = pot::request(provider, &pot::content_binding(ctx, &target.id));
        match answer_to(done, &request) {
            None => need.push(request),
            Some(e) => match pot::token(&e.response) {
                Ok(t) => token = Some(t),
                Err(f) => return Ok(Attempt::Missed(f)),
            },
        }
    }
    let mut script = None;
    if def.challenges {
        match done.last_to(web::EMBED_URL) {
            None => need.push(web::embed_page(&target.id)),
            Some(embed) => {
                let player = match checked(&embed.response, "YouTube embed page")
                    .and_then(|r| web::player_ref(&r.text()))
                {
                    Ok(p) => p,
                    Err(f) => return Ok(Attempt::Missed(f)),
                };
                extras.signature_timestamp = Some(player.sts);
                let request = web::script(&player);
                script = Some(match challenges::remembered(ctx, &player.id) {
                    Some(program) => Script::Known(program),
                    None => match done.last_to(&request.url) {
                        Some(e) => Script::Fetched(player.id.clone(), e.request.clone()),
                        None => Script::Missing(request),
                    },
                });
            }
        }
    }
    if !need.is_empty() {
        return Ok(Attempt::Got(Answer::Need(need)));
    }
    extras.po_token = token.as_deref();
    let request = innertube::player(def, &target.id, ctx, extras);
    let Some(exchange) = answer_to(done, &request) else {
        let mut batch = vec![request];
        if let Some(Script::Missing(s)) = script {
            batch.push(s);
        }
        return Ok(Attempt::Got(Answer::Need(batch)));
    };
    let read = match def.endpoint {
        Endpoint::Player => map::parse_player,
        Endpoint::Reel => map::parse_reel,
    };
    let with_token = |r: &HttpResponse| -> Result<Player> {
        let mut p = read(r)?;
        if let Some(t) = token.as_deref() {
            p.edit_streaming_data(|data| {
                pot::add_to_urls(data, t);
                Ok(())
            })?;
        }
        Ok(p)
    };
    let Some(script) = script else {
        return usable(
            map::judge(&exchange.response, &target.id, with_token),
            def,
            Vec::new(),
        );
    };
    // The program is learned only when an answer has formats to solve (a
    // bot check costs no learning); a player we cannot solve fails the
    // parse, never a wrong URL.
    let learned: RefCell<Option<Result<Learned>>> = RefCell::new(None);
    let program = || -> Result<Program> {
        let mut slot = learned.borrow_mut();
        let entry = slot.get_or_insert_with(|| match &script {
            Script::Known(p) => Ok((p.clone(), Vec::new())),
            Script::Fetched(id, request) => {
                let e = done
                    .last_to(&request.url)
                    .ok_or_else(|| mediaparse_sdk::Failure::changed("player script missing"))?;
                let text = checked(&e.response, "YouTube player script")?.text();
                let program = challenges::learn(&text)?;
                let memo = challenges::memo(id, &program);
                Ok((program, vec![memo]))
            }
            Script::Missing(_) => Err(mediaparse_sdk::Failure::changed(
                "the player script was not fetched",
            )),
        });
        entry.as_ref().map(|(p, _)| p.clone()).map_err(Clone::clone)
    };
    let parse = |r: &HttpResponse| -> Result<Player> {
        let mut p = read(r)?;
        p.edit_streaming_data(|data| {
            if challenges::has_formats(data) {
                challenges::solve(data, &program()?)?;
            }
            if let Some(t) = token.as_deref() {
                pot::add_to_urls(data, t);
            }
            Ok(())
        })?;
        Ok(p)
    };
    let verdict = map::judge(&exchange.response, &target.id, parse);
    let remember = match learned.into_inner() {
        Some(Err(f)) => return Err(f),
        Some(Ok((_, memo))) => memo,
        None => Vec::new(),
    };
    usable(verdict, def, remember)
}

fn usable(verdict: map::Verdict, def: &ClientDef, remember: Vec<Memo>) -> Result<Attempt<Answer>> {
    Ok(match verdict.attempt()? {
        Attempt::Got(player) => {
            Attempt::Got(Answer::Usable(player, Box::new(def.clone()), remember))
        }
        Attempt::Missed(failure) => Attempt::Missed(failure),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::YouTube;
    use mediaparse_sdk::testing::exchange as answer;
    use mediaparse_sdk::{Extractor, Plan};

    #[test]
    fn garbage_answers_fall_back_then_fail_cleanly() {
        let target =
            YouTube::detect("https://youtu.be/M4gD1WSo5mA").unwrap_or_else(|f| panic!("{f}"));
        let ctx = Context::default();
        let Ok(Plan::Fetch(first)) = YouTube::plan(&target, &ctx, &[]) else {
            panic!("expected round 1");
        };
        assert_eq!(first.len(), 2, "VISIONOS and the WEB $fields call together");
        let mut done: Vec<Exchange> = first
            .into_iter()
            .map(|r| answer(r, 200, "<html>consent</html>"))
            .collect();
        let Ok(Plan::Fetch(second)) = YouTube::plan(&target, &ctx, &done) else {
            panic!("expected the ANDROID round");
        };
        assert_eq!(second.len(), 1);
        assert!(second[0].url.contains("/reel/reel_item_watch"));
        done.extend(
            second
                .into_iter()
                .map(|r| answer(r, 200, "{\"playerResponse\": [")),
        );
        let Ok(Plan::Fetch(third)) = YouTube::plan(&target, &ctx, &done) else {
            panic!("expected the WEB client's embed page");
        };
        assert!(third[0].url.starts_with(web::EMBED_URL));
        done.extend(
            third
                .into_iter()
                .map(|r| answer(r, 200, "<html>consent</html>")),
        );
        match YouTube::plan(&target, &ctx, &done) {
            Err(f) => assert_eq!(f.code(), "upstream_error"),
            other => panic!("expected a failure, got {other:?}"),
        }
        assert!(YouTube::map(&target, &ctx, &done).is_err());
    }

    #[test]
    fn skipped_po_token_clients_are_named_in_the_failure() {
        let target =
            YouTube::detect("https://youtu.be/M4gD1WSo5mA").unwrap_or_else(|f| panic!("{f}"));
        let ctx = mediaparse_sdk::testing::context(&[
            ("clients", "visionos,web"),
            ("web_po_token", "true"),
        ]);
        let Ok(Plan::Fetch(first)) = YouTube::plan(&target, &ctx, &[]) else {
            panic!("expected round 1");
        };
        let bot = r#"{"playabilityStatus":{"status":"LOGIN_REQUIRED","reason":"Sign in to confirm you’re not a bot"}}"#;
        let done: Vec<Exchange> = first.into_iter().map(|r| answer(r, 200, bot)).collect();
        match YouTube::plan(&target, &ctx, &done) {
            Err(f) => {
                assert_eq!(f.code(), "upstream_rate_limited");
                assert!(
                    f.message().ends_with(
                        "clients needing a PO token were skipped (web): no po_token_provider configured"
                    ),
                    "{}",
                    f.message()
                );
            }
            other => panic!("expected a failure, got {other:?}"),
        }
        // Only PO-token clients configured: the reason is the whole story.
        let ctx = Context {
            config: vec![
                mediaparse_sdk::Header::new("clients", "web"),
                mediaparse_sdk::Header::new("web_po_token", "true"),
            ],
            ..ctx
        };
        match YouTube::plan(&target, &ctx, &[]) {
            Err(f) => assert!(f.message().contains("no po_token_provider configured")),
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}

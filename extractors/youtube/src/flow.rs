//! The rounds: VISIONOS `player` first (with the WEB `$fields` call riding
//! along in the first round), ANDROID `reel_item_watch` when VISIONOS's
//! answer is unusable for a reason another client may not share, then the
//! WEB client with the player's challenges solved: its embed page (current
//! player id and signature timestamp), then its `player` call together with
//! the player script unless that player's program is remembered.

use mediaparse_sdk::cascade::{Attempt, Cascade};
use mediaparse_sdk::exchanges::{Exchanges, checked};
use mediaparse_sdk::{
    Context, Exchange, HttpRequest, HttpResponse, Memo, Result, Step, Stepped, Target,
};

use crate::innertube::{self, Client};
use crate::map::{self, Player};
use crate::{challenges, urls, web};

/// Where one client stands after the exchanges so far.
enum Answer {
    /// Ask for these next.
    Need(Vec<HttpRequest>),
    /// This client's answer is usable (and what was learned on the way).
    Usable(Box<Player>, Client, Vec<Memo>),
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
    let answer = Cascade::new()
        .attempt(|| client(Client::VisionOs, map::parse_player, target, ctx, done))
        .attempt(|| client(Client::Android, map::parse_reel, target, ctx, done))
        .attempt(|| web_client(target, ctx, done))
        // The last client's own failure is the one to report.
        .finish_last()?;
    match answer {
        Answer::Usable(player, client, remember) => Ok(Stepped {
            next: Step::Done(map::extraction(target, ctx, done, *player, client)),
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

/// One client's part of the cascade: ask it, or judge its answer.
fn client(
    client: Client,
    parse: fn(&HttpResponse) -> Result<Player>,
    target: &Target,
    ctx: &Context,
    done: &[Exchange],
) -> Result<Attempt<Answer>> {
    let Some(exchange) = done.last_where(|e| client.made(&e.request.url)) else {
        let request = match client {
            Client::VisionOs => innertube::visionos(&target.id, ctx),
            Client::Android => innertube::android(&target.id, ctx),
            Client::Web => {
                return Ok(Attempt::Missed(mediaparse_sdk::Failure::changed(
                    "WEB is asked by its own flow",
                )));
            }
        };
        return Ok(Attempt::Got(Answer::Need(vec![request])));
    };
    usable(
        map::judge(&exchange.response, &target.id, parse),
        client,
        Vec::new(),
    )
}

fn usable(verdict: map::Verdict, client: Client, remember: Vec<Memo>) -> Result<Attempt<Answer>> {
    Ok(match verdict.attempt()? {
        Attempt::Got(player) => Attempt::Got(Answer::Usable(player, client, remember)),
        Attempt::Missed(failure) => Attempt::Missed(failure),
    })
}

/// The WEB client: embed page, then `player` (+ the script when its program
/// is not remembered), then the formats with their challenges solved.
fn web_client(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Attempt<Answer>> {
    let Some(embed) = done.last_to(web::EMBED_URL) else {
        return Ok(Attempt::Got(Answer::Need(vec![web::embed_page(
            &target.id,
        )])));
    };
    let player = match checked(&embed.response, "YouTube embed page")
        .and_then(|r| web::player_ref(&r.text()))
    {
        Ok(p) => p,
        Err(f) => return Ok(Attempt::Missed(f)),
    };
    let known = challenges::remembered(ctx, &player.id);
    let script_request = web::script(&player);
    let script = done.last_to(&script_request.url);
    let Some(answer) = done.last_where(|e| Client::Web.made(&e.request.url)) else {
        let mut batch = vec![innertube::web(&target.id, player.sts, ctx)];
        if known.is_none() && script.is_none() {
            batch.push(script_request);
        }
        return Ok(Attempt::Got(Answer::Need(batch)));
    };
    let (program, remember) = match known {
        Some(p) => (p, Vec::new()),
        None => {
            let Some(script) = script else {
                return Ok(Attempt::Got(Answer::Need(vec![script_request])));
            };
            let text = checked(&script.response, "YouTube player script")?.text();
            // A player we cannot solve fails the parse: never a wrong URL.
            let program = challenges::learn(&text)?;
            let memo = challenges::memo(&player.id, &program);
            (program, vec![memo])
        }
    };
    let parse = |r: &HttpResponse| -> Result<Player> {
        let mut p = map::parse_player(r)?;
        if let Some(data) = p.streaming_data.as_mut() {
            challenges::solve(data, &program)?;
        }
        Ok(p)
    };
    usable(
        map::judge(&answer.response, &target.id, parse),
        Client::Web,
        remember,
    )
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
        assert!(second[0].url.starts_with(innertube::REEL_URL));
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
}

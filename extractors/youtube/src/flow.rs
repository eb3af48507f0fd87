//! The rounds: VISIONOS `player` first (with the WEB `$fields` call riding
//! along in the first round), ANDROID `reel_item_watch` only when VISIONOS's
//! answer is unusable for a reason another client may not share.

use mediaparse_sdk::cascade::{Attempt, Cascade};
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::{Context, Exchange, Failure, HttpResponse, Result, Step, Target};

use crate::innertube::{self, Client};
use crate::map::{self, Player};
use crate::urls;

/// Where one client stands after the exchanges so far.
enum Answer {
    /// Ask for this client's answer next.
    Need(Client),
    /// This client's answer is usable.
    Usable(Box<Player>, Client),
}

pub fn step(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Step> {
    if !urls::is_video_id(&target.id) {
        return Err(Failure::unsupported("not a YouTube video id"));
    }
    let answer = Cascade::new()
        .attempt(|| client(Client::VisionOs, map::parse_player, target, done))
        .attempt(|| client(Client::Android, map::parse_reel, target, done))
        // The fallback's own failure is the one to report.
        .finish_last()?;
    match answer {
        Answer::Usable(player, client) => Ok(Step::Done(map::extraction(
            target, ctx, done, *player, client,
        ))),
        Answer::Need(client) => {
            let mut batch = vec![match client {
                Client::VisionOs => innertube::visionos(&target.id, ctx),
                Client::Android => innertube::android(&target.id, ctx),
            }];
            // The microformat call rides along with the first round.
            if done.last_to(innertube::WEB_FIELDS_URL).is_none() {
                batch.push(innertube::web_fields(&target.id, ctx));
            }
            Ok(Step::Fetch(batch))
        }
    }
}

/// One client's part of the cascade: ask it, or judge its answer.
fn client(
    client: Client,
    parse: fn(&HttpResponse) -> Result<Player>,
    target: &Target,
    done: &[Exchange],
) -> Result<Attempt<Answer>> {
    let Some(exchange) = done.last_where(|e| client.made(&e.request.url)) else {
        return Ok(Attempt::Got(Answer::Need(client)));
    };
    Ok(
        match map::judge(&exchange.response, &target.id, parse).attempt()? {
            Attempt::Got(player) => Attempt::Got(Answer::Usable(player, client)),
            Attempt::Missed(failure) => Attempt::Missed(failure),
        },
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
        match YouTube::plan(&target, &ctx, &done) {
            Err(f) => assert_eq!(f.code(), "upstream_error"),
            other => panic!("expected a failure, got {other:?}"),
        }
        assert!(YouTube::map(&target, &ctx, &done).is_err());
    }
}

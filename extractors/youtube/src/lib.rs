//! YouTube: InnerTube `player` with the VISIONOS client (direct, unciphered
//! adaptive URLs), ANDROID `reel_item_watch` as the fallback (muxed itag 18),
//! and a small WEB `$fields` call in the first round for `microformat`.
//! See `docs/platforms/youtube.md` and the upstream guide.

pub mod detect;
pub mod innertube;
pub mod player;

use innertube::Client;
use mediaparse_sdk::exchanges::Exchanges;
use mediaparse_sdk::spec::fill_missing_members;
use mediaparse_sdk::{
    Context, Exchange, Extraction, Extractor, Failure, Header, Info, Media, Plan, Result, Target,
};
use player::{Player, Verdict};
use serde_json::{Map, Value};

pub const PLATFORM: &str = "youtube";

pub struct YouTube;

/// The answer the media comes from, and the client that produced it.
struct Chosen {
    player: Player,
    client: Client,
}

/// Where the per-client decisions stand after the exchanges so far.
enum State {
    /// Ask for this client's answer next.
    Need(Client),
    Done(Box<Chosen>),
}

fn answer(done: &[Exchange], client: Client) -> Option<&Exchange> {
    done.last_where(|e| client.made(&e.request.url))
}

/// Decide from the exchanges: VISIONOS first; ANDROID only when VISIONOS's
/// answer is not usable for a reason another client may not share.
fn state(target: &Target, done: &[Exchange]) -> Result<State> {
    let mut last_failure = None;
    for (client, parse) in [
        (
            Client::VisionOs,
            player::parse_player as fn(&_) -> Result<Player>,
        ),
        (Client::Android, player::parse_reel),
    ] {
        let Some(exchange) = answer(done, client) else {
            return Ok(State::Need(client));
        };
        match player::judge(&exchange.response, &target.id, parse) {
            Verdict::Usable(p) => {
                return Ok(State::Done(Box::new(Chosen { player: *p, client })));
            }
            Verdict::Final(f) => return Err(f),
            Verdict::TryNext(f) => last_failure = Some(f),
        }
    }
    Err(last_failure.unwrap_or_else(|| Failure::upstream("no InnerTube client answered")))
}

/// The WEB `$fields` answer, when it succeeded and is about this video.
fn web_answer(target: &Target, done: &[Exchange]) -> Option<Player> {
    let exchange = done.last_to(innertube::WEB_FIELDS_URL)?;
    if !exchange.response.is_success() {
        return None;
    }
    let web: Player = exchange.response.json().ok()?;
    let id = web
        .video_details
        .as_ref()
        .and_then(|d| d.get("videoId"))
        .and_then(Value::as_str);
    (id.is_none() || id == Some(target.id.as_str())).then_some(web)
}

fn download_headers(client: Client, ctx: &Context) -> Vec<Header> {
    vec![
        Header::new("User-Agent", client.user_agent(ctx)),
        Header::new("Referer", "https://www.youtube.com/"),
        Header::new("Origin", "https://www.youtube.com"),
    ]
}

impl Extractor for YouTube {
    fn info() -> Info {
        Info {
            platform: PLATFORM.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            url_hosts: vec![
                "*.youtube.com".into(),
                "youtu.be".into(),
                "www.youtu.be".into(),
                "*.youtube-nocookie.com".into(),
            ],
            api_hosts: vec![innertube::API_HOST.into(), innertube::WEB_HOST.into()],
            url_shapes: vec![
                "/watch?v={id}".into(),
                "/shorts/{id}".into(),
                "/live/{id}".into(),
                "youtu.be/{id}".into(),
                "/embed/{id}".into(),
                "/v/{id}".into(),
                "music.youtube.com/watch?v={id}".into(),
            ],
        }
    }

    fn detect(input: &str) -> Result<Target> {
        let id = detect::video_id(input)?;
        Ok(Target {
            platform: PLATFORM.into(),
            canonical_url: format!("https://www.youtube.com/watch?v={id}"),
            id,
            input: input.into(),
        })
    }

    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        if !detect::is_video_id(&target.id) {
            return Err(Failure::unsupported("not a YouTube video id"));
        }
        match state(target, done)? {
            State::Done(_) => Ok(Plan::Ready),
            State::Need(client) => {
                let mut batch = vec![match client {
                    Client::VisionOs => innertube::visionos(&target.id, ctx),
                    Client::Android => innertube::android(&target.id, ctx),
                }];
                // The microformat call rides along with the first round.
                if done.last_to(innertube::WEB_FIELDS_URL).is_none() {
                    batch.push(innertube::web_fields(&target.id, ctx));
                }
                Ok(Plan::Fetch(batch))
            }
        }
    }

    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        let Chosen { player, client } = match state(target, done)? {
            State::Done(chosen) => *chosen,
            State::Need(_) => return Err(Failure::upstream("map called before the player answer")),
        };
        let web = web_answer(target, done);
        let headers = download_headers(client, ctx);
        let (videos, audios) = player::media_items(&player, &headers);

        let details = player.video_details.as_ref();
        let title = details
            .and_then(|d| d.get("title"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // The largest thumbnail of the player answer or of the WEB answer
        // (which lists maxresdefault when it exists); never probed.
        let mut thumbs = player::thumbnails(details);
        thumbs.extend(player::thumbnails(
            web.as_ref().and_then(|w| w.video_details.as_ref()),
        ));
        let thumbnail = thumbs
            .iter()
            .fold(None::<&(String, u64)>, |best, t| match best {
                Some(b) if b.1 > t.1 => Some(b),
                _ => Some(t),
            })
            .map(|t| t.0.clone())
            .unwrap_or_default();

        let media = Media {
            title,
            thumbnail,
            duration: player::duration_seconds(&player) as f64,
            images: Vec::new(),
            videos,
            audios,
        };

        let mut data = Map::new();
        let mut put = |name: &str, v: Option<Value>| {
            if let Some(v @ Value::Object(_)) = v {
                data.insert(name.into(), v);
            }
        };
        put("videoDetails", player.video_details);
        put("streamingData", player.streaming_data);
        put("playabilityStatus", player.playability_status);
        put(
            "microformat",
            web.and_then(|w| w.microformat).or(player.microformat),
        );
        put("captions", player.captions);
        fill_missing_members(PLATFORM, &mut data);
        Ok(Extraction {
            media,
            platform_data: Value::Object(data),
        })
    }
}

mediaparse_sdk::export_extractor!(YouTube);

#[cfg(test)]
mod tests {
    use super::*;
    use mediaparse_sdk::{HttpRequest, HttpResponse};

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

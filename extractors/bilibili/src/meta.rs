//! What the metadata answers (view, pgc season, pugv season) say about a
//! post: the title, cover, size and the platform-data members kept beside
//! the play-URL object.

use mediaparse_sdk::fields::RawValue;
use mediaparse_sdk::serde_json::{Map, Value};
use mediaparse_sdk::urls::https;
use mediaparse_sdk::{Failure, Result};
use serde::Deserialize;

use crate::api::id_string;
pub use crate::map::Meta;

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Dimension {
    #[serde(default)]
    pub width: Option<u64>,
    #[serde(default)]
    pub height: Option<u64>,
    #[serde(default)]
    pub rotate: Option<u64>,
}

impl Dimension {
    /// Width and height as displayed (`rotate` 1 swaps them).
    pub fn displayed(&self) -> (u32, u32) {
        let w = u32::try_from(self.width.unwrap_or(0)).unwrap_or(0);
        let h = u32::try_from(self.height.unwrap_or(0)).unwrap_or(0);
        if self.rotate == Some(1) {
            (h, w)
        } else {
            (w, h)
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct ViewPage {
    #[serde(default)]
    pub cid: Option<Value>,
    #[serde(default)]
    pub page: Option<u32>,
    #[serde(default)]
    pub part: Option<String>,
    #[serde(default)]
    pub duration: Option<f64>,
    #[serde(default)]
    pub dimension: Option<Dimension>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ViewData {
    #[serde(default)]
    pub aid: Option<Value>,
    #[serde(default)]
    pub cid: Option<Value>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub pic: Option<String>,
    #[serde(default)]
    pub duration: Option<f64>,
    #[serde(default)]
    pub pages: Option<Vec<ViewPage>>,
    #[serde(default)]
    pub dimension: Option<Dimension>,
    #[serde(default)]
    pub redirect_url: Option<String>,
    #[serde(default)]
    pub is_upower_exclusive: Option<bool>,
}

/// The view members kept in platform data as they are, as their JSON text
/// (read into values only for the platform data).
#[derive(Debug, Default, Deserialize)]
pub struct ViewExtras<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    bvid: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    desc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    owner: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pubdate: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    stat: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    pages: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    dimension: Option<&'a RawValue>,
}

/// A member that is present, `null` included (as `Map::get` sees it).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

impl ViewExtras<'_> {
    fn members(&self) -> [(&'static str, Option<&RawValue>); 7] {
        [
            ("bvid", self.bvid),
            ("desc", self.desc),
            ("owner", self.owner),
            ("pubdate", self.pubdate),
            ("stat", self.stat),
            ("pages", self.pages),
            ("dimension", self.dimension),
        ]
    }
}

pub fn video_meta(
    view: &ViewData,
    kept: &ViewExtras,
    part: Option<&ViewPage>,
    page_count: usize,
    page: u32,
    aid: &str,
    cid: &str,
) -> Meta {
    let title = view.title.clone().unwrap_or_default();
    let part_name = part.and_then(|p| p.part.clone()).unwrap_or_default();
    let shown_title = if page_count > 1 && !part_name.is_empty() && part_name != title {
        format!("{title} P{page} {part_name}")
    } else {
        title.clone()
    };
    let pic = https(view.pic.as_deref().unwrap_or_default());
    let (width, height) = part
        .and_then(|p| p.dimension.as_ref())
        .or(view.dimension.as_ref())
        .map(Dimension::displayed)
        .unwrap_or((0, 0));
    let mut extras = Map::new();
    extras.insert("aid".into(), Value::String(aid.into()));
    extras.insert("cid".into(), Value::String(cid.into()));
    extras.insert("page".into(), Value::from(page));
    extras.insert("part".into(), Value::String(part_name));
    let kept = kept
        .members()
        .into_iter()
        .filter_map(|(key, raw)| Some((key, raw?.to_owned())))
        .collect();
    Meta {
        title: shown_title,
        thumbnail: pic.clone(),
        duration: part
            .and_then(|p| p.duration)
            .or(view.duration)
            .unwrap_or(0.0),
        width,
        height,
        pd_title: title,
        pd_pic: pic,
        extras,
        kept,
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Episode {
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub aid: Option<Value>,
    #[serde(default)]
    pub cid: Option<Value>,
    #[serde(default)]
    pub bvid: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub long_title: Option<String>,
    #[serde(default)]
    pub cover: Option<String>,
    #[serde(default)]
    pub duration: Option<f64>,
    #[serde(default)]
    pub playable: Option<bool>,
    #[serde(default)]
    pub episode_can_view: Option<bool>,
    #[serde(default)]
    pub dimension: Option<Dimension>,
}

impl Episode {
    pub fn is(&self, id: u64) -> bool {
        id_string(self.id.as_ref()) == Some(id.to_string())
    }
}

pub fn episodes(list: Option<&Value>) -> Result<Vec<Episode>> {
    match list {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => Vec::<Episode>::deserialize(v)
            .map_err(|e| Failure::changed(format!("unexpected episode list ({e})"))),
    }
}

fn join_nonempty(parts: &[Option<&str>]) -> String {
    parts
        .iter()
        .flatten()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn pgc_meta(season: Option<&Map<String, Value>>, episode: Option<&Episode>, ep: u64) -> Meta {
    let season_title = season.and_then(|s| {
        s.get("season_title")
            .or_else(|| s.get("title"))
            .and_then(Value::as_str)
    });
    let title = join_nonempty(&[
        season_title,
        episode.and_then(|e| e.title.as_deref()),
        episode.and_then(|e| e.long_title.as_deref()),
    ]);
    let cover = episode
        .and_then(|e| e.cover.as_deref())
        .or_else(|| season.and_then(|s| s.get("cover")).and_then(Value::as_str))
        .map(https)
        .unwrap_or_default();
    let (width, height) = episode
        .and_then(|e| e.dimension.as_ref())
        .map(Dimension::displayed)
        .unwrap_or((0, 0));
    let mut extras = Map::new();
    extras.insert("ep_id".into(), Value::String(ep.to_string()));
    if let Some(id) = season.and_then(|s| id_string(s.get("season_id"))) {
        extras.insert("season_id".into(), Value::String(id));
    }
    if let Some(title) = season_title {
        extras.insert("season_title".into(), Value::String(title.into()));
    }
    if let Some(e) = episode {
        for (key, value) in [("aid", &e.aid), ("cid", &e.cid)] {
            if let Some(id) = id_string(value.as_ref()) {
                extras.insert(key.into(), Value::String(id));
            }
        }
        if let Some(bvid) = e.bvid.as_ref().filter(|b| !b.is_empty()) {
            extras.insert("bvid".into(), Value::String(bvid.clone()));
        }
        if let Some(long_title) = &e.long_title {
            extras.insert("long_title".into(), Value::String(long_title.clone()));
        }
    }
    Meta {
        title: title.clone(),
        thumbnail: cover.clone(),
        // Episode durations are not documented in one unit; the play URL's
        // `timelength` (ms) gives the real one.
        duration: 0.0,
        width,
        height,
        pd_title: title,
        pd_pic: cover,
        extras,
        kept: Vec::new(),
    }
}

pub fn cheese_meta(
    season: &Map<String, Value>,
    episode: &Episode,
    ep: &str,
    aid: &str,
    cid: &str,
) -> Meta {
    let course = season.get("title").and_then(Value::as_str);
    let title = join_nonempty(&[course, episode.title.as_deref()]);
    let cover = episode
        .cover
        .as_deref()
        .or_else(|| season.get("cover").and_then(Value::as_str))
        .map(https)
        .unwrap_or_default();
    let mut extras = Map::new();
    extras.insert("ep_id".into(), Value::String(ep.into()));
    extras.insert("aid".into(), Value::String(aid.into()));
    extras.insert("cid".into(), Value::String(cid.into()));
    if let Some(id) = id_string(season.get("season_id")) {
        extras.insert("season_id".into(), Value::String(id));
    }
    if let Some(course) = course {
        extras.insert("course_title".into(), Value::String(course.into()));
    }
    Meta {
        title: title.clone(),
        thumbnail: cover.clone(),
        duration: episode.duration.unwrap_or(0.0),
        width: 0,
        height: 0,
        pd_title: title,
        pd_pic: cover,
        extras,
        kept: Vec::new(),
    }
}

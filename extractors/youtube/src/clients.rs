//! The InnerTube clients as data: which clients are asked, in which order,
//! and what each one sends. Built-in definitions carry today's values; the
//! operator's settings (`context.config`) reorder, disable, override or add
//! clients, so a client's death is a config change, not a release.
//!
//! Settings (all optional, see `docs/platforms/youtube.md`, "Clients"):
//! - `clients = "visionos,android,web"`: the cascade, in order (ids of
//!   built-in clients or of clients defined by the settings below).
//! - `<id>_<field>` for a client `<id>`: `client_name`, `client_name_id`,
//!   `version`, `user_agent` (`{version}` is replaced), `host`,
//!   `endpoint` (`player` | `reel`), `api_key`, `context` (a JSON object of
//!   extra `context.client` members), `embed_url` (`true` | `false`),
//!   `challenges` (`true` | `false`), `po_token` (`true` | `false`).
//!
//! Parsing is strict: an unknown client id, an unknown field of a listed
//! client or a malformed value fails the parse with a message naming the
//! setting.

use mediaparse_sdk::{Context, Failure, Result};
use serde_json::{Map, Value, json};

/// Host of the mobile clients' calls (NewPipe's recorded traffic).
pub const API_HOST: &str = "youtubei.googleapis.com";
/// Host of the web-family clients' calls.
pub const WEB_HOST: &str = "www.youtube.com";

/// A desktop browser's User-Agent for the web-family clients and their media URLs.
pub const WEB_USER_AGENT: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36";

/// Today's cascade: VISIONOS first while it serves plain URLs.
pub const DEFAULT_ORDER: &str = "visionos,android,web";

/// Which InnerTube call a client makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `/youtubei/v1/player`: the answer is the player response.
    Player,
    /// `/youtubei/v1/reel/reel_item_watch`: wrapped in `playerResponse`.
    Reel,
}

/// One client: everything its request and its media headers need.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientDef {
    /// The operator's name for it (`visionos`, `tv`, …).
    pub id: String,
    /// `context.client.clientName`.
    pub name: String,
    /// `X-YouTube-Client-Name` (sent when known).
    pub name_id: Option<u32>,
    pub version: String,
    /// May contain `{version}`.
    user_agent: String,
    pub host: String,
    pub endpoint: Endpoint,
    /// Appended as `&key=` when set.
    pub api_key: Option<String>,
    /// Extra `context.client` members, in order, after name and version.
    pub context: Map<String, Value>,
    /// Sends `context.thirdParty.embedUrl` (an embedded player's page).
    pub embed_url: bool,
    /// Its formats carry the player's `n`/signature challenges: it needs
    /// the player script (and sends its `signatureTimestamp`).
    pub challenges: bool,
    /// Asks a proof-of-origin token from the operator's provider first.
    pub po_token: bool,
}

impl ClientDef {
    /// The client's own User-Agent; media URLs it returns are fetched with it.
    pub fn user_agent(&self) -> String {
        self.user_agent.replace("{version}", &self.version)
    }
}

fn context_of(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The built-in definition of `id`, if there is one.
pub fn builtin(id: &str) -> Option<ClientDef> {
    let def = |name: &str,
               name_id: Option<u32>,
               version: &str,
               user_agent: &str,
               host: &str,
               endpoint: Endpoint,
               context: Value| ClientDef {
        id: id.to_string(),
        name: name.to_string(),
        name_id,
        version: version.to_string(),
        user_agent: user_agent.to_string(),
        host: host.to_string(),
        endpoint,
        api_key: None,
        context: context_of(context),
        embed_url: false,
        challenges: false,
        po_token: false,
    };
    Some(match id {
        "visionos" => def(
            "VISIONOS",
            None,
            "1.02",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 15_7_3) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Safari/605.1.15",
            API_HOST,
            Endpoint::Player,
            json!({
                "clientScreen": "WATCH",
                "platform": "MOBILE",
                "deviceMake": "Apple",
                "deviceModel": "RealityDevice17,1",
                "osName": "visionOS",
                "osVersion": "26.5.23O471"
            }),
        ),
        "android" => def(
            "ANDROID",
            None,
            "21.26.364",
            "com.google.android.youtube/{version} (Linux; U; Android 15; US) gzip",
            API_HOST,
            Endpoint::Reel,
            json!({
                "clientScreen": "WATCH",
                "platform": "MOBILE",
                "osName": "Android",
                "osVersion": "15",
                "androidSdkVersion": 35
            }),
        ),
        "web" => ClientDef {
            challenges: true,
            ..def(
                "WEB",
                Some(1),
                "2.20260708.00.00",
                WEB_USER_AGENT,
                WEB_HOST,
                Endpoint::Player,
                json!({"clientScreen": "WATCH", "platform": "DESKTOP"}),
            )
        },
        // The TV (Cobalt) client: plain player answers with challenges.
        "tv" => ClientDef {
            challenges: true,
            ..def(
                "TVHTML5",
                Some(7),
                "7.20260707.07.00",
                "Mozilla/5.0 (ChromiumStylePlatform) Cobalt/Version",
                WEB_HOST,
                Endpoint::Player,
                json!({"clientScreen": "WATCH", "platform": "TV"}),
            )
        },
        // The player embedded in a third-party page (`thirdParty.embedUrl`).
        "web_embedded" => ClientDef {
            challenges: true,
            embed_url: true,
            ..def(
                "WEB_EMBEDDED_PLAYER",
                Some(56),
                "2.20260708.00.00",
                WEB_USER_AGENT,
                WEB_HOST,
                Endpoint::Player,
                json!({"clientScreen": "EMBED", "platform": "DESKTOP"}),
            )
        },
        _ => return None,
    })
}

const BUILTIN_IDS: &[&str] = &["visionos", "android", "web", "tv", "web_embedded"];

const FIELDS: &[&str] = &[
    "client_name",
    "client_name_id",
    "version",
    "user_agent",
    "host",
    "endpoint",
    "api_key",
    "context",
    "embed_url",
    "challenges",
    "po_token",
];

/// Settings that are not about one client.
const OTHER_SETTINGS: &[&str] = &["clients", "visitor_data", "po_token_provider"];

fn bad(setting: &str, why: impl std::fmt::Display) -> Failure {
    Failure::upstream(format!("YouTube setting `{setting}`: {why}"))
}

fn is_client_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && id.len() <= 32
}

fn boolean(setting: &str, value: &str) -> Result<bool> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(bad(setting, format!("`{other}` is not true or false"))),
    }
}

/// The cascade the operator configured (or today's), in order.
pub fn configured(ctx: &Context) -> Result<Vec<ClientDef>> {
    let order = ctx.config("clients").unwrap_or(DEFAULT_ORDER);
    let mut ids: Vec<&str> = Vec::new();
    for id in order.split(',').map(str::trim) {
        if !is_client_id(id) {
            return Err(bad(
                "clients",
                format!("`{id}` is not a client id ([a-z][a-z0-9_]*)"),
            ));
        }
        if ids.contains(&id) {
            return Err(bad("clients", format!("`{id}` is listed twice")));
        }
        ids.push(id);
    }
    // Every `<client>_<field>` setting of a known or listed client must be
    // a field we read: a typo must not be silently ignored.
    let mut known: Vec<&str> = BUILTIN_IDS.to_vec();
    known.extend(ids.iter().copied().filter(|id| !BUILTIN_IDS.contains(id)));
    for setting in &ctx.config {
        let name = setting.name.as_str();
        if OTHER_SETTINGS.contains(&name) {
            continue;
        }
        // Longest id first: `web_embedded_version` is web_embedded's.
        let owner = known
            .iter()
            .filter(|id| name.len() > id.len() + 1 && name.starts_with(&format!("{id}_")))
            .max_by_key(|id| id.len());
        if let Some(id) = owner {
            let field = &name[id.len() + 1..];
            if !FIELDS.contains(&field) {
                return Err(bad(
                    name,
                    format!(
                        "`{field}` is not a client field (one of {})",
                        FIELDS.join(", ")
                    ),
                ));
            }
        }
    }
    let listed: Vec<ClientDef> = ids
        .iter()
        .map(|id| client(ctx, id))
        .collect::<Result<_>>()?;
    // A built-in client's settings are checked even while it is not
    // listed: enabling it later must not reveal an old typo.
    for id in BUILTIN_IDS.iter().filter(|id| !ids.contains(id)) {
        let prefix = format!("{id}_");
        if ctx.config.iter().any(|s| s.name.starts_with(&prefix)) {
            client(ctx, id)?;
        }
    }
    Ok(listed)
}

/// One client: its built-in definition (or a bare one for a client the
/// operator defines), with the operator's overrides applied.
fn client(ctx: &Context, id: &str) -> Result<ClientDef> {
    let setting = |field: &str| format!("{id}_{field}");
    let value = |field: &str| ctx.config(&setting(field)).map(str::trim);
    let mut def = match builtin(id) {
        Some(d) => d,
        None => {
            let required = ["client_name", "version", "user_agent"];
            if let Some(missing) = required.iter().find(|f| value(f).is_none()) {
                return Err(bad(
                    "clients",
                    format!(
                        "`{id}` is not a built-in client ({}); define it with `{}`",
                        BUILTIN_IDS.join(", "),
                        setting(missing)
                    ),
                ));
            }
            ClientDef {
                id: id.to_string(),
                name: String::new(),
                name_id: None,
                version: String::new(),
                user_agent: String::new(),
                host: WEB_HOST.to_string(),
                endpoint: Endpoint::Player,
                api_key: None,
                context: Map::new(),
                embed_url: false,
                challenges: false,
                po_token: false,
            }
        }
    };
    if let Some(v) = value("client_name") {
        if !v
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(bad(&setting("client_name"), "expected [A-Z0-9_]+"));
        }
        def.name = v.to_string();
    }
    if let Some(v) = value("client_name_id") {
        def.name_id = Some(
            v.parse()
                .map_err(|_| bad(&setting("client_name_id"), "expected a number"))?,
        );
    }
    if let Some(v) = value("version") {
        if !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') || !v.contains('.') {
            return Err(bad(&setting("version"), "expected digits and dots"));
        }
        def.version = v.to_string();
    }
    if let Some(v) = value("user_agent") {
        def.user_agent = v.to_string();
    }
    if let Some(v) = value("host") {
        if v != API_HOST && v != WEB_HOST {
            return Err(bad(
                &setting("host"),
                format!("expected {API_HOST} or {WEB_HOST}"),
            ));
        }
        def.host = v.to_string();
    }
    if let Some(v) = value("endpoint") {
        def.endpoint = match v {
            "player" => Endpoint::Player,
            "reel" => Endpoint::Reel,
            _ => return Err(bad(&setting("endpoint"), "expected player or reel")),
        };
    }
    if let Some(v) = value("api_key") {
        if !v
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(bad(&setting("api_key"), "expected [A-Za-z0-9_-]+"));
        }
        def.api_key = Some(v.to_string());
    }
    if let Some(v) = value("context") {
        def.context = match serde_json::from_str::<Value>(v) {
            Ok(Value::Object(m)) => m,
            _ => return Err(bad(&setting("context"), "expected a JSON object")),
        };
    }
    if let Some(v) = value("embed_url") {
        def.embed_url = boolean(&setting("embed_url"), v)?;
    }
    if let Some(v) = value("challenges") {
        def.challenges = boolean(&setting("challenges"), v)?;
    }
    if let Some(v) = value("po_token") {
        def.po_token = boolean(&setting("po_token"), v)?;
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    use mediaparse_sdk::testing::context as ctx;

    fn ids(ctx: &Context) -> Result<Vec<String>> {
        configured(ctx).map(|c| c.into_iter().map(|d| d.id).collect())
    }

    #[test]
    fn defaults_are_todays_cascade() {
        assert_eq!(
            ids(&ctx(&[])).ok(),
            Some(vec!["visionos".into(), "android".into(), "web".into()])
        );
    }

    #[test]
    fn order_and_overrides_follow_the_settings() {
        let c = ctx(&[
            ("clients", " tv , web_embedded,android "),
            ("tv_version", "7.20260101.00.00"),
            ("web_embedded_po_token", "true"),
            ("android_context", r#"{"osVersion":"16"}"#),
        ]);
        let defs = configured(&c).unwrap_or_else(|f| panic!("{f}"));
        let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["TVHTML5", "WEB_EMBEDDED_PLAYER", "ANDROID"]);
        assert_eq!(defs[0].version, "7.20260101.00.00");
        assert!(defs[1].po_token && defs[1].embed_url && defs[1].challenges);
        assert_eq!(defs[2].context.get("osVersion"), Some(&json!("16")));
        assert!(defs[2].user_agent().contains("/21.26.364 "));
    }

    #[test]
    fn a_new_client_can_be_defined() {
        let c = ctx(&[
            ("clients", "mweb"),
            ("mweb_client_name", "MWEB"),
            ("mweb_version", "2.20260101.01.00"),
            ("mweb_user_agent", "Mozilla/5.0 (Mobile) v{version}"),
            ("mweb_challenges", "true"),
        ]);
        let defs = configured(&c).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(defs[0].name, "MWEB");
        assert_eq!(
            defs[0].user_agent(),
            "Mozilla/5.0 (Mobile) v2.20260101.01.00"
        );
        assert_eq!(defs[0].host, WEB_HOST);
        assert!(defs[0].challenges);
    }

    #[test]
    fn malformed_settings_fail_with_the_setting_named() {
        for (pairs, names) in [
            (vec![("clients", "visionos,,web")], "`clients`"),
            (vec![("clients", "web,web")], "listed twice"),
            (vec![("clients", "ios")], "`ios_client_name`"),
            (vec![("web_verison", "2.1")], "`web_verison`"),
            (
                vec![("web_embedded_versoin", "2.1")],
                "`web_embedded_versoin`",
            ),
            (vec![("tv_version", "seven")], "`tv_version`"),
            (vec![("web_challenges", "yes")], "`web_challenges`"),
            (vec![("android_context", "[1]")], "`android_context`"),
            (vec![("android_endpoint", "next")], "`android_endpoint`"),
            (vec![("web_host", "evil.example")], "`web_host`"),
            (vec![("web_client_name_id", "x")], "`web_client_name_id`"),
        ] {
            match configured(&ctx(&pairs)) {
                Err(f) => {
                    assert_eq!(f.code(), "upstream_error");
                    assert!(f.message().contains(names), "{pairs:?}: {}", f.message());
                }
                Ok(_) => panic!("{pairs:?} accepted"),
            }
        }
        // Settings of other kinds (cookies, visitor data) are not clients'.
        assert!(configured(&ctx(&[("cookie", "x"), ("visitor_data", "Cgt")])).is_ok());
    }
}

//! Session pools: the operator's logged-in sessions per platform (a cookie
//! string and optional extra `context.config` values), one per parse,
//! chosen and cooled like exits (a session whose parse ends at a login wall,
//! a checkpoint or a challenge rests). `Set-Cookie` answers from the
//! platform's declared hosts are merged into the session that made the
//! request (platforms rotate `ct0`, `csrftoken`, `msToken`, `ttwid`) and
//! persisted, so a restart keeps the fresh values. Extractors see the
//! session only as `context.config` (`cookie` and the extra names); callers
//! never learn which one served them; every value is a secret.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

use mediaparse_sdk::Header;
#[cfg(test)]
use mediaparse_sdk::HttpResponse;
use mediaparse_sdk::urls::host_matches;
use sha2::{Digest, Sha256};

use super::exits::{AllCooling, Cooling, ExitLease, ExitPools, ExitSpec, ExitStatus, Outcome};

/// One configured session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSpec {
    pub label: String,
    /// `name=value; name=value`, as a browser's `Cookie` header.
    pub cookie: String,
    /// Extra `context.config` values (e.g. `device_id`, `visitor_data`).
    pub config: BTreeMap<String, String>,
    /// The label of the exit this session must leave through.
    pub exit: Option<String>,
}

impl SessionSpec {
    /// Identifies the configured values: an edited session starts fresh.
    fn digest(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.cookie.as_bytes());
        for (k, v) in &self.config {
            h.update([0]);
            h.update(k.as_bytes());
            h.update([0]);
            h.update(v.as_bytes());
        }
        hex(&h.finalize())
    }

    fn health_key(&self) -> ExitSpec {
        ExitSpec {
            label: self.label.clone(),
            url: Some(self.digest()),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The session a parse holds.
#[derive(Clone, Debug)]
pub struct SessionLease {
    health: ExitLease,
    spec: SessionSpec,
}

impl SessionLease {
    /// The exit this session is pinned to, if any.
    pub fn exit(&self) -> Option<&str> {
        self.spec.exit.as_deref()
    }
}

/// The current cookies of one session, in order.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
struct Jar {
    /// [`SessionSpec::digest`] of the configuration these cookies grew from.
    origin: String,
    cookies: Vec<(String, String)>,
}

impl Jar {
    fn from_cookie(origin: String, cookie: &str) -> Jar {
        let cookies = cookie
            .split(';')
            .filter_map(|pair| {
                let (n, v) = pair.split_once('=')?;
                let n = n.trim();
                (!n.is_empty()).then(|| (n.to_string(), v.trim().to_string()))
            })
            .collect();
        Jar { origin, cookies }
    }

    fn header(&self) -> String {
        self.cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Apply one `Set-Cookie` that `host` sent; true when something changed.
    /// A cookie whose `Domain` attribute does not cover `host` is another
    /// site's (a browser refuses it too, RFC 6265 §5.3 step 6): ignored.
    fn apply(&mut self, set_cookie: &str, host: &str) -> bool {
        let Ok(c) = cookie::Cookie::parse(set_cookie) else {
            return false;
        };
        if let Some(domain) = c.domain() {
            let domain = domain.trim_start_matches('.').to_ascii_lowercase();
            let host = host.to_ascii_lowercase();
            let covers = host == domain
                || host
                    .strip_suffix(domain.as_str())
                    .is_some_and(|rest| rest.ends_with('.'));
            if domain.is_empty() || !covers {
                return false;
            }
        }
        let (name, value) = (c.name().to_string(), c.value().to_string());
        let expired = value.is_empty()
            || c.max_age().is_some_and(|a| a.whole_seconds() <= 0)
            || c.expires_datetime()
                .is_some_and(|t| t.unix_timestamp() <= chrono::Utc::now().timestamp());
        let at = self.cookies.iter().position(|(n, _)| *n == name);
        match (at, expired) {
            (Some(i), true) => {
                self.cookies.remove(i);
                true
            }
            (Some(i), false) if self.cookies[i].1 != value => {
                self.cookies[i].1 = value;
                true
            }
            (None, false) => {
                self.cookies.push((name, value));
                true
            }
            _ => false,
        }
    }
}

type JarKey = (String, String);

/// Every platform's sessions: their health and their current cookies.
pub struct Sessions {
    health: ExitPools,
    jars: Mutex<HashMap<JarKey, Jar>>,
    /// Where the current cookies are kept across restarts (`None`: memory only).
    path: Option<PathBuf>,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions::open(None)
    }
}

/// The file's shape: `"platform/label"` → jar.
type Persisted = BTreeMap<String, Jar>;

impl Sessions {
    /// Sessions persisted in `path` (read now if it exists; an unreadable
    /// file is reported and replaced).
    pub fn open(path: Option<PathBuf>) -> Sessions {
        let mut jars = HashMap::new();
        if let Some(p) = &path
            && let Ok(text) = std::fs::read_to_string(p)
        {
            match serde_json::from_str::<Persisted>(&text) {
                Ok(saved) => {
                    for (key, jar) in saved {
                        if let Some((platform, label)) = key.split_once('/') {
                            jars.insert((platform.to_string(), label.to_string()), jar);
                        }
                    }
                }
                Err(_) => {
                    tracing::warn!(path = %p.display(), "session state unreadable; starting from the configuration")
                }
            }
        }
        Sessions {
            health: ExitPools::for_sessions(),
            jars: Mutex::new(jars),
            path,
        }
    }

    /// Choose the session for one parse (`None` when the platform has none)
    /// among those `usable` accepts (e.g. not pinned to a cooling exit).
    pub fn lease(
        &self,
        platform: &str,
        specs: &[SessionSpec],
        usable: &dyn Fn(&SessionSpec) -> bool,
    ) -> Result<Option<SessionLease>, AllCooling> {
        if specs.is_empty() {
            return Ok(None);
        }
        let keys: Vec<ExitSpec> = specs.iter().map(SessionSpec::health_key).collect();
        let health = self.health.lease_where(platform, &keys, &|key| {
            specs
                .iter()
                .find(|s| s.label == key.label)
                .is_some_and(usable)
        })?;
        let Some(spec) = specs.iter().find(|s| s.label == health.label).cloned() else {
            return Ok(None);
        };
        let mut jars = self.jars.lock().unwrap_or_else(|p| p.into_inner());
        // Jars of sessions no longer configured are dropped; an edited session starts fresh.
        jars.retain(|(p, label), _| p != platform || specs.iter().any(|s| &s.label == label));
        let digest = spec.digest();
        let jar = jars
            .entry((platform.to_string(), spec.label.clone()))
            .or_default();
        if jar.origin != digest {
            *jar = Jar::from_cookie(digest, &spec.cookie);
        }
        Ok(Some(SessionLease { health, spec }))
    }

    /// `base` (the platform's `context.config`) with the session's current
    /// cookie and extra values in place.
    pub fn config_for(&self, lease: &SessionLease, base: Vec<Header>) -> Vec<Header> {
        let jars = self.jars.lock().unwrap_or_else(|p| p.into_inner());
        let cookie = jars
            .get(&(lease.health.platform.clone(), lease.spec.label.clone()))
            .map(Jar::header)
            .unwrap_or_else(|| lease.spec.cookie.clone());
        let mut values: BTreeMap<String, String> =
            base.into_iter().map(|h| (h.name, h.value)).collect();
        values.insert("cookie".into(), cookie);
        values.extend(lease.spec.config.clone());
        values.into_iter().map(|(k, v)| Header::new(k, v)).collect()
    }

    /// Merge the `Set-Cookie` headers of a response from one of the
    /// platform's own hosts into the session; persist when it changed.
    #[cfg(test)]
    pub fn absorb(&self, lease: &SessionLease, api_hosts: &[String], response: &HttpResponse) {
        self.absorb_hop(lease, api_hosts, &response.final_url, &response.headers);
    }

    /// [`Sessions::absorb`] for one answer of a fetch — a redirect hop or
    /// the final answer — that came from `url`.
    pub fn absorb_hop(
        &self,
        lease: &SessionLease,
        api_hosts: &[String],
        url: &str,
        headers: &[Header],
    ) {
        let Some(host) = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        else {
            return;
        };
        if !api_hosts.iter().any(|p| host_matches(&host, p)) {
            return;
        }
        let mut jars = self.jars.lock().unwrap_or_else(|p| p.into_inner());
        let Some(jar) = jars.get_mut(&(lease.health.platform.clone(), lease.spec.label.clone()))
        else {
            return;
        };
        let mut changed = false;
        for h in headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
        {
            changed |= jar.apply(&h.value, &host);
        }
        if changed {
            self.persist(&jars);
        }
    }

    fn persist(&self, jars: &HashMap<JarKey, Jar>) {
        let Some(path) = &self.path else {
            return;
        };
        let saved: Persisted = jars
            .iter()
            .map(|((p, l), jar)| (format!("{p}/{l}"), jar.clone()))
            .collect();
        let written = serde_json::to_vec(&saved)
            .map_err(std::io::Error::other)
            .and_then(|bytes| mediaparse_core::private_file::write_private(path, &bytes));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e.kind(), "cannot save session state");
        }
    }

    /// Record how the session's parse ended (login wall, challenge) or what
    /// one of its requests met.
    pub fn record(&self, lease: &SessionLease, outcome: Outcome, cooling: &Cooling) {
        let cools = matches!(outcome, Outcome::LoginWall | Outcome::Challenge);
        if cools || outcome == Outcome::Ok {
            self.health.record(&lease.health, outcome, cooling);
        }
    }

    /// Every current cookie value of `platform`'s sessions (secrets, for scrubbing).
    pub fn secrets(&self, platform: &str) -> Vec<String> {
        let jars = self.jars.lock().unwrap_or_else(|p| p.into_inner());
        jars.iter()
            .filter(|((p, _), _)| p == platform)
            .flat_map(|(_, jar)| {
                std::iter::once(jar.header())
                    .chain(jar.cookies.iter().map(|(_, v)| v.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The state of `platform`'s sessions, by label.
    pub fn status(&self, platform: &str, specs: &[SessionSpec]) -> Vec<ExitStatus> {
        if specs.is_empty() {
            return Vec::new();
        }
        let keys: Vec<ExitSpec> = specs.iter().map(SessionSpec::health_key).collect();
        self.health.status(platform, &keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(label: &str, cookie: &str) -> SessionSpec {
        SessionSpec {
            label: label.into(),
            cookie: cookie.into(),
            config: BTreeMap::new(),
            exit: None,
        }
    }

    fn response(url: &str, set_cookies: &[&str]) -> HttpResponse {
        HttpResponse {
            request_url: url.into(),
            final_url: url.into(),
            status: 200,
            headers: set_cookies
                .iter()
                .map(|c| Header::new("set-cookie", *c))
                .collect(),
            body: Vec::new(),
        }
    }

    fn cookie_of(config: &[Header]) -> String {
        config
            .iter()
            .find(|h| h.name == "cookie")
            .map(|h| h.value.clone())
            .unwrap_or_default()
    }

    #[test]
    fn set_cookie_from_own_hosts_rotates_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.json");
        let specs = [spec("a", "auth_token=AAA111; ct0=old000")];
        let hosts = ["*.x.com".to_string()];
        {
            let sessions = Sessions::open(Some(path.clone()));
            let lease = sessions
                .lease("twitter", &specs, &|_| true)
                .unwrap()
                .unwrap();
            // Another site's cookies are ignored.
            sessions.absorb(
                &lease,
                &hosts,
                &response("https://evil.example/", &["ct0=evil"]),
            );
            sessions.absorb(
                &lease,
                &hosts,
                &response(
                    "https://api.x.com/1",
                    &[
                        "ct0=new999; Path=/; Secure",
                        "gone=1; Max-Age=0",
                        "twid=u%3D1",
                    ],
                ),
            );
            let config = sessions.config_for(&lease, vec![Header::new("bearer", "B")]);
            assert_eq!(
                cookie_of(&config),
                "auth_token=AAA111; ct0=new999; twid=u%3D1"
            );
            assert!(config.iter().any(|h| h.name == "bearer"));
            assert!(sessions.secrets("twitter").contains(&"new999".to_string()));
        }
        let restarted = Sessions::open(Some(path.clone()));
        let lease = restarted
            .lease("twitter", &specs, &|_| true)
            .unwrap()
            .unwrap();
        assert_eq!(
            cookie_of(&restarted.config_for(&lease, Vec::new())),
            "auth_token=AAA111; ct0=new999; twid=u%3D1"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the session file is the owner's only");
        }
        // An edited session starts again from the configuration.
        let edited = [spec("a", "auth_token=BBB222")];
        let lease = restarted
            .lease("twitter", &edited, &|_| true)
            .unwrap()
            .unwrap();
        assert_eq!(
            cookie_of(&restarted.config_for(&lease, Vec::new())),
            "auth_token=BBB222"
        );
    }

    #[test]
    fn a_cookie_for_another_domain_is_not_merged() {
        let sessions = Sessions::default();
        let specs = [spec("a", "sid=1")];
        let hosts = ["*.x.com".to_string()];
        let lease = sessions
            .lease("twitter", &specs, &|_| true)
            .unwrap()
            .unwrap();
        let hop = |cookie: &str| vec![Header::new("Set-Cookie", cookie)];
        sessions.absorb_hop(
            &lease,
            &hosts,
            "https://api.x.com/r",
            &hop("a=1; Domain=evil.example"),
        );
        sessions.absorb_hop(
            &lease,
            &hosts,
            "https://api.x.com/r",
            &hop("b=2; Domain=notx.com"),
        );
        sessions.absorb_hop(
            &lease,
            &hosts,
            "https://api.x.com/r",
            &hop("c=3; Domain=www.x.com"),
        );
        sessions.absorb_hop(
            &lease,
            &hosts,
            "https://api.x.com/r",
            &hop("d=4; Domain=.x.com"),
        );
        sessions.absorb_hop(
            &lease,
            &hosts,
            "https://api.x.com/r",
            &hop("e=5; Domain=api.x.com"),
        );
        sessions.absorb_hop(&lease, &hosts, "https://evil.example/r", &hop("f=6"));
        assert_eq!(
            cookie_of(&sessions.config_for(&lease, Vec::new())),
            "sid=1; d=4; e=5"
        );
    }

    #[test]
    fn a_login_wall_cools_the_session_and_the_next_parse_takes_another() {
        let sessions = Sessions::default();
        let specs = [spec("a", "sid=1"), spec("b", "sid=2")];
        let cooling = Cooling::default();
        let first = sessions
            .lease("threads", &specs, &|_| true)
            .unwrap()
            .unwrap();
        sessions.record(&first, Outcome::LoginWall, &cooling);
        for _ in 0..3 {
            let next = sessions
                .lease("threads", &specs, &|_| true)
                .unwrap()
                .unwrap();
            assert_ne!(next.spec.label, first.spec.label);
        }
        let other = sessions
            .lease("threads", &specs, &|_| true)
            .unwrap()
            .unwrap();
        sessions.record(&other, Outcome::Challenge, &cooling);
        assert!(sessions.lease("threads", &specs, &|_| true).is_err());
        // Unusable sessions (pinned to a cooling exit) are passed over.
        let fresh = Sessions::default();
        for _ in 0..3 {
            let l = fresh
                .lease("threads", &specs, &|s| s.label != "a")
                .unwrap()
                .unwrap();
            assert_eq!(l.spec.label, "b");
        }
        assert!(fresh.lease("threads", &specs, &|_| false).is_err());
        let status = sessions.status("threads", &specs);
        assert!(status.iter().all(|s| s.cooling));
        assert!(sessions.lease("threads", &[], &|_| true).unwrap().is_none());
    }
}

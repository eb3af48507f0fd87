//! The plan of one routed parse: everything the operator configuration says
//! about its platform — switch, permission, price, limits, secrets, exits,
//! sessions, extractor settings — read once, from one snapshot, before any
//! instance exists; and the platform's circuit breaker, asked then too.

use std::sync::Arc;

use mediaparse_sdk::Header;

use super::health::Probe;
use super::{ParseError, Services};
use mediaparse_config::{OperatorConfig, PlatformLimits};
use mediaparse_core::Secrets;
use mediaparse_fetch::{ExitSpec, SessionSpec};
use mediaparse_registry::LoadedExtractor;
use mediaparse_store::KeyRecord;

/// One parse's view of its platform's configuration.
pub struct PlatformPlan {
    pub platform: String,
    /// Credits a result with media costs.
    pub price: i64,
    pub limits: PlatformLimits,
    /// Everything secret configured for the platform (and its sessions'
    /// cookies as they were when the parse began).
    pub secrets: Secrets,
    /// The platform's exit pool (empty: direct).
    pub exits: Vec<ExitSpec>,
    /// The platform's operator sessions (empty: none).
    pub sessions: Vec<SessionSpec>,
    /// The extractor's `context.config` before a session adds its values.
    pub extractor_config: Vec<Header>,
    /// Held while this parse tries a half-open breaker (released when the
    /// plan is dropped, however the parse ends).
    _probe: Option<Probe>,
    /// The snapshot the plan was read from (secrets are rebuilt from it
    /// when a session rotated its cookies during the parse).
    config: Arc<OperatorConfig>,
}

impl PlatformPlan {
    /// The plan for `ext`'s platform, as `key` may use it: refused when the
    /// platform is switched off, the key may not parse it, or the
    /// platform's breaker is open.
    pub fn of(
        services: &Services,
        config: &Arc<OperatorConfig>,
        ext: &LoadedExtractor,
        key: &KeyRecord,
    ) -> Result<PlatformPlan, ParseError> {
        let platform = ext.platform().to_string();
        let config = config.clone();
        if !config.enabled(&platform) {
            return Err(ParseError::ExtractorUnavailable(platform));
        }
        mediaparse_auth::check_platform(key, &platform)?;
        let probe = services
            .health
            .admit(
                &platform,
                &config.health_policy(&platform),
                std::time::Instant::now(),
            )
            .map_err(|refusal| ParseError::PlatformUnavailable {
                platform: platform.clone(),
                // Whole seconds, rounded up: never earlier than the breaker allows.
                retry_after_secs: refusal.retry_after.as_millis().div_ceil(1000).max(1) as u64,
            })?;
        let mut limits = config.limits_for(&platform);
        limits.fetch.profile =
            config.fetch_profile(&platform, ext.manifest.fetch_profile.as_deref());
        Ok(PlatformPlan {
            price: mediaparse_billing::price(&ext.manifest, config.price_override(&platform)),
            secrets: config.secrets_with(&platform, services.sessions.secrets(&platform)),
            exits: config.exits(&platform),
            sessions: config.sessions(&platform),
            extractor_config: config.extractor_config(&platform),
            limits,
            platform,
            _probe: probe,
            config,
        })
    }

    /// The secrets as they are now: the plan's, plus cookies a session
    /// rotated since (only a parse that held a session can have rotated any).
    pub fn secrets_now(&self, services: &Services, held_session: bool) -> Secrets {
        if held_session {
            self.config
                .secrets_with(&self.platform, services.sessions.secrets(&self.platform))
        } else {
            self.secrets.clone()
        }
    }
}

//! Where one parse's upstream requests leave from: the operator session it
//! holds (if the platform has a pool) and the exit, leased together before
//! the first request and settled once with what the parse met.

use mediaparse_sdk as sdk;

use super::plan::PlatformPlan;
use super::{ParseError, Services};
use mediaparse_fetch::{ExitLease, Outcome, SessionLease};

/// The session and exit one parse holds.
pub struct Egress {
    pub exit: ExitLease,
    pub session: Option<SessionLease>,
}

impl Egress {
    /// One session (passing over any pinned to a cooling exit) and one exit
    /// (the session's own, when it is pinned) for every request of the parse.
    pub fn lease(services: &Services, plan: &PlatformPlan) -> Result<Egress, ParseError> {
        let platform = plan.platform.as_str();
        let session = services.sessions.lease(platform, &plan.sessions, &|s| {
            s.exit
                .as_deref()
                .is_none_or(|e| !services.exits.is_cooling(platform, &plan.exits, e))
        })?;
        let exit = services.exits.lease_among(
            platform,
            &plan.exits,
            session.as_ref().and_then(|s| s.exit()),
        )?;
        Ok(Egress { exit, session })
    }

    /// The extractor's settings with the held session's cookie and values.
    pub fn extractor_config(&self, services: &Services, plan: &PlatformPlan) -> Vec<sdk::Header> {
        let base = plan.extractor_config.clone();
        match &self.session {
            Some(s) => services.sessions.config_for(s, base),
            None => base,
        }
    }

    /// Tell the exit and the session what the parse met: a challenge or a
    /// login wall is only known once the extractor read the answers.
    pub fn settle<T>(
        &self,
        services: &Services,
        plan: &PlatformPlan,
        extracted: &Result<T, ParseError>,
    ) {
        let verdict = match extracted {
            Err(ParseError::Failure(sdk::Failure::RateLimited(_))) => Some(Outcome::Challenge),
            Err(ParseError::Failure(sdk::Failure::LoginRequired(_))) => Some(Outcome::LoginWall),
            _ => None,
        };
        if let Some(outcome) = verdict {
            services
                .exits
                .record(&self.exit, outcome, &plan.limits.cooling);
        }
        if let Some(s) = &self.session {
            let outcome = verdict.unwrap_or(Outcome::Ok);
            services.sessions.record(s, outcome, &plan.limits.cooling);
        }
    }
}

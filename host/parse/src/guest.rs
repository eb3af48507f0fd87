//! A parse's guest: each of its calls (`detect`, then one `step` per
//! round) runs on a fresh instance that ends with the call, on the thread
//! that polls the parse. `detect` is asked only for inputs the component
//! has not answered recently (`registry::Detected`). The guest yields to that thread's other tasks at
//! every epoch tick (`registry::Runtime`), so a long call shares the thread
//! instead of holding it, and the parse crosses to no other thread for it.
//!
//! An instance lives only while its guest runs, never while the parse waits
//! for the platform: the parses in flight hold no linear memory between
//! rounds. The rounds carry nothing from one call to the next but what the
//! host passes in (target, context, exchanges), so a fresh instance answers
//! as the previous one would. If the parse stops waiting (its deadline), the
//! call's future is dropped and its guest never runs again.

use std::sync::Arc;

use super::ParseError;
use super::plan::PlatformPlan;
use mediaparse_core::Secrets;
use mediaparse_registry::{LoadedExtractor, Registry, Round, SandboxLimits, Session};
use mediaparse_sdk as sdk;

/// What a parse's calls instantiate: one extractor with the plan's sandbox
/// limits and secrets.
#[derive(Clone)]
pub struct Guest {
    registry: Arc<Registry>,
    ext: Arc<LoadedExtractor>,
    /// The plan's limits and secrets; `None`: the runtime's defaults.
    sandbox: Option<(SandboxLimits, Secrets)>,
}

impl Guest {
    pub(crate) fn new(
        registry: &Arc<Registry>,
        ext: &Arc<LoadedExtractor>,
        plan: &PlatformPlan,
    ) -> Guest {
        Guest {
            registry: registry.clone(),
            ext: ext.clone(),
            sandbox: Some((plan.limits.sandbox.clone(), plan.secrets.clone())),
        }
    }

    /// `ext` under the runtime's default limits, with no secrets (a
    /// recording, which has no operator plan).
    pub fn unplanned(registry: &Arc<Registry>, ext: &Arc<LoadedExtractor>) -> Guest {
        Guest {
            registry: registry.clone(),
            ext: ext.clone(),
            sandbox: None,
        }
    }

    /// A fresh instance.
    async fn instance(&self) -> Result<Session, ParseError> {
        Ok(match &self.sandbox {
            Some((limits, secrets)) => {
                self.registry
                    .session_with(&self.ext, limits, secrets.clone())
                    .await?
            }
            None => self.registry.session(&self.ext).await?,
        })
    }

    /// `detect(input)`: the component's remembered answer for this input
    /// (`registry::Detected`), else a fresh instance's, then remembered.
    pub async fn detect(
        &self,
        input: &str,
    ) -> Result<Result<sdk::Target, sdk::Failure>, ParseError> {
        if let Some(target) = self.ext.detected.get(input) {
            return Ok(Ok(target));
        }
        let detected = self.instance().await?.detect(input).await?;
        if let Ok(target) = &detected {
            self.ext.detected.keep(input, target);
        }
        Ok(detected)
    }

    /// One round on a fresh instance, and the WIT version that answered it.
    pub async fn step(
        &self,
        target: &sdk::Target,
        ctx: &sdk::Context,
        done: &[sdk::Exchange],
    ) -> Result<(&'static str, Result<Round, sdk::Failure>), ParseError> {
        let mut session = self.instance().await?;
        let stepped = session.step(target, ctx, done).await?;
        Ok((session.wit(), stepped))
    }
}

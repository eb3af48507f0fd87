//! A parse's guest: its calls run on the wasm worker pool
//! ([`crate::registry::WasmPool`]), each trip on a fresh instance that ends
//! with the trip. `detect` is one trip (with the balance pre-check), each
//! round one more.
//!
//! An instance lives only while its guest runs, never while the parse waits
//! for the platform: the parses in flight hold no linear memory between
//! rounds, so memory grows with the pool's threads, not with the parses
//! waiting on slow upstreams. The rounds carry nothing from one call to the
//! next but what the host passes in (target, context, exchanges), so a
//! fresh instance answers as the previous one would. If the parse stops
//! waiting (its deadline), the guest is cancelled and stops at once.

use std::sync::Arc;

use super::ParseError;
use super::admission::Slot;
use super::plan::PlatformPlan;
use crate::core::Secrets;
use crate::registry::{Cancel, LoadedExtractor, Registry, SandboxLimits, Session, WasmPool};
use mediaparse_sdk as sdk;

/// Run `f` on the pool, inside the request's span, holding the parse's
/// admission slot until the guest is done, cancelling it if this future is dropped.
async fn on_pool<T: Send + 'static>(
    cancel: &Cancel,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ParseError> {
    let span = tracing::Span::current();
    let slot = Slot::current();
    let armed = cancel.on_drop();
    crate::core::handoffs::trip();
    let out = WasmPool::global()
        .run(move || {
            let out = span.in_scope(f);
            drop(slot);
            out
        })
        .await;
    armed.disarm();
    out.map_err(|e| ParseError::Internal(e.to_string()))
}

/// What a parse's trips instantiate: one extractor with the plan's sandbox
/// limits and secrets, all its instances interrupted by one [`Cancel`].
#[derive(Clone)]
pub struct Guest {
    registry: Arc<Registry>,
    ext: Arc<LoadedExtractor>,
    /// The plan's limits and secrets; `None`: the runtime's defaults.
    sandbox: Option<(SandboxLimits, Secrets)>,
    cancel: Cancel,
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
            cancel: Cancel::new(),
        }
    }

    /// `ext` under the runtime's default limits, with no secrets (a
    /// recording, which has no operator plan).
    pub fn unplanned(registry: &Arc<Registry>, ext: &Arc<LoadedExtractor>) -> Guest {
        Guest {
            registry: registry.clone(),
            ext: ext.clone(),
            sandbox: None,
            cancel: Cancel::new(),
        }
    }

    /// A fresh instance (called on a pool thread).
    fn instance(&self) -> Result<Session, ParseError> {
        let mut session = match &self.sandbox {
            Some((limits, secrets)) => {
                self.registry
                    .session_with(&self.ext, limits, secrets.clone())?
            }
            None => self.registry.session(&self.ext)?,
        };
        session.cancel_on(self.cancel.clone());
        Ok(session)
    }

    /// `before` (the balance pre-check: a store read that may block), then
    /// `detect(input)`, in one trip.
    pub async fn detect_after<B: Send + 'static>(
        &self,
        input: &str,
        before: impl FnOnce() -> Result<B, ParseError> + Send + 'static,
    ) -> Result<(B, Result<sdk::Target, sdk::Failure>), ParseError> {
        let (guest, input) = (self.clone(), input.to_string());
        on_pool(&self.cancel, move || {
            let first = before()?;
            let detected = guest.instance()?.detect(&input)?;
            Ok::<_, ParseError>((first, detected))
        })
        .await?
    }

    /// Run guest calls on a fresh instance in one trip.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Session) -> T + Send + 'static,
    ) -> Result<T, ParseError> {
        let guest = self.clone();
        on_pool(&self.cancel, move || {
            let mut session = guest.instance()?;
            Ok::<_, ParseError>(f(&mut session))
        })
        .await?
    }
}

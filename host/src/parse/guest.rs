//! A parse's guest calls, handed to the wasm worker pool
//! ([`crate::registry::WasmPool`]) one call sequence at a time: the instance
//! and `detect` in one trip, then one trip per round. If the parse stops
//! waiting (its deadline), the guest is cancelled and stops at once.

use std::sync::Arc;

use super::ParseError;
use super::admission::Slot;
use super::plan::PlatformPlan;
use crate::registry::{Cancel, LoadedExtractor, Registry, Session, WasmPool};
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

/// `before` (the balance pre-check: a store read that may block), then a
/// fresh instance of `ext` with the plan's sandbox limits and secrets and
/// its `detect(input)`, in one trip.
pub(super) async fn instantiate_and_detect<B: Send + 'static>(
    registry: &Arc<Registry>,
    ext: &Arc<LoadedExtractor>,
    plan: &PlatformPlan,
    input: &str,
    before: impl FnOnce() -> Result<B, ParseError> + Send + 'static,
) -> Result<(B, Session, Result<sdk::Target, sdk::Failure>), ParseError> {
    let cancel = Cancel::new();
    let (registry, ext, sandbox, secrets, input) = (
        registry.clone(),
        ext.clone(),
        plan.limits.sandbox.clone(),
        plan.secrets.clone(),
        input.to_string(),
    );
    let job_cancel = cancel.clone();
    on_pool(&cancel, move || {
        let first = before()?;
        let mut session = registry.session_with(&ext, &sandbox, secrets)?;
        session.cancel_on(job_cancel);
        let detected = session.detect(&input)?;
        Ok::<_, ParseError>((first, session, detected))
    })
    .await?
}

/// Run guest calls on `session` in one trip, handing the session back.
pub(crate) async fn call<T: Send + 'static>(
    mut session: Session,
    f: impl FnOnce(&mut Session) -> T + Send + 'static,
) -> Result<(Session, T), ParseError> {
    let cancel = session.cancel().clone();
    on_pool(&cancel, move || {
        let out = f(&mut session);
        (session, out)
    })
    .await
}

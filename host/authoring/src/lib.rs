//! Tools for extractor authors: `mediaparse record` (a live parse written
//! as a fixture case, secrets scrubbed) and `mediaparse replay` (a fixture
//! case run through the real wasm component, with a diff). Both reuse the
//! host's own parts: the registry and runtime, the fetcher, the pipeline's
//! plan/fetch loop, and the SDK's replay harness.

pub mod failures;
pub mod record;
pub mod replay;
pub mod scrub;

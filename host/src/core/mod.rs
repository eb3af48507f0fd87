//! The leaf layer: types every other layer may use and that use nothing
//! else of the crate — the error table, limits, the secrets policy, the
//! platform-data sanitizer and the platform data's text, clocks and ids.

pub mod clock;
pub mod errors;
pub mod ids;
pub mod limits;
pub mod platform_data;
pub mod private_file;
pub mod sanitize;
pub mod secrets;

pub use clock::Clock;
pub use errors::{ErrorCode, ErrorSpec, Retry};
pub use limits::ParseLimits;
pub use platform_data::PlatformData;
pub use secrets::Secrets;

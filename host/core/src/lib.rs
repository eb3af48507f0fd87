//! The leaf layer: types every other layer may use and that use nothing
//! else of the crate — the error table and the error every door shows,
//! limits, the health policy, the secrets policy, the platform-data sanitizer and the platform
//! data's text, clocks, ids and the hand-off count.

pub mod api_error;
pub mod clock;
pub mod delivery;
pub mod errors;
pub mod handoffs;
pub mod health;
pub mod ids;
pub mod limits;
pub mod platform_data;
pub mod private_file;
pub mod sanitize;
pub mod secrets;

pub use api_error::ApiError;
pub use clock::Clock;
pub use delivery::Delivery;
pub use errors::{ErrorCode, ErrorSpec, Retry};
pub use limits::ParseLimits;
pub use platform_data::{GuestPlatformData, PlatformData};
pub use secrets::Secrets;

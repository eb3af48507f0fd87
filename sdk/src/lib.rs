//! # mediaparse-sdk
//!
//! What an extractor author touches. An extractor is a type implementing
//! [`Extractor`] plus one [`export_extractor!`] line; the SDK turns it into a
//! WebAssembly component for the host, and [`replay`] runs the same code
//! natively against recorded fixture cases.
//!
//! Extractors are pure: no clock, randomness, files or sockets. They
//! recognise URLs ([`Extractor::detect`]), plan upstream requests
//! ([`Extractor::plan`]) and map the answers ([`Extractor::map`]).

pub mod base62;
pub mod bigints;
pub mod bvid;
pub mod cookies;
pub mod exchanges;
pub mod html;
pub mod jsobj;
pub mod log;
pub mod share;
pub mod shortcode;
pub mod spec;
pub mod types;
pub mod urls;

#[cfg(not(target_arch = "wasm32"))]
pub mod fixture;
#[cfg(not(target_arch = "wasm32"))]
pub mod replay;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

pub use serde_json;
pub use types::*;

/// The WIT package version this SDK builds components against.
pub const WIT_VERSION: &str = "1.0.0";
/// The WIT major version; the host refuses components of another major.
pub const WIT_MAJOR: u32 = 1;

/// The result type extractor functions return.
pub type Result<T, E = Failure> = std::result::Result<T, E>;

/// A platform extractor. All functions are associated (no `self`): an
/// extractor keeps no state between calls; everything it knows arrives as
/// arguments.
pub trait Extractor {
    /// Who this extractor is and which hosts it accepts and may fetch.
    fn info() -> Info;
    /// Recognise a caller's input (a URL, or share text holding one).
    fn detect(input: &str) -> Result<Target>;
    /// Given everything fetched so far, ask for more requests or say ready.
    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan>;
    /// Map the fetched answers to the media object and platform data.
    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction>;
}

/// Export a type implementing [`Extractor`] as the component's entry points.
///
/// ```ignore
/// struct TikTok;
/// impl mediaparse_sdk::Extractor for TikTok { /* ... */ }
/// mediaparse_sdk::export_extractor!(TikTok);
/// ```
///
/// Natively (tests, the replay harness) this expands to nothing.
#[macro_export]
macro_rules! export_extractor {
    ($ty:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __MediaparseGuest;
            impl $crate::guest::bindings::Guest for __MediaparseGuest {
                fn info() -> $crate::guest::bindings::Info {
                    $crate::guest::info::<$ty>()
                }
                fn detect(
                    input: ::std::string::String,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::Target,
                    $crate::guest::bindings::Failure,
                > {
                    $crate::guest::detect::<$ty>(input)
                }
                fn plan(
                    target: $crate::guest::bindings::Target,
                    ctx: $crate::guest::bindings::Context,
                    done: ::std::vec::Vec<$crate::guest::bindings::Exchange>,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::Plan,
                    $crate::guest::bindings::Failure,
                > {
                    $crate::guest::plan::<$ty>(target, ctx, done)
                }
                fn map(
                    target: $crate::guest::bindings::Target,
                    ctx: $crate::guest::bindings::Context,
                    done: ::std::vec::Vec<$crate::guest::bindings::Exchange>,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::Extraction,
                    $crate::guest::bindings::Failure,
                > {
                    $crate::guest::map::<$ty>(target, ctx, done)
                }
            }
            $crate::guest::bindings::__export_extractor_world!(
                __MediaparseGuest with_types_in $crate::guest::bindings
            );
        };
    };
}

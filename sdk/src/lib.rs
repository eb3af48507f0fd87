//! # mediaparse-sdk
//!
//! What an extractor author touches. An extractor is a type implementing
//! [`Extractor`] plus one [`export_extractor!`] line; the SDK turns it into a
//! WebAssembly component for the host (`wasm32-wasip2`, WIT
//! `mediaparse:extractor@`[`WIT_VERSION`]), and [`replay`] runs the same code
//! natively against recorded fixture cases ([`fixture`]).
//!
//! Extractors are pure: no clock, randomness, files or sockets. They
//! recognise URLs ([`Extractor::detect`]) and describe their flow once
//! ([`Extractor::step`]): given the exchanges so far, the next requests or
//! the finished extraction. The host performs every request; the WIT
//! `plan`/`map` calls are derived from `step` ([`flow`]).
//! docs/writing-an-extractor.md walks through one.
//!
//! Chores every platform has live here too: short links ([`links`]),
//! percent-encoding ([`encode`]), lenient ids and numbers ([`ids`]), typed
//! borrowing reads of only the fields an extractor needs ([`fields`]),
//! User-Agent presets ([`ua`]), lookups in `done` ([`exchanges`]),
//! fallback strategies ([`cascade`]) and platform data written as JSON text
//! from the upstream's own text ([`platform_data`]).
//!
//! A whole (tiny) extractor, and its plan/map loop driven by hand as the
//! host would:
//!
//! ```
//! use mediaparse_sdk::exchanges::Exchanges;
//! use mediaparse_sdk::urls::InputUrl;
//! use mediaparse_sdk::*;
//!
//! pub struct Example;
//!
//! impl Extractor for Example {
//!     fn info() -> Info {
//!         Info {
//!             platform: "example".into(),
//!             version: "0.1.0".into(),
//!             url_hosts: vec!["*.example.com".into()],
//!             api_hosts: vec!["api.example.com".into()],
//!             url_shapes: vec!["https://example.com/v/{id}".into()],
//!         }
//!     }
//!     fn detect(input: &str) -> Result<Target> {
//!         let url = InputUrl::parse(input)?;
//!         let id = url
//!             .path("/v/{id}")
//!             .and_then(|c| c.get("id").map(String::from))
//!             .filter(|_| url.host_in(&["*.example.com"]))
//!             .ok_or_else(|| Failure::unsupported("not an example.com video"))?;
//!         Ok(Target { platform: "example".into(), canonical_url: format!("https://example.com/v/{id}"), id, input: input.into() })
//!     }
//!     fn step(t: &Target, _: &Context, done: &[Exchange]) -> Result<Step> {
//!         #[derive(serde::Deserialize)]
//!         struct Post { title: String, mp4: String }
//!         let Some(answer) = done.last_to("https://api.example.com/") else {
//!             return Ok(Step::one(HttpRequest::get(format!("https://api.example.com/videos/{}", t.id))));
//!         };
//!         let post: Post = answer.response.json()?; // a shape we do not know → upstream-changed
//!         let video = Video { url: post.mp4, quality: "720p".into(), mime_type: "video/mp4".into(), width: 1280,
//!                             height: 720, has_audio: true, source: MediaSource::Direct, headers: vec![] };
//!         Ok(Step::Done(Extraction {
//!             media: Media { title: post.title, videos: vec![video], ..Media::default() },
//!             // The whole answer's text; `ObjectWriter` picks members instead.
//!             platform_data: answer.response.json()?,
//!         }))
//!     }
//! }
//!
//! export_extractor!(Example); // the component's entry points (nothing natively)
//!
//! let target = Example::detect("https://www.example.com/v/42?ref=share").unwrap();
//! let ctx = Context::default();
//! let Ok(Plan::Fetch(requests)) = Example::plan(&target, &ctx, &[]) else { panic!() };
//! let response = HttpResponse {
//!     request_url: requests[0].url.clone(), final_url: requests[0].url.clone(), status: 200, headers: vec![],
//!     body: br#"{"title":"A clip","mp4":"https://cdn.example.com/42.mp4"}"#.to_vec(),
//! };
//! let done = vec![Exchange { request: requests[0].clone(), response }];
//! assert_eq!(Example::plan(&target, &ctx, &done), Ok(Plan::Ready));
//! let extraction = Example::map(&target, &ctx, &done).unwrap();
//! assert_eq!(extraction.media.videos[0].url, "https://cdn.example.com/42.mp4");
//! assert!(Example::detect("https://www.example.com/user/someone").is_err());
//! ```

#![deny(missing_docs)]

pub mod bigints;
pub mod cascade;
pub mod cookies;
pub mod encode;
pub mod exchanges;
pub mod fields;
pub mod flow;
pub mod html;
pub mod ids;
pub mod jsobj;
pub mod json;
pub mod links;
pub mod log;
pub mod platform_data;
pub mod share;
pub mod spec;

#[doc(hidden)]
pub use mediaparse_catalogue_macros::embedded_platform as __embedded_platform;
pub mod types;
pub mod ua;
pub mod urls;

#[cfg(not(target_arch = "wasm32"))]
pub mod anchors;
#[cfg(not(target_arch = "wasm32"))]
pub mod fixture;
#[cfg(not(target_arch = "wasm32"))]
pub mod replay;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

pub use flow::{Step, Stepped};
pub use platform_data::{ObjectWriter, PlatformData};
pub use serde_json;
pub use types::*;

/// The WIT package version this SDK builds components against. The host
/// refuses a component built against another major, by name.
///
/// ```
/// assert_eq!(mediaparse_sdk::WIT_VERSION, "1.1.0");
/// assert!(mediaparse_sdk::WIT_VERSION.starts_with(&format!("{}.", mediaparse_sdk::WIT_MAJOR)));
/// ```
pub const WIT_VERSION: &str = "1.1.0";
/// The WIT major version; the host refuses components of another major.
pub const WIT_MAJOR: u32 = 1;

/// The result type extractor functions return.
pub type Result<T, E = Failure> = std::result::Result<T, E>;

/// A platform extractor. All functions are associated (no `self`): an
/// extractor keeps no state between calls; everything it knows arrives as
/// arguments.
///
/// An extractor implements [`Extractor::info`], [`Extractor::detect`] and
/// [`Extractor::step`]; the WIT calls `plan` and `map` are derived from
/// `step` ([`flow::plan_of`], [`flow::map_of`]).
pub trait Extractor {
    /// Who this extractor is and which hosts it accepts and may fetch.
    fn info() -> Info;
    /// Recognise a caller's input (a URL, or share text holding one).
    fn detect(input: &str) -> Result<Target>;
    /// Given everything fetched so far, the next requests or the finished
    /// extraction.
    ///
    /// The default is a clear failure, only so that extractors still written
    /// as `plan` + `map` compile while they move to `step`.
    fn step(_target: &Target, _ctx: &Context, _done: &[Exchange]) -> Result<Step> {
        Err(Failure::changed(
            "this extractor implements neither step nor plan and map",
        ))
    }
    /// [`Extractor::step`] and the values to remember ([`Memo`]): the WIT
    /// 1.1 `step` call. Override it (instead of `step`) to remember values.
    fn stepped(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Stepped> {
        Self::step(target, ctx, done).map(Stepped::from)
    }
    /// The WIT `plan` call: more requests, or ready to map. Derived from
    /// [`Extractor::step`]; do not override in new code.
    fn plan(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Plan> {
        flow::plan_of(Self::step(target, ctx, done))
    }
    /// The WIT `map` call: the finished extraction. Derived from
    /// [`Extractor::step`]; do not override in new code.
    fn map(target: &Target, ctx: &Context, done: &[Exchange]) -> Result<Extraction> {
        flow::map_of(Self::step(target, ctx, done))
    }
}

/// Export a type implementing [`Extractor`] as the component's entry points.
/// Use it once, at the end of the extractor's `lib.rs` (see the crate
/// example). Natively (tests, the replay harness) it expands to nothing;
/// for `wasm32` it implements the WIT world's exports by converting
/// between the generated bindings and the SDK's types, and compiles in the
/// listed members of the crate's `platform.toml` (beside its `Cargo.toml`),
/// from which [`spec::fill_missing_members`] learns them.
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
                    $crate::spec::embed_platform($crate::__embedded_platform!());
                    $crate::guest::plan::<$ty>(target, ctx, done)
                }
                fn step(
                    target: $crate::guest::bindings::Target,
                    ctx: $crate::guest::bindings::Context,
                    done: ::std::vec::Vec<$crate::guest::bindings::Exchange>,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::Stepped,
                    $crate::guest::bindings::Failure,
                > {
                    $crate::spec::embed_platform($crate::__embedded_platform!());
                    $crate::guest::step::<$ty>(target, ctx, done)
                }
                fn map(
                    target: $crate::guest::bindings::Target,
                    ctx: $crate::guest::bindings::Context,
                    done: ::std::vec::Vec<$crate::guest::bindings::Exchange>,
                ) -> ::std::result::Result<
                    $crate::guest::bindings::Extraction,
                    $crate::guest::bindings::Failure,
                > {
                    $crate::spec::embed_platform($crate::__embedded_platform!());
                    $crate::guest::map::<$ty>(target, ctx, done)
                }
            }
            $crate::guest::bindings::__export_extractor_world!(
                __MediaparseGuest with_types_in $crate::guest::bindings
            );
        };
    };
}

//! The platform catalogue: what the service knows about a platform is data,
//! not code. Each extractor folder carries a `platform.toml` (see
//! [`Manifest`]); `cargo xtask build-extractors` installs it as `<id>.toml`
//! beside `<id>.wasm`, the host's registry loads both, and the SDK's replay
//! harness checks an extractor's answers against its own file.
//!
//! ```
//! let manifest = mediaparse_catalogue::Manifest::parse(r#"
//!     id = "example"
//!     name = "Example"
//!     price = 4
//!     example_url = "https://example.com/p/1"
//!     members = [{ name = "id", type = "string" }]
//! "#).unwrap();
//! assert_eq!(manifest.price, 4);
//! let problems = manifest.check_platform_data(&serde_json::json!({"id": 7}));
//! assert_eq!(problems, ["listed member `id` should be String, is 7"]);
//! ```

#[cfg(feature = "parse")]
mod catalogue;
#[cfg(feature = "parse")]
mod manifest;
mod members;

#[cfg(feature = "parse")]
pub use catalogue::Catalogue;
#[cfg(feature = "parse")]
pub use manifest::{
    Canary, CanaryExpect, FETCH_PROFILES, Manifest, ManifestError, Member, OptionalMember,
    is_platform_id,
};
pub use members::{Kind, check_members, fill_members};

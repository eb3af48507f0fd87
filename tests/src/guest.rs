//! The test guest (`tests/guests/mptest`) as any platform and any version:
//! its identity is a fixed-width record in its data section, patched here,
//! so one cheap build yields as many distinct components as a test needs.
//! Plus the broken variants a hot-reload test swaps in.

use std::path::Path;

use crate::paths;

const MARKER: &[u8] = b"MPTEST-IDENT:";

/// The test guest claiming to be `platform` at `version`.
pub fn component(platform: &str, version: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(paths::test_guest("mptest")).expect("reading mptest.wasm");
    let at = bytes
        .windows(MARKER.len())
        .position(|w| w == MARKER)
        .expect("mptest.wasm has no identity record")
        + MARKER.len();
    assert!(platform.len() <= 16 && version.len() <= 16);
    let field = |s: &str| format!("{s:<16}").into_bytes();
    bytes[at..at + 16].copy_from_slice(&field(platform));
    bytes[at + 16..at + 32].copy_from_slice(&field(version));
    bytes
}

/// The same component, claiming WIT `mediaparse:extractor@2.0.0` in every
/// interface name (a component of a major this host does not speak).
pub fn wit_major_2(bytes: &[u8]) -> Vec<u8> {
    replace_all(
        bytes,
        b"mediaparse:extractor/types@1.1.0",
        b"mediaparse:extractor/types@2.0.0",
    )
}

/// Not a component at all: the first kilobyte of one.
pub fn truncated(bytes: &[u8]) -> Vec<u8> {
    bytes[..1024.min(bytes.len())].to_vec()
}

/// The `platform.toml` text for a test guest installed as `platform`.
pub fn manifest(platform: &str) -> String {
    let bundled = paths::workspace_root()
        .join("extractors")
        .join(platform)
        .join("platform.toml");
    std::fs::read_to_string(bundled).unwrap_or_else(|_| {
        format!(
            "id = \"{platform}\"\nname = \"{platform}\"\nprice = 1\n\
             example_url = \"https://{platform}.mptest.example/ok\"\n"
        )
    })
}

fn replace_all(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut out = haystack.to_vec();
    let mut i = 0;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from {
            out[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
    out
}

/// Put `bytes` in place as `dir/<platform>.wasm` the way an operator
/// should: write a hidden temporary file, then rename over the old one.
/// Its `<platform>.toml` goes first (the bundled one for a SPEC platform,
/// so prices stay SPEC's), unless one is there already.
pub fn install(dir: &Path, platform: &str, bytes: &[u8]) {
    let toml = dir.join(format!("{platform}.toml"));
    if !toml.exists() {
        let tmp = dir.join(format!(".{platform}.toml.tmp"));
        std::fs::write(&tmp, manifest(platform)).expect("writing platform.toml");
        std::fs::rename(&tmp, &toml).expect("renaming platform.toml");
    }
    let tmp = dir.join(format!(".{platform}.wasm.tmp"));
    std::fs::write(&tmp, bytes).expect("writing component");
    std::fs::rename(&tmp, dir.join(format!("{platform}.wasm"))).expect("renaming component");
}

//! `cargo xtask dist`: the release as one tarball an operator unpacks and
//! runs, no Rust involved:
//!
//! ```text
//! mediaparse-<version>-<target>/
//!   bin/mediaparse                  the host binary
//!   extractors/<id>.wasm, <id>.toml every bundled extractor, as `serve` loads them
//!   etc/mediaparse.toml             example operator configuration (works as is)
//!   systemd/mediaparse.service      hardened unit for /opt/mediaparse
//!   INSTALL.md                      the install note
//! ```
//!
//! `serve` finds `extractors/` beside the binary's folder by default, so the
//! unpacked folder runs as it is. `cargo xtask test` packs the same layout
//! around the debug binary it has built, for the end-to-end test that starts
//! the service from an unpacked tarball.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, extractors_out, platforms, root, run, target_dir};

/// The files of `dist/` copied into the tarball: (source, place inside it).
const DIST_FILES: &[(&str, &str)] = &[
    ("dist/mediaparse.toml", "etc/mediaparse.toml"),
    ("dist/mediaparse.service", "systemd/mediaparse.service"),
    ("dist/INSTALL.md", "INSTALL.md"),
];

/// `cargo xtask dist`: release host and components, then the tarball.
pub fn dist() -> Result {
    let steps = 4;
    step(1, steps, "building the bundled extractors (wasm32-wasip2)");
    crate::build_extractors()?;
    step(
        2,
        steps,
        "building the release host (target/release/mediaparse)",
    );
    let bin = crate::build_release_host()?;
    step(
        3,
        steps,
        "packing the tarball (the binary without its symbols)",
    );
    let out = target_dir().join("dist");
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let stripped = stripped_copy(&bin, &out.join("mediaparse.stripped"))?;
    let tarball = pack(&stripped, &out, "")?;
    let _ = std::fs::remove_file(&stripped);
    step(4, steps, "checking the tarball lists every file");
    check_listing(&tarball)?;
    let size = std::fs::metadata(&tarball).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "dist: {} ({:.1} MiB)",
        tarball.display(),
        size as f64 / (1024.0 * 1024.0)
    );
    Ok(())
}

fn step(n: usize, of: usize, what: &str) {
    eprintln!("dist [{n}/{of}] {what}");
}

/// The tarball's folder name: `mediaparse-<version>-<target>` and `suffix`.
pub fn release_name(suffix: &str) -> Result<String> {
    Ok(format!(
        "mediaparse-{}-{}{suffix}",
        env!("CARGO_PKG_VERSION"),
        host_target()?
    ))
}

/// The target triple rustc builds for by default (`rustc -vV`'s `host:`).
fn host_target() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|t| t.trim().to_string())
        .ok_or_else(|| "rustc -vV named no host target".into())
}

/// Lay out `bin` with the built extractors and the `dist/` files under
/// `out/<name>/` and pack it as `out/<name>.tar.gz`. `suffix` marks a
/// tarball that is not the release one (`-debug`).
pub fn pack(bin: &Path, out: &Path, suffix: &str) -> Result<PathBuf> {
    let name = release_name(suffix)?;
    let stage = out.join(&name);
    if stage.exists() {
        std::fs::remove_dir_all(&stage)
            .map_err(|e| format!("removing {}: {e}", stage.display()))?;
    }
    let mkdir =
        |p: &Path| std::fs::create_dir_all(p).map_err(|e| format!("creating {}: {e}", p.display()));
    mkdir(&stage.join("bin"))?;
    copy(bin, &stage.join("bin").join("mediaparse"))?;
    let extractors = stage.join("extractors");
    mkdir(&extractors)?;
    for p in platforms()? {
        for ext in ["wasm", "toml"] {
            let file = format!("{p}.{ext}");
            copy(&extractors_out().join(&file), &extractors.join(&file))?;
        }
    }
    for (from, to) in DIST_FILES {
        let to = stage.join(to);
        if let Some(parent) = to.parent() {
            mkdir(parent)?;
        }
        copy(&root().join(from), &to)?;
    }
    let tarball = out.join(format!("{name}.tar.gz"));
    // Owned by root in the archive, whoever packed it; files in name order.
    let mut tar = Command::new("tar");
    tar.arg("-czf")
        .arg(&tarball)
        .args(["--owner=0", "--group=0", "--numeric-owner", "--sort=name"])
        .arg("-C")
        .arg(out)
        .arg(&name);
    run(tar)?;
    // Only tarballs stay in `out`: it is the container build's context.
    std::fs::remove_dir_all(&stage).map_err(|e| format!("removing {}: {e}", stage.display()))?;
    Ok(tarball)
}

/// `bin` without its symbol tables and debug sections, written to `to`
/// (binutils' `strip`); the build's own binary keeps them for profiling.
fn stripped_copy(bin: &Path, to: &Path) -> Result<PathBuf> {
    let mut strip = Command::new("strip");
    strip.arg("--strip-all").arg("-o").arg(to).arg(bin);
    run(strip).map_err(|e| format!("{e} (strip comes with binutils: apt-get install binutils)"))?;
    Ok(to.to_path_buf())
}

fn copy(from: &Path, to: &Path) -> Result {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copying {} to {}: {e}", from.display(), to.display()))
}

/// Every file the layout promises is in the archive (read back with `tar -t`).
fn check_listing(tarball: &Path) -> Result {
    let out = Command::new("tar")
        .arg("-tzf")
        .arg(tarball)
        .output()
        .map_err(|e| format!("tar -t: {e}"))?;
    let listing = String::from_utf8_lossy(&out.stdout);
    let name = tarball
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".tar.gz"))
        .unwrap_or_default();
    let mut wanted = vec!["bin/mediaparse".to_string()];
    for p in platforms()? {
        wanted.push(format!("extractors/{p}.wasm"));
        wanted.push(format!("extractors/{p}.toml"));
    }
    wanted.extend(DIST_FILES.iter().map(|(_, to)| to.to_string()));
    let missing: Vec<String> = wanted
        .into_iter()
        .filter(|w| !listing.lines().any(|l| l == format!("{name}/{w}")))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} lacks {}",
            tarball.display(),
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The release binary is packed without its symbols: a copy of a
    /// binary that has them (this test's own) is smaller and still runs.
    #[test]
    fn the_packed_binary_is_stripped_and_still_runs() {
        let me = std::env::current_exe().unwrap();
        let out = std::env::temp_dir().join(format!("xtask-strip-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let stripped = stripped_copy(&me, &out.join("stripped")).unwrap();
        let (before, after) = (
            std::fs::metadata(&me).unwrap().len(),
            std::fs::metadata(&stripped).unwrap().len(),
        );
        let ran = Command::new(&stripped).arg("--list").output().unwrap();
        std::fs::remove_dir_all(&out).unwrap();
        assert!(after < before, "stripped {after} bytes, not under {before}");
        assert!(ran.status.success(), "the stripped binary runs");
    }

    /// The layout around a stand-in binary, read back from the archive
    /// (needs the built extractors in `target/extractors`, as every test
    /// run through `cargo xtask test` has them).
    #[test]
    fn the_tarball_holds_the_binary_every_extractor_and_the_dist_files() {
        let out = std::env::temp_dir().join(format!("xtask-dist-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let bin = out.join("stand-in");
        std::fs::write(&bin, b"#!/bin/sh\n").unwrap();
        let packed = pack(&bin, &out, "-check").map(|t| (check_listing(&t), t));
        let listing = packed.as_ref().ok().map(|(_, t)| {
            let out = Command::new("tar").arg("-tzvf").arg(t).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        });
        std::fs::remove_dir_all(&out).unwrap();
        let (checked, tarball) = packed.unwrap();
        checked.unwrap();
        let name = release_name("-check").unwrap();
        assert!(tarball.ends_with(format!("{name}.tar.gz")));
        assert!(name.starts_with(&format!("mediaparse-{}-", env!("CARGO_PKG_VERSION"))));
        let listing = listing.unwrap();
        assert!(
            listing.lines().all(|l| l.contains(" 0/0 ")),
            "every entry owned by root: {listing}"
        );
        assert_eq!(
            listing.matches(".wasm").count(),
            platforms().unwrap().len(),
            "{listing}"
        );
    }
}

//! The native tools the builds need besides Rust, installed with apt when
//! missing and we run as root (saying so), otherwise we stop with the command:
//! - the host: the browser fetch backend vendors BoringSSL (wreq → btls-sys),
//!   built with `cmake`, a C/C++ compiler and `bindgen` (which loads `libclang`);
//! - the youtube component: QuickJS (rquickjs-sys) is C, compiled for
//!   wasm32-wasip2 with clang-19 and llvm-ar-19 against Debian's wasi-libc
//!   headers (see `.cargo/config.toml`).

use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use crate::Result;

/// Debian packages the host's build needs.
const HOST_PACKAGES: &[&str] = &["cmake", "g++", "libclang-dev"];

/// Debian packages the extractors' build needs.
const GUEST_PACKAGES: &[&str] = &["clang-19", "llvm-19", "wasi-libc"];

/// Held around every `apt-get` xtask runs: the build tools and the test
/// programs are installed from different threads, and two `apt-get`s at
/// once fail on dpkg's lock.
static APT: Mutex<()> = Mutex::new(());

/// The right to run `apt-get` now.
pub fn apt_turn() -> MutexGuard<'static, ()> {
    APT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub fn ensure_native_build_tools() -> Result {
    ensure(
        HOST_PACKAGES,
        "to build BoringSSL for the browser fetch backend",
    )
}

pub fn ensure_guest_build_tools() -> Result {
    ensure(
        GUEST_PACKAGES,
        "to compile QuickJS into the youtube component for wasm32-wasip2",
    )
}

fn ensure(packages: &[&'static str], purpose: &str) -> Result {
    let _turn = apt_turn();
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|package| !present(package))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let command = format!(
        "apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    );
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !is_root || !has("apt-get") {
        return Err(format!(
            "the build needs {} ({purpose}): run `sudo {command}` (Debian/Ubuntu), then again",
            missing.join(", ")
        ));
    }
    eprintln!(
        "xtask: installing {} ({purpose}): apt-get update && {command}",
        missing.join(" ")
    );
    let apt = |args: &[&str]| {
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(&missing);
    if !(apt(&["update"]) && apt(&install)) {
        return Err(format!("`{command}` failed"));
    }
    Ok(())
}

fn present(package: &str) -> bool {
    match package {
        "cmake" => has("cmake"),
        "g++" => has("c++") || has("g++") || has("clang++"),
        "libclang-dev" => libclang_present(),
        "clang-19" => has("clang-19"),
        "llvm-19" => has("llvm-ar-19"),
        "wasi-libc" => Path::new("/usr/include/wasm32-wasi/stdlib.h").is_file(),
        _ => false,
    }
}

fn has(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// bindgen looks in `LIBCLANG_PATH`, then the usual LLVM folders.
fn libclang_present() -> bool {
    let dirs: Vec<String> = std::env::var("LIBCLANG_PATH")
        .into_iter()
        .chain(
            std::fs::read_dir("/usr/lib")
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("llvm-"))
                .map(|e| e.path().join("lib").display().to_string()),
        )
        .chain([
            "/usr/lib/x86_64-linux-gnu".into(),
            "/usr/lib/aarch64-linux-gnu".into(),
            "/usr/lib".into(),
        ])
        .collect();
    dirs.iter().any(|d| {
        std::fs::read_dir(Path::new(d))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name == "libclang.so"
                    || name.starts_with("libclang.so.")
                    || (name.starts_with("libclang-") && name.contains(".so"))
            })
    })
}

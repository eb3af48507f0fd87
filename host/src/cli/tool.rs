//! `mediaparse <platform> ARGS…`: a platform's own operator tool, run in that
//! platform's sandbox. The host names no platform and knows no tool: it calls
//! the component's `step` with the target id `@tool`, the arguments (JSON
//! array) as the target's input, and every argument that names a readable
//! file handed in as a `file:<path>` exchange (size-capped). A finished step's
//! platform data is printed (exit 0); a failure's message goes to stderr
//! (exit 1). The component never fetches anything here: a step that asks for
//! requests is refused.

use std::path::Path;

use crate::registry::{Next, Registry, Runtime, SandboxLimits};
use mediaparse_sdk as sdk;

/// Target id that tells a component it runs as a tool, not a parse.
pub const TOOL_ID: &str = "@tool";
/// Largest file handed to a tool.
const MAX_FILE_BYTES: u64 = 32 << 20;

pub fn run(args: &[String], dir: &Path) -> anyhow::Result<i32> {
    let Some((platform, rest)) = args.split_first() else {
        anyhow::bail!("no command");
    };
    if !dir.join(format!("{platform}.wasm")).is_file() {
        // What clap says of an unknown subcommand: usage error, exit 2.
        eprintln!(
            "mediaparse: unrecognized subcommand {platform:?} (and no platform of that id in {}); see --help",
            dir.display()
        );
        return Ok(2);
    }
    // Only this platform's component, through the compiled cache the
    // service uses (`MEDIAPARSE_COMPILED_CACHE`, `off` to compile afresh):
    // an operator's tool starts in milliseconds, not after compiling all.
    let cache = match std::env::var_os("MEDIAPARSE_COMPILED_CACHE") {
        Some(d) if d == "off" => None,
        Some(d) => Some(std::path::PathBuf::from(d)),
        None => Some(dir.join(".cwasm-cache")),
    };
    let registry = Registry::with_cache(Runtime::new(SandboxLimits::default())?, cache);
    let ext = registry
        .load_file(&dir.join(format!("{platform}.wasm")))
        .map_err(|e| anyhow::anyhow!("{platform} did not load from {}: {e}", dir.display()))?;
    let mut done = Vec::new();
    for arg in rest {
        let path = Path::new(arg);
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        if meta.len() > MAX_FILE_BYTES {
            anyhow::bail!("{arg}: larger than {MAX_FILE_BYTES} bytes");
        }
        let url = format!("file:{arg}");
        done.push(sdk::Exchange {
            request: sdk::HttpRequest::get(url.clone()),
            response: sdk::HttpResponse {
                request_url: url.clone(),
                final_url: url,
                status: 200,
                headers: Vec::new(),
                body: std::fs::read(path)?,
            },
        });
    }
    let target = sdk::Target {
        platform: platform.clone(),
        id: TOOL_ID.into(),
        canonical_url: String::new(),
        input: serde_json::to_string(rest)?,
    };
    let now_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let ctx = sdk::Context {
        now_unix_ms,
        config: Vec::new(),
        remembered: Vec::new(),
    };
    let stepped = crate::registry::run_blocking(async {
        registry
            .session(&ext)
            .await?
            .step(&target, &ctx, &done)
            .await
    })?;
    match stepped {
        Ok(round) => match round.next {
            Next::Done(_, data) => {
                println!("{data}");
                Ok(0)
            }
            Next::Fetch(_) => {
                anyhow::bail!("{platform}'s tool asked for network requests; tools run offline")
            }
        },
        Err(f) => {
            eprintln!("{platform}: {f}");
            Ok(1)
        }
    }
}

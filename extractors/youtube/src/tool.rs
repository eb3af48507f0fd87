//! The operator's tool, run by `mediaparse youtube ARGS…` in this component's
//! sandbox (the host hands the arguments as the target's input and each
//! named file as a `file:<path>` exchange; see the host's `cli/tool.rs`):
//!
//! `solve --player FILE [--n VALUE]... [--sig VALUE]...` → platform data
//! `{"player": FILE, "n": {VALUE: answer}, "sig": {VALUE: answer}}`, or a
//! failure naming the function that could not be found.

use mediaparse_sdk::{Exchange, Extraction, Failure, Media, Result, Target};
use mediaparse_youtube_solver::{Solver, prepare};
use serde_json::{Map, Value, json};

/// Target id the host uses for a tool run.
pub const TOOL_ID: &str = "@tool";

const USAGE: &str = "usage: mediaparse youtube solve --player FILE [--n VALUE]... [--sig VALUE]...";

pub fn run(target: &Target, done: &[Exchange]) -> Result<Extraction> {
    let args: Vec<String> =
        serde_json::from_str(&target.input).map_err(|_| Failure::unsupported(USAGE))?;
    let (Some("solve"), rest) = (
        args.first().map(String::as_str),
        args.get(1..).unwrap_or_default(),
    ) else {
        return Err(Failure::unsupported(USAGE));
    };
    let mut player = None;
    let (mut ns, mut sigs) = (Vec::new(), Vec::new());
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| Failure::unsupported(USAGE))?;
        match flag.as_str() {
            "--player" => player = Some(value.clone()),
            "--n" => ns.push(value.clone()),
            "--sig" => sigs.push(value.clone()),
            _ => return Err(Failure::unsupported(USAGE)),
        }
    }
    let player = player.ok_or_else(|| Failure::unsupported(USAGE))?;
    let url = format!("file:{player}");
    let script = done
        .iter()
        .find(|e| e.request.url == url)
        .ok_or_else(|| Failure::unsupported(format!("{player}: not a readable file")))?;
    let text = String::from_utf8_lossy(&script.response.body);
    let failure = |e: mediaparse_youtube_solver::SolveError| Failure::upstream(e.to_string());
    let program = prepare(&text).map_err(failure)?;
    let mut solver = Solver::new(&program).map_err(failure)?;
    let mut n = Map::new();
    for v in ns {
        let out = solver.n(&v).map_err(failure)?;
        n.insert(v, Value::String(out));
    }
    let mut sig = Map::new();
    for v in sigs {
        let out = solver.sig(&v).map_err(failure)?;
        sig.insert(v, Value::String(out));
    }
    Ok(Extraction {
        media: Media::default(),
        platform_data: json!({"player": player, "n": n, "sig": sig}).into(),
    })
}

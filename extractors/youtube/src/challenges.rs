//! The WEB client's formats: each URL's `n` goes through the player's `n`
//! function, and a `signatureCipher` (`s`, `sp`, `url`) becomes a URL whose
//! `sp` parameter carries the deciphered `s`. The functions come from the
//! solver (`solver/`), run in the embedded engine inside this component.
//!
//! What a player costs to learn (the lifted program) is remembered by player
//! id (`player:<id>` → the program's text, see `solver/src/program.rs`), so a
//! known player costs only loading the program and evaluating challenges.

use std::collections::HashMap;

use mediaparse_sdk::{Context, Failure, MAX_MEMO_VALUE_BYTES, Memo, Result};
use mediaparse_youtube_solver::{Program, SolveError, Solver, prepare};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::Value;

/// How long a player's program is kept: players change every few weeks.
pub const REMEMBER_SECONDS: u32 = 30 * 24 * 3600;

/// Characters left as they are in a query value (RFC 3986 unreserved).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

pub fn memo_key(player_id: &str) -> String {
    format!("player:{player_id}")
}

/// A player's program learned in an earlier parse.
pub fn remembered(ctx: &Context, player_id: &str) -> Option<Program> {
    let value = ctx.remembered(&memo_key(player_id))?;
    Some(Program {
        source: value.to_string(),
    })
}

/// Learns a player from its script (the expensive part, once per player).
pub fn learn(script: &str) -> Result<Program> {
    prepare(script).map_err(failure)
}

/// The memo of a learned player. The bytecode only saves compiling, so a
/// program that would outgrow the host's bound is remembered without it
/// (over the bound the host would drop the memo, and every parse would
/// fetch and learn the player again).
pub fn memo(player_id: &str, program: &Program) -> Memo {
    let value = if program.source.len() > MAX_MEMO_VALUE_BYTES {
        program.without_bytecode().source
    } else {
        program.source.clone()
    };
    Memo {
        key: memo_key(player_id),
        value,
        ttl_seconds: REMEMBER_SECONDS,
    }
}

/// A solver error as the parse's failure: the player's own fault is an
/// upstream error naming the missing piece, never a wrong URL.
fn failure(e: SolveError) -> Failure {
    Failure::upstream(format!("YouTube player challenge: {e}"))
}

/// Does `streaming_data` list any format (with a URL or a cipher)?
pub fn has_formats(streaming_data: &Value) -> bool {
    ["formats", "adaptiveFormats"].iter().any(|m| {
        streaming_data
            .get(m)
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty())
    })
}

/// Rewrites every format of `streaming_data` in place: `signatureCipher`
/// into `url`, `n` transformed. Answers are shared between formats.
pub fn solve(streaming_data: &mut Value, program: &Program) -> Result<()> {
    let mut solver: Option<Solver> = None;
    let mut ns: HashMap<String, String> = HashMap::new();
    for member in ["formats", "adaptiveFormats"] {
        let Some(list) = streaming_data.get_mut(member).and_then(Value::as_array_mut) else {
            continue;
        };
        for f in list {
            let Some(obj) = f.as_object_mut() else {
                continue;
            };
            let url = match (
                obj.get("url").and_then(Value::as_str),
                obj.get("signatureCipher").and_then(Value::as_str),
            ) {
                (Some(u), _) => u.to_string(),
                (None, Some(cipher)) => {
                    let solver = loaded(&mut solver, program)?;
                    deciphered(cipher, solver)?
                }
                (None, None) => continue,
            };
            let url = match query_value(&url, "n") {
                Some(n) => {
                    let t = match ns.get(&n) {
                        Some(t) => t.clone(),
                        None => {
                            let t = loaded(&mut solver, program)?.n(&n).map_err(failure)?;
                            ns.insert(n.clone(), t.clone());
                            t
                        }
                    };
                    with_query_value(&url, "n", &t)
                }
                None => url,
            };
            obj.remove("signatureCipher");
            obj.insert("url".into(), Value::String(url));
        }
    }
    Ok(())
}

fn loaded<'a>(solver: &'a mut Option<Solver>, program: &Program) -> Result<&'a mut Solver> {
    if solver.is_none() {
        *solver = Some(Solver::new(program).map_err(failure)?);
    }
    solver
        .as_mut()
        .ok_or_else(|| Failure::upstream("YouTube player challenge: no solver"))
}

/// `s=…&sp=sig&url=…` → the URL with `sp=<deciphered s>`.
fn deciphered(cipher: &str, solver: &mut Solver) -> Result<String> {
    let field = |name: &str| {
        cipher.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == name).then(|| percent_decode_str(v).decode_utf8_lossy().into_owned())
        })
    };
    let (Some(s), Some(url)) = (field("s"), field("url")) else {
        return Err(Failure::changed("signatureCipher without s or url"));
    };
    let sp = field("sp").unwrap_or_else(|| "signature".into());
    let sig = solver.sig(&s).map_err(failure)?;
    let sep = if url.contains('?') { '&' } else { '?' };
    Ok(format!(
        "{url}{sep}{sp}={}",
        utf8_percent_encode(&sig, QUERY_VALUE)
    ))
}

fn query_value(url: &str, name: &str) -> Option<String> {
    let (_, query) = url.split_once('?')?;
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then(|| percent_decode_str(v).decode_utf8_lossy().into_owned())
    })
}

fn with_query_value(url: &str, name: &str, value: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let encoded = utf8_percent_encode(value, QUERY_VALUE).to_string();
    let query: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if k == name => format!("{k}={encoded}"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{base}?{}", query.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_over_the_hosts_bound_drops_the_bytecode_not_the_program() {
        let js = "var __n=function(a){return a};var __sig=function(a){return a};";
        let small = Program {
            source: format!("{js}\n//@bytecode engine 0\nAAAA"),
        };
        assert_eq!(memo("p", &small).value, small.source);
        let big = Program {
            source: format!(
                "{js}\n//@bytecode engine 0\n{}",
                "A".repeat(MAX_MEMO_VALUE_BYTES)
            ),
        };
        let kept = memo("p", &big).value;
        assert_eq!(kept, js);
        assert!(kept.len() <= MAX_MEMO_VALUE_BYTES);
    }

    #[test]
    fn query_values_are_replaced_in_place() {
        let u = "https://r1.googlevideo.com/videoplayback?a=1&n=abc&b=2";
        assert_eq!(query_value(u, "n").as_deref(), Some("abc"));
        assert_eq!(
            with_query_value(u, "n", "x y"),
            "https://r1.googlevideo.com/videoplayback?a=1&n=x%20y&b=2"
        );
    }
}

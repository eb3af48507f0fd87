//! Finds the two challenge functions by the shape of the code that uses them,
//! never by a release's names.
//!
//! - first choice, both at once: the player's stream-URL factory, the
//!   top-level function with a statement `x.m("alr","yes")` directly in its
//!   body (the fact yt-dlp's solver keys on). Called with a URL, `"s"` and an
//!   encoded signature it returns a URL object; its class's first own method
//!   other than `constructor`, `set`, `get` and `clone` applies both
//!   transforms to the object's `n` and `s` values.
//!
//! The older shapes below remain the fallback for a player without such a
//! factory:
//!
//! - `n`: the URL code reads the `n` query value, passes it through the first
//!   element of a one-function array (or, in older players, a top-level
//!   function) and writes it back: `X=A[0](X),Y.set(…,X)`, `X=F(X),Y.set(…)`
//!   (or `Y[…](…,X)`).
//! - signature: a run of the form `X=Y.split("")` (or `Y[t[4]](t[12])`), at
//!   least two helper calls `O.m(X,number)` on one top-level object literal
//!   `O`, then `X.join("")` (in any spelling). The run is rewritten as a
//!   function of its own, so it works even when the player hides it inside a
//!   multiplexed function.

use std::collections::HashMap;

use crate::index::Index;
use crate::lex::Kind;

/// Keys of the top-level functions holding an `x.m("alr","yes")` statement
/// directly in their body, in source order.
pub fn url_factories(ix: &Index<'_>) -> Vec<String> {
    let by_start: HashMap<usize, &str> = ix
        .defs
        .iter()
        .filter(|(_, d)| ix.is(d.rhs.0, "function"))
        .map(|(k, d)| (d.rhs.0, k.as_str()))
        .collect();
    let mut found: Vec<(usize, String)> = Vec::new();
    for i in 0..ix.toks.len() {
        let literal = ix.kind(i) == Some(Kind::Str)
            && matches!(ix.text(i), "\"alr\"" | "'alr'")
            && ix.is(i + 1, ",")
            && matches!(ix.text(i + 2), "\"yes\"" | "'yes'")
            && ix.is(i + 3, ")")
            && (ix.is(i + 4, ";") || ix.is(i + 4, "}"));
        if !literal || i < 4 || !ix.is(i - 1, "(") {
            continue;
        }
        // The callee: `object.name` or `object[…]`, `object` a name.
        let object = if ix.kind(i - 2) == Some(Kind::Ident) && ix.is(i - 3, ".") {
            i - 4
        } else if ix.is(i - 2, "]") {
            match open_of(ix, i - 2) {
                Some(o) if o > 0 => o - 1,
                _ => continue,
            }
        } else {
            continue;
        };
        if ix.kind(object) != Some(Kind::Ident) || object == 0 {
            continue;
        }
        // A statement of its own, directly in a function's body.
        let before = object - 1;
        let body_open = if ix.is(before, "{") {
            before
        } else if ix.is(before, ";") {
            let d = ix.toks[object].depth;
            match (0..before).rev().find(|&j| ix.toks[j].depth + 1 == d) {
                Some(j) if ix.is(j, "{") => j,
                _ => continue,
            }
        } else {
            continue;
        };
        if body_open == 0 || !ix.is(body_open - 1, ")") {
            continue;
        }
        let Some(params) = open_of(ix, body_open - 1) else {
            continue;
        };
        let function = if params >= 1 && ix.is(params - 1, "function") {
            params - 1
        } else if params >= 2 && ix.is(params - 2, "function") {
            params - 2
        } else {
            continue;
        };
        if let Some(key) = by_start.get(&function)
            && !found.iter().any(|(_, k)| k == key)
        {
            found.push((function, (*key).to_string()));
        }
    }
    found.sort();
    found.into_iter().map(|(_, k)| k).collect()
}

/// Index of the token opening the bracket closed at `close`.
fn open_of(ix: &Index<'_>, close: usize) -> Option<usize> {
    let d = ix.toks.get(close)?.depth;
    (0..close)
        .rev()
        .find(|&j| ix.toks[j].depth == d && matches!(ix.text(j), "(" | "[" | "{"))
}

/// The `n` function as the URL code calls it: the top-level name to lift,
/// and the call with the value `a` (`A[0](a)` or `F(a)`).
pub struct NCall {
    pub root: String,
    pub call: String,
}

/// `X=A[k](X),Y.set(…,X)` (or `Y[…](…,X)`) with `A` a top-level array, or
/// `X=F(X),Y.set(…)` with `F` a top-level function (older players).
pub fn n_function(ix: &Index<'_>) -> Option<NCall> {
    for i in 0..ix.toks.len().saturating_sub(12) {
        if ix.kind(i) != Some(Kind::Ident)
            || !ix.is(i + 1, "=")
            || ix.kind(i + 2) != Some(Kind::Ident)
        {
            continue;
        }
        let x = ix.text(i);
        let f = ix.text(i + 2);
        // `A[k](X),` or `F(X),`, then the index of the token after the `,`.
        let (call, after) = if ix.is(i + 3, "[")
            && ix.kind(i + 4) == Some(Kind::Number)
            && ix.is(i + 5, "]")
            && ix.is(i + 6, "(")
            && ix.is(i + 7, x)
            && ix.is(i + 8, ")")
            && ix.is(i + 9, ",")
            && ix.defs.get(f).is_some_and(|d| ix.is(d.rhs.0, "["))
        {
            (format!("{f}[{}](a)", ix.text(i + 4)), i + 10)
        } else if ix.is(i + 3, "(")
            && ix.is(i + 4, x)
            && ix.is(i + 5, ")")
            && ix.is(i + 6, ",")
            && ix.defs.get(f).is_some_and(|d| ix.is(d.rhs.0, "function"))
        {
            (format!("{f}(a)"), i + 7)
        } else {
            continue;
        };
        // `Y.set(` or `Y[…](` writes the value back.
        let writes_back = ix.kind(after) == Some(Kind::Ident)
            && ((ix.is(after + 1, ".") && ix.is(after + 3, "(")) || ix.is(after + 1, "["));
        if writes_back {
            return Some(NCall {
                root: f.to_string(),
                call,
            });
        }
    }
    None
}

/// The signature run, rewritten: `(parameter, body)` of a one-argument
/// function, plus the helper object's name.
pub struct SigRun {
    pub param: String,
    pub body: String,
    pub helper: String,
    /// Tokens of the run in the player (to find the names it reads).
    pub range: (usize, usize),
}

pub fn sig_function(ix: &Index<'_>) -> Option<SigRun> {
    let n = ix.toks.len();
    for i in 0..n.saturating_sub(8) {
        if ix.kind(i) != Some(Kind::Ident)
            || !ix.is(i + 1, "=")
            || ix.kind(i + 2) != Some(Kind::Ident)
        {
            continue;
        }
        // `X=Y.split("")`: usually Y is X, a multiplexed function splits its argument into a local.
        let x = ix.text(i);
        let y = ix.text(i + 2);
        // X = X<access>(args)
        let Some(call_end) = access_call(ix, i + 3) else {
            continue;
        };
        if !(ix.is(call_end, ",") || ix.is(call_end, ";")) {
            continue;
        }
        let split = ix.span(i + 2, call_end);
        let mut j = call_end + 1;
        let mut calls = Vec::new();
        let mut helper: Option<&str> = None;
        // O<access>(X, number) …
        while ix.kind(j) == Some(Kind::Ident) && !ix.is(j, x) {
            let o = ix.text(j);
            if helper.is_some_and(|h| h != o) {
                break;
            }
            let Some(open) = access_end(ix, j + 1) else {
                break;
            };
            let args_ok = ix.is(open, "(")
                && ix.is(open + 1, x)
                && ix.is(open + 2, ",")
                && ix.kind(open + 3) == Some(Kind::Number)
                && ix.is(open + 4, ")");
            if !args_ok || !(ix.is(open + 5, ",") || ix.is(open + 5, ";")) {
                break;
            }
            helper = Some(o);
            calls.push(ix.span(j, open + 5));
            j = open + 6;
        }
        if calls.len() < 2 {
            continue;
        }
        let Some(helper) = helper else { continue };
        if !ix.defs.get(helper).is_some_and(|d| ix.is(d.rhs.0, "{")) {
            continue;
        }
        // Then the join: `return X<access>(…)`, `E=X<access>(…)` or a
        // declaration `var E=X<access>(…)`.
        let k = if matches!(ix.text(j), "var" | "let" | "const") {
            j + 1
        } else {
            j
        };
        let join_at = if ix.is(k, "return") {
            k + 1
        } else if ix.kind(k) == Some(Kind::Ident) && ix.is(k + 1, "=") {
            k + 2
        } else {
            continue;
        };
        if !ix.is(join_at, x) {
            continue;
        }
        let Some(join_end) = access_call(ix, join_at + 1) else {
            continue;
        };
        let join = ix.span(join_at, join_end);
        let decl = if x == y { "" } else { "var " };
        let body = format!("{decl}{x}={split};{};return {join}", calls.join(";"));
        return Some(SigRun {
            param: y.to_string(),
            body,
            helper: helper.to_string(),
            range: (i + 2, join_end),
        });
    }
    None
}

/// `.name` or `[…]` starting at `i`: the token after it.
fn access_end(ix: &Index<'_>, i: usize) -> Option<usize> {
    if ix.is(i, ".") && ix.kind(i + 1) == Some(Kind::Ident) {
        return Some(i + 2);
    }
    if ix.is(i, "[") {
        return ix.close_of(i).map(|c| c + 1);
    }
    None
}

/// `<access>(…)` starting at `i`: the token after the call.
fn access_call(ix: &Index<'_>, i: usize) -> Option<usize> {
    let open = access_end(ix, i)?;
    if !ix.is(open, "(") {
        return None;
    }
    ix.close_of(open).map(|c| c + 1)
}

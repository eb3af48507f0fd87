//! Solves a YouTube player's challenges: finds the `n` (throttling) function
//! and the signature function in `base.js` by the shape of the code, lifts
//! them with the globals they read into a small self-contained program, and
//! evaluates that program in an embedded JavaScript engine (boa) with no host
//! bindings at all: no I/O, a loop-iteration and recursion limit here, and the
//! component's memory cap and deadline around it.
//!
//! `prepare` (tokenize + locate + lift, the expensive part) runs once per
//! player; its `Program` is small text the extractor remembers by player id.

mod extract;
mod index;
mod lex;
mod locate;

use boa_engine::{Context, Source};

/// The lifted program. `source` defines `__n(x)` and `__sig(x)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub source: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SolveError {
    #[error("the player script could not be read as JavaScript ({0})")]
    Unreadable(&'static str),
    #[error("the player's {0} could not be found")]
    Missing(&'static str),
    #[error("the {0} pulled in more than {max} bytes of the player", max = extract::MAX_PROGRAM_BYTES)]
    TooLarge(&'static str),
    #[error("evaluating the {0} failed: {1}")]
    Eval(&'static str, String),
}

/// Finds both functions in `player` and lifts them.
pub fn prepare(player: &str) -> Result<Program, SolveError> {
    let toks = lex::tokenize(player).ok_or(SolveError::Unreadable("unterminated literal"))?;
    let ix =
        index::Index::build(player, toks).ok_or(SolveError::Unreadable("no top-level body"))?;
    let (arr, k) = locate::n_function(&ix).ok_or(SolveError::Missing("n function"))?;
    let sig = locate::sig_function(&ix).ok_or(SolveError::Missing("signature function"))?;
    let mut roots = vec![arr.clone()];
    roots.extend(extract::free_names(&ix, sig.range.0, sig.range.1));
    roots.push(sig.helper.clone());
    let defs = extract::lift(&ix, &roots)
        .map_err(|_| SolveError::TooLarge("n and signature functions"))?;
    let param = ix.param.as_deref().unwrap_or("g");
    let source = format!(
        "var window=globalThis,self=globalThis,{param}={{}};\n{defs}\
         var __n=function(a){{return {arr}[{k}](a)}};\n\
         var __sig=function({p}){{{body}}};\n",
        p = sig.param,
        body = sig.body,
    );
    Ok(Program { source })
}

/// Bounds inside the engine (the sandbox bounds memory and wall time around it).
const LOOP_LIMIT: u64 = 10_000_000;
const RECURSION_LIMIT: usize = 512;

/// An engine with a program loaded, answering challenges.
pub struct Solver {
    ctx: Context,
}

impl Solver {
    pub fn new(program: &Program) -> Result<Self, SolveError> {
        let mut ctx = Context::default();
        ctx.runtime_limits_mut()
            .set_loop_iteration_limit(LOOP_LIMIT);
        ctx.runtime_limits_mut()
            .set_recursion_limit(RECURSION_LIMIT);
        ctx.eval(Source::from_bytes(program.source.as_bytes()))
            .map_err(|e| SolveError::Eval("lifted program", e.to_string()))?;
        Ok(Solver { ctx })
    }

    /// The transformed `n` value.
    pub fn n(&mut self, challenge: &str) -> Result<String, SolveError> {
        self.call("__n", "n function", challenge)
    }

    /// The deciphered signature.
    pub fn sig(&mut self, challenge: &str) -> Result<String, SolveError> {
        self.call("__sig", "signature function", challenge)
    }

    fn call(&mut self, f: &str, what: &'static str, arg: &str) -> Result<String, SolveError> {
        let code = format!("{f}({})", js_string(arg));
        let v = self
            .ctx
            .eval(Source::from_bytes(code.as_bytes()))
            .map_err(|e| SolveError::Eval(what, e.to_string()))?;
        let s = v
            .as_string()
            .ok_or_else(|| SolveError::Eval(what, "did not return a string".into()))?;
        let out = s.to_std_string_escaped();
        // The n function answers errors with its input behind a fixed prefix.
        if what == "n function" && ((out.ends_with(arg) && out.len() > arg.len()) || out == arg) {
            return Err(SolveError::Eval(
                what,
                format!("returned its input unchanged or an error marker: {out}"),
            ));
        }
        Ok(out)
    }
}

/// `s` as a JavaScript string literal.
fn js_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

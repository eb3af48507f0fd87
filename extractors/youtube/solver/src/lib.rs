//! Solves a YouTube player's challenges: finds the `n` (throttling) function
//! and the signature function in `base.js` through the code that uses them
//! (the player's stream-URL factory, see `locate.rs`; the functions' own
//! shapes as a fallback), lifts them with the globals they read into a small
//! self-contained program, and
//! evaluates that program in an embedded JavaScript engine (QuickJS, compiled
//! into the component) with no host bindings at all: no I/O, a step budget,
//! heap and stack limits here, and the component's memory cap and deadline
//! around it.
//!
//! `prepare` (tokenize + locate + lift, the expensive part) runs once per
//! player; its `Program` is small text the extractor remembers by player id.

mod bytecode;
mod direct;
mod extract;
mod index;
mod lex;
mod locate;
mod program;
mod prune;

use std::collections::HashMap;
use std::rc::Rc;

pub use program::{Parts, Program};

use rquickjs::{Context, Ctx, Function, Runtime, context::EvalOptions};

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

/// Finds both functions in `player` and lifts them: through the player's
/// stream-URL factory when it has one that answers (see `locate.rs`), else
/// through the older shapes of the two functions.
pub fn prepare(player: &str) -> Result<Program, SolveError> {
    let toks = lex::tokenize(player).ok_or(SolveError::Unreadable("unterminated literal"))?;
    let ix =
        index::Index::build(player, toks).ok_or(SolveError::Unreadable("no top-level body"))?;
    let param = ix.param.as_deref().unwrap_or("g");
    let header = header(param);
    let mut factory_error = None;
    for factory in locate::url_factories(&ix) {
        match through_factory(&ix, &header, param, &factory) {
            Ok(program) => return Ok(program),
            Err(e) => {
                factory_error.get_or_insert(e);
            }
        }
    }
    through_functions(&ix, &header, param).map_err(|e| factory_error.unwrap_or(e))
}

/// What the player's closure provides to its body, and the browser globals
/// the URL code reads (a page at www.youtube.com).
fn header(param: &str) -> String {
    format!(
        "var window=globalThis,self=globalThis,{param}={{}},\
         document=Object.create(null),navigator=Object.create(null),\
         XMLHttpRequest={{prototype:{{}}}},\
         location={{hash:\"\",host:\"www.youtube.com\",hostname:\"www.youtube.com\",\
         href:\"https://www.youtube.com/watch?v=aaaaaaaaaaa\",origin:\"https://www.youtube.com\",\
         password:\"\",pathname:\"/watch\",port:\"\",protocol:\"https:\",\
         search:\"?v=aaaaaaaaaaa\",username:\"\"}};\n"
    )
}

/// The program through the URL factory `factory`: a URL object made with the
/// challenge in it, its transforming method called, the value read back.
/// Preferably the two functions that method was seen to call, called
/// directly (`direct.rs`); else the factory itself, its class keeping only
/// the methods the samples call (the others become stubs that throw), when
/// that answers exactly as the whole class does.
fn through_factory(
    ix: &index::Index<'_>,
    header: &str,
    param: &str,
    factory: &str,
) -> Result<Program, SolveError> {
    let roots = [factory.to_string()];
    let lift = |methods| {
        extract::lift(ix, &roots, methods).map_err(|_| SolveError::TooLarge("URL factory"))
    };
    let glue = format!(
        "// through the URL factory {factory}\n\
         var __url=function(n,s){{\
         var u={factory}(\"https://www.youtube.com/videoplayback\",\"s\",s===void 0?void 0:encodeURIComponent(s));\
         u.set(\"n\",n);\
         var p=Object.getPrototypeOf(u),k=Object.keys(p).concat(Object.getOwnPropertyNames(p));\
         for(var i=0;i<k.length;i++)if([\"constructor\",\"set\",\"get\",\"clone\"].indexOf(k[i])<0){{u[k[i]]();break}}\
         return u}};\n\
         var __n=function(a){{return __url(a,void 0).get(\"n\")}};\n\
         var __sig=function(a){{var s=__url(void 0,a).get(\"s\");return s&&decodeURIComponent(s)}};\n"
    );
    let all = lift(extract::Methods::All)?;
    let header_all = format!("{header}{}", all.declarations());
    let frame = program::Frame {
        header: &header_all,
        param,
        glue: &glue,
    };
    let reference = match direct::probe(&frame, &all.defs) {
        Some(probe) => {
            if let Some(program) = direct_calls(ix, header, param, factory, &probe) {
                return Ok(program);
            }
            probe.reference
        }
        None => prune::reference(&frame, &all.defs)?,
    };
    let recorded = lift(extract::Methods::Recorded)?;
    let recording = format!(
        "{header}{}{}",
        recorded.declarations(),
        extract::RECORD_METHODS
    );
    let probe_frame = program::Frame {
        header: &recording,
        param,
        glue: &glue,
    };
    if let Some(called) = prune::methods_called(&probe_frame, &recorded.defs) {
        let only = lift(extract::Methods::Only(&called))?;
        let header_only = format!("{header}{}", only.declarations());
        let frame_only = program::Frame {
            header: &header_only,
            param,
            glue: &glue,
        };
        if let Some(program) = prune::matching(&frame_only, &only.defs, &reference) {
            return Ok(program);
        }
    }
    prune::matching(&frame, &all.defs, &reference).ok_or(SolveError::Eval(
        "URL factory",
        "the lifted program answers differently on a second run".into(),
    ))
}

/// The program calling the two functions the factory's program was seen
/// to pass each challenge to (see `direct.rs`), when it answers every sample
/// as the factory's program did.
fn direct_calls(
    ix: &index::Index<'_>,
    header: &str,
    param: &str,
    factory: &str,
    probe: &direct::Probe,
) -> Option<Program> {
    let reference = &probe.reference;
    // A few of each at most: the innermost come first, and one that works
    // is all a program needs.
    for n in probe.n.iter().take(3) {
        for sig in probe.sig.iter().take(3) {
            let roots = [n.key.clone(), sig.key.clone()];
            let Ok(lifted) = extract::lift(ix, &roots, extract::Methods::All) else {
                continue;
            };
            let header = format!("{header}{}", lifted.declarations());
            let glue = format!(
                "// through the URL factory {factory}\n\
                 var __n=function(a){{return {}}};\nvar __sig=function(a){{return {}}};\n",
                n.js(),
                sig.js()
            );
            let frame = program::Frame {
                header: &header,
                param,
                glue: &glue,
            };
            if let Some(program) = prune::matching(&frame, &lifted.defs, reference) {
                return Some(program);
            }
        }
    }
    None
}

/// The program through the n function (as the URL code calls it: an element
/// of a function array, or a top-level function) and the signature run
/// (split, helper calls, join).
fn through_functions(
    ix: &index::Index<'_>,
    header: &str,
    param: &str,
) -> Result<Program, SolveError> {
    let n = locate::n_function(ix).ok_or(SolveError::Missing("n function"))?;
    let sig = locate::sig_function(ix).ok_or(SolveError::Missing("signature function"))?;
    let mut roots = vec![n.root.clone()];
    roots.extend(extract::free_names(ix, sig.range.0, sig.range.1));
    roots.push(sig.helper.clone());
    let lifted = extract::lift(ix, &roots, extract::Methods::All)
        .map_err(|_| SolveError::TooLarge("n and signature functions"))?;
    let header = format!("{header}{}", lifted.declarations());
    let glue = format!(
        "var __n=function(a){{return {call}}};\n\
         var __sig=function({p}){{{body}}};\n",
        call = n.call,
        p = sig.param,
        body = sig.body,
    );
    let frame = program::Frame {
        header: &header,
        param,
        glue: &glue,
    };
    Ok(prune::program(&frame, &lifted.defs))
}

/// Bounds inside the engine (the sandbox bounds memory and wall time around it).
/// QuickJS calls the interrupt handler about every 10,000 bytecode steps, so
/// this allows ~10⁸ steps: far beyond a real `n` function (< 10⁶), and it
/// stops a program that loops forever before the component's deadline does.
const INTERRUPT_BUDGET: u32 = 10_000;
const MEMORY_LIMIT: usize = 32 << 20;
const STACK_LIMIT: usize = 256 << 10;

/// Engine adjustments evaluated before each program (see the file).
const PRELUDE: &str = include_str!("js/prelude.js");
/// The loader of lazy definitions (see the file).
const LAZY: &str = include_str!("js/lazy.js");

/// An engine with a program loaded, answering challenges.
pub struct Solver {
    // Field order: the context must be dropped before its runtime.
    ctx: Context,
    _rt: Runtime,
}

impl Solver {
    /// Loads `program`: from its bytecode when it carries bytecode of this
    /// engine that runs, else by compiling its JavaScript.
    pub fn new(program: &Program) -> Result<Self, SolveError> {
        let parts = program.parts().ok_or(SolveError::Eval(
            "lifted program",
            "its lazy definitions are malformed".into(),
        ))?;
        if let Some(bytes) = parts.bytecode.and_then(bytecode::decode)
            && let Ok(solver) = Solver::load(&parts, Some(&bytes))
        {
            return Ok(solver);
        }
        Solver::load(&parts, None)
    }

    /// Loads only from the program's bytecode (to check it before it is
    /// remembered); an error when it has none or it does not run.
    pub(crate) fn from_bytecode(program: &Program) -> Result<Self, SolveError> {
        let missing = || SolveError::Eval("lifted program", "no usable bytecode".into());
        let parts = program.parts().ok_or_else(missing)?;
        let bytes = parts
            .bytecode
            .and_then(bytecode::decode)
            .ok_or_else(missing)?;
        Solver::load(&parts, Some(&bytes))
    }

    fn load(parts: &Parts<'_>, bytes: Option<&[u8]>) -> Result<Self, SolveError> {
        let (rt, ctx) = engine().map_err(|e| SolveError::Eval("lifted program", e))?;
        ctx.with(|ctx| {
            if !parts.lazy.is_empty() {
                install_lazy(&ctx, &parts.lazy)?;
            }
            match bytes {
                Some(bytes) => bytecode::run(&ctx, bytes),
                None => eval::<()>(&ctx, engine_source(parts).into_bytes()),
            }
        })
        .map_err(|e| SolveError::Eval("lifted program", e))?;
        Ok(Solver { ctx, _rt: rt })
    }

    /// The transformed `n` value.
    pub fn n(&mut self, challenge: &str) -> Result<String, SolveError> {
        self.call("__n", "n function", challenge)
    }

    /// The deciphered signature.
    pub fn sig(&mut self, challenge: &str) -> Result<String, SolveError> {
        self.call("__sig", "signature function", challenge)
    }

    /// Keys of the lazy definitions compiled so far (`None` without any).
    pub fn materialized(&mut self) -> Option<Vec<String>> {
        self.strings("__lazy_seen")
    }

    /// Runs `js` (sloppy global code) and returns its value as a string.
    pub(crate) fn run(&mut self, js: &str) -> Option<String> {
        let source = js.as_bytes().to_vec();
        self.ctx.with(|ctx| eval(&ctx, source)).ok()
    }

    /// The elements of the global array of strings `name` (`None` without it).
    pub(crate) fn strings(&mut self, name: &str) -> Option<Vec<String>> {
        let source = format!("{name}.join('\\n')").into_bytes();
        let joined: String = self.ctx.with(|ctx| eval(&ctx, source)).ok()?;
        Some(joined.lines().map(str::to_string).collect())
    }

    fn call(&mut self, f: &str, what: &'static str, arg: &str) -> Result<String, SolveError> {
        let out: String = self
            .ctx
            .with(|ctx| {
                let result = ctx
                    .globals()
                    .get::<_, Function>(f)
                    .and_then(|func| func.call((arg,)));
                thrown(&ctx, result)
            })
            .map_err(|e| SolveError::Eval(what, e))?;
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

/// What the engine runs for a program: the prelude, the lazy loader when
/// the program has lazy definitions, then the program's JavaScript.
fn engine_source(parts: &Parts<'_>) -> String {
    let lazy = if parts.lazy.is_empty() { "" } else { LAZY };
    format!("{PRELUDE}\n{lazy}\n{}", parts.js)
}

/// Compiles what the engine runs for `program` (see [`engine_source`]).
pub(crate) fn compile(program: &Program) -> Result<Vec<u8>, String> {
    let parts = program
        .parts()
        .ok_or_else(|| "its lazy definitions are malformed".to_string())?;
    let (_rt, ctx) = engine()?;
    ctx.with(|ctx| bytecode::compile(&ctx, &engine_source(&parts)))
}

/// A fresh runtime and context under the engine's bounds.
fn engine() -> Result<(Runtime, Context), String> {
    let rt = Runtime::new().map_err(|e| e.to_string())?;
    rt.set_memory_limit(MEMORY_LIMIT);
    rt.set_max_stack_size(STACK_LIMIT);
    let mut ticks = 0u32;
    rt.set_interrupt_handler(Some(Box::new(move || {
        ticks += 1;
        ticks > INTERRUPT_BUDGET
    })));
    let ctx = Context::full(&rt).map_err(|e| e.to_string())?;
    Ok((rt, ctx))
}

/// Gives the program its lazy definitions: two native lookups into a table
/// owned here, used by the proxies of `js/lazy.js`.
fn install_lazy(ctx: &Ctx<'_>, lazy: &[(&str, &str)]) -> Result<(), String> {
    let table: Rc<HashMap<String, String>> = Rc::new(
        lazy.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    let native = |e: rquickjs::Error| e.to_string();
    let has = Rc::clone(&table);
    let globals = ctx.globals();
    globals
        .set(
            "__lazy_has",
            Function::new(ctx.clone(), move |key: String| has.contains_key(&key))
                .map_err(native)?,
        )
        .map_err(native)?;
    globals
        .set(
            "__lazy_src",
            Function::new(ctx.clone(), move |key: String| table.get(&key).cloned())
                .map_err(native)?,
        )
        .map_err(native)
}

/// Evaluates `source` as sloppy-mode global code (player code is not strict)
/// and converts the result.
fn eval<'js, V: rquickjs::FromJs<'js>>(ctx: &Ctx<'js>, source: Vec<u8>) -> Result<V, String> {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    thrown(ctx, ctx.eval_with_options(source, options))
}

/// An engine result with a thrown value turned into its message.
fn thrown<'js, V>(ctx: &Ctx<'js>, result: rquickjs::Result<V>) -> Result<V, String> {
    result.map_err(|e| match e {
        rquickjs::Error::Exception => pending_exception(ctx),
        rquickjs::Error::FromJs { from, to, .. } => format!("returned {from}, not a {to}"),
        other => other.to_string(),
    })
}

/// The message of the exception the engine is holding (and clears it).
fn pending_exception(ctx: &Ctx<'_>) -> String {
    let value = ctx.catch();
    match value.as_exception() {
        Some(ex) => ex.message().unwrap_or_else(|| "an exception".into()),
        None => format!("threw {}", value.type_name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prelude's splice answers like the engine's own on every shape of
    /// call, holes included (the array, its own keys and the return value).
    #[test]
    fn prelude_splice_matches_the_native_one() {
        let rt = Runtime::new().expect("runtime");
        let ctx = Context::full(&rt).expect("context");
        let report: String = ctx.with(|ctx| {
            eval::<()>(&ctx, b"var nativeSplice = Array.prototype.splice;".to_vec())?;
            eval::<()>(&ctx, PRELUDE.as_bytes().to_vec())?;
            eval(
                &ctx,
                br#"
                var calls = [[], [0], [2], [-2], [9], [-9], [1, 0], [1, 2], [1, 9], [0, 1, "x"],
                  [1, 1, "x", "y", "z"], [2, 3, "x"], [-3, 2, "x", "y"], ["1", "2"], [NaN, 1],
                  [1.7, 1.2], [undefined, undefined], [1, -1, "x"], [5, 0, "x", "y"]];
                var shapes = [function () { return [1, 2, 3, 4, 5, 6]; },
                  function () { return [1, , 3, , 5, 6]; },
                  function () { var a = [1, 2, 3]; a.length = 6; return a; },
                  function () { return []; }];
                function show(a) { return JSON.stringify([a.length, Object.keys(a), a]); }
                var bad = [];
                shapes.forEach(function (shape, s) {
                  calls.forEach(function (args) {
                    var a = shape(), b = shape();
                    var ra = nativeSplice.apply(a, args), rb = b.splice.apply(b, args);
                    if (show(a) + show(ra) !== show(b) + show(rb))
                      bad.push(s + ":" + JSON.stringify(args) + " native " + show(a) + show(ra) + " ours " + show(b) + show(rb));
                  });
                });
                bad.join("\n")
                "#
                .to_vec(),
            )
        })
        .expect("runs");
        assert_eq!(report, "");
    }
}

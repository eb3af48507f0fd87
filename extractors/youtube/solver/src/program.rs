//! The lifted program as remembered text: JavaScript evaluated when an engine
//! loads it, optionally followed by lazy definitions — after a marker line,
//! entries `key length\nrhs\n` that the engine compiles only when the
//! program first reads `key` (see `js/lazy.js`).

use crate::extract::Lifted;

const LAZY_MARKER: &str = "\n//@lazy-definitions\n";

/// The lifted program. Its JavaScript defines `__n(x)` and `__sig(x)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub source: String,
}

/// What a program defines besides its definitions: the header (globals the
/// player's closure provides), the closure parameter, and the glue defining
/// `__n` and `__sig`.
pub struct Frame<'a> {
    pub header: &'a str,
    pub param: &'a str,
    pub glue: &'a str,
}

impl Program {
    /// Every definition evaluated at load.
    pub fn eager(frame: &Frame<'_>, defs: &[Lifted]) -> Program {
        Program::with_lazy(frame, defs, &[])
    }

    /// `eager` evaluated at load (in their order), `lazy` compiled on first use.
    pub fn with_lazy(frame: &Frame<'_>, eager: &[Lifted], lazy: &[Lifted]) -> Program {
        let mut source = String::from(frame.header);
        if !lazy.is_empty() {
            source.push_str(&format!(
                "__lazy(globalThis,\"\");__lazy({p},\"{p}.\");\n",
                p = frame.param
            ));
        }
        for d in eager {
            source.push_str(&d.statement());
        }
        source.push_str(frame.glue);
        if !lazy.is_empty() {
            source.push_str(LAZY_MARKER);
            for d in lazy {
                source.push_str(&format!("{} {}\n{}\n", d.key, d.rhs.len(), d.rhs));
            }
        }
        Program { source }
    }

    /// The JavaScript, and the lazy definitions as (key, rhs); `None` when
    /// the lazy section is malformed (a remembered value cut or edited).
    pub fn parts(&self) -> Option<(&str, Vec<(&str, &str)>)> {
        let Some((js, mut rest)) = self.source.split_once(LAZY_MARKER) else {
            return Some((&self.source, Vec::new()));
        };
        let mut lazy = Vec::new();
        while !rest.is_empty() {
            let (head, tail) = rest.split_once('\n')?;
            let (key, len) = head.split_once(' ')?;
            let len: usize = len.parse().ok()?;
            let rhs = tail.get(..len)?;
            rest = tail.get(len..)?.strip_prefix('\n')?;
            lazy.push((key, rhs));
        }
        Some((js, lazy))
    }
}

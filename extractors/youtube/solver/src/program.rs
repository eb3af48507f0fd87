//! The lifted program as remembered text: JavaScript evaluated when an engine
//! loads it, optionally followed by lazy definitions — after a marker line,
//! entries `key length\nrhs\n` that the engine compiles only when the
//! program first reads `key` (see `js/lazy.js`) — and, last, optionally the
//! engine's bytecode of it (see `bytecode.rs`), which a loader may use
//! instead of compiling the JavaScript.

use crate::extract::Lifted;

const LAZY_MARKER: &str = "\n//@lazy-definitions\n";
const BYTECODE_MARKER: &str = "\n//@bytecode ";

/// A program taken apart.
#[derive(Debug, PartialEq, Eq)]
pub struct Parts<'a> {
    pub js: &'a str,
    /// Lazy definitions as (key, rhs).
    pub lazy: Vec<(&'a str, &'a str)>,
    /// The bytecode section (header line and payload), not yet checked.
    pub bytecode: Option<&'a str>,
}

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

    /// The same program carrying `section` (from `bytecode::encode`).
    pub fn with_bytecode(&self, section: &str) -> Program {
        let text = self.parts_text().0;
        Program {
            source: format!("{text}{BYTECODE_MARKER}{section}"),
        }
    }

    /// The same program without its bytecode section.
    pub fn without_bytecode(&self) -> Program {
        Program {
            source: self.parts_text().0.to_string(),
        }
    }

    /// The text before the bytecode section, and the section.
    fn parts_text(&self) -> (&str, Option<&str>) {
        match self.source.rsplit_once(BYTECODE_MARKER) {
            Some((text, section)) => (text, Some(section)),
            None => (&self.source, None),
        }
    }

    /// The program taken apart; `None` when the lazy section is malformed
    /// (a remembered value cut or edited).
    pub fn parts(&self) -> Option<Parts<'_>> {
        let (text, bytecode) = self.parts_text();
        let Some((js, mut rest)) = text.split_once(LAZY_MARKER) else {
            return Some(Parts {
                js: text,
                lazy: Vec::new(),
                bytecode,
            });
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
        Some(Parts { js, lazy, bytecode })
    }
}

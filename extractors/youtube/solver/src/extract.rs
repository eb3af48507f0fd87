//! Lifts definitions out of the player with everything they read: the free
//! names of a definition that the top level defines are pulled in too,
//! recursively, and written dependencies first.

use std::collections::HashSet;

use crate::index::Index;
use crate::lex::Kind;

/// Upper bound of a lifted program: more means the closure ran into the
/// player's UI code, which the challenge functions never need.
pub const MAX_PROGRAM_BYTES: usize = 512 * 1024;

/// Names read by tokens `a..b` that are not declared inside them.
pub fn free_names(ix: &Index<'_>, a: usize, b: usize) -> Vec<String> {
    let locals = local_names(ix, a, b);
    let param = ix.param.as_deref().unwrap_or("");
    let mut out = Vec::new();
    for i in a..b {
        if ix.kind(i) != Some(Kind::Ident) {
            continue;
        }
        // A member (`x.name`) or an object key (`{name:` / `,name:`) is not a read.
        if i > a && (ix.is(i - 1, ".") || ix.is(i - 1, "?.")) {
            continue;
        }
        if ix.is(i + 1, ":") && i > a && (ix.is(i - 1, "{") || ix.is(i - 1, ",")) {
            continue;
        }
        let name = ix.text(i);
        if locals.contains(name) {
            continue;
        }
        if name == param && ix.is(i + 1, ".") && ix.kind(i + 2) == Some(Kind::Ident) {
            out.push(format!("{param}.{}", ix.text(i + 2)));
            continue;
        }
        out.push(name.to_string());
    }
    out
}

/// Parameters, `catch` bindings and `var`/`let`/`const` names inside `a..b`
/// (scopes flattened: a name declared anywhere inside is taken as local).
fn local_names<'a>(ix: &Index<'a>, a: usize, b: usize) -> HashSet<&'a str> {
    let mut out = HashSet::new();
    for i in a..b {
        let t = ix.text(i);
        if t == "function" || t == "catch" {
            let open = if ix.is(i + 1, "(") { i + 1 } else { i + 2 };
            if !ix.is(open, "(") {
                continue;
            }
            if t == "function" && open == i + 2 {
                out.insert(ix.text(i + 1));
            }
            let close = ix.close_of(open).unwrap_or(open);
            for j in open + 1..close {
                if ix.kind(j) == Some(Kind::Ident)
                    && (ix.is(j - 1, "(") || ix.is(j - 1, ",") || ix.is(j - 1, "..."))
                {
                    out.insert(ix.text(j));
                }
            }
        } else if matches!(t, "var" | "let" | "const") {
            let d = ix.toks[i].depth;
            let mut j = i + 1;
            while j < b && ix.kind(j) == Some(Kind::Ident) {
                out.insert(ix.text(j));
                // On to the next declarator, or out of the statement.
                let next = (j + 1..b).find(|&k| {
                    let tk = &ix.toks[k];
                    tk.depth < d || (tk.depth == d && matches!(ix.text(k), "," | ";" | "in" | "of"))
                });
                match next {
                    Some(k) if ix.is(k, ",") && ix.toks[k].depth == d => j = k + 1,
                    _ => break,
                }
            }
        }
    }
    out
}

/// One lifted definition: `key` is `name` or `param.name`, `rhs` its
/// right-hand side as written in the player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifted {
    pub key: String,
    pub rhs: String,
}

impl Lifted {
    /// The definition as a statement of the lifted program.
    pub fn statement(&self) -> String {
        if self.key.contains('.') {
            format!("{}={};\n", self.key, self.rhs)
        } else {
            format!("var {}={};\n", self.key, self.rhs)
        }
    }
}

/// The definitions `roots` need, in an order that runs: a table or object
/// after what it reads, a function before or after (it reads when called).
/// `Err(bytes)` when they outgrow [`MAX_PROGRAM_BYTES`].
pub fn lift(ix: &Index<'_>, roots: &[String]) -> Result<Vec<Lifted>, usize> {
    let mut done = HashSet::new();
    let mut out = Vec::new();
    let mut bytes = 0;
    for r in roots {
        visit(ix, r, &mut done, &mut out, &mut bytes)?;
    }
    Ok(out)
}

fn visit(
    ix: &Index<'_>,
    name: &str,
    done: &mut HashSet<String>,
    out: &mut Vec<Lifted>,
    bytes: &mut usize,
) -> Result<(), usize> {
    if done.contains(name) {
        return Ok(());
    }
    let Some(def) = ix.defs.get(name) else {
        return Ok(());
    };
    done.insert(name.to_string());
    // Functions are only read when called, so their dependencies may follow
    // them; everything else (tables, objects) needs its dependencies first.
    let is_function = ix.is(def.rhs.0, "function");
    let text = ix.span(def.rhs.0, def.rhs.1);
    let deps = free_names(ix, def.rhs.0, def.rhs.1);
    if !is_function {
        for d in &deps {
            visit(ix, d, done, out, bytes)?;
        }
    }
    *bytes += name.len() + text.len() + 7;
    if *bytes > MAX_PROGRAM_BYTES {
        return Err(*bytes);
    }
    out.push(Lifted {
        key: name.to_string(),
        rhs: text.to_string(),
    });
    if is_function {
        for d in &deps {
            visit(ix, d, done, out, bytes)?;
        }
    }
    Ok(())
}

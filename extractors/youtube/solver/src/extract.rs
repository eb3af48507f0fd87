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
/// A definition whose members other statements assign (a class and its
/// methods) is lifted with those statements and runs them when defined, so
/// it comes after what it reads. `Err(bytes)` when they outgrow
/// [`MAX_PROGRAM_BYTES`].
///
/// The walk keeps its own stack: a dependency chain is as long as the player
/// makes it, far deeper than the call stack of the component allows.
pub fn lift(ix: &Index<'_>, roots: &[String], methods: Methods<'_>) -> Result<Lift, usize> {
    let mut walk = Walk {
        ix,
        methods,
        declared: Vec::new(),
        done: HashSet::new(),
        out: Vec::new(),
        bytes: 0,
        stack: Vec::new(),
    };
    for r in roots {
        walk.enter(r)?;
        while let Some(top) = walk.stack.last_mut() {
            if let Some(dep) = top.deps.get(top.next).cloned() {
                top.next += 1;
                walk.enter(&dep)?;
            } else if let Some(done) = walk.stack.pop()
                && let Some(lifted) = done.after_deps
            {
                walk.emit(lifted)?;
            }
        }
    }
    Ok(Lift {
        defs: walk.out,
        declared: walk.declared,
    })
}

/// What [`lift`] found: the definitions, and the names they read that the
/// player declares at top level without defining them there (assigned at
/// run time; the program declares them so reading one is `undefined`, as
/// in the player, not a `ReferenceError`).
pub struct Lift {
    pub defs: Vec<Lifted>,
    pub declared: Vec<String>,
}

impl Lift {
    /// `var a,b,c;` for [`Lift::declared`] (empty without any).
    pub fn declarations(&self) -> String {
        if self.declared.is_empty() {
            return String::new();
        }
        format!("var {};\n", self.declared.join(","))
    }
}

/// One definition being lifted: its dependencies still to visit, and the
/// definition itself when it is written after them.
struct Pending {
    deps: Vec<String>,
    next: usize,
    after_deps: Option<Lifted>,
}

/// What becomes of the methods (members assigned a function) of a lifted
/// class. A class reached through the URL factory brings every method with
/// its own dependencies, most of which the challenges never call.
#[derive(Clone, Copy)]
pub enum Methods<'s> {
    /// Every method as written.
    All,
    /// Every method wrapped so that its first call adds its id (`key#n`,
    /// the class's key and the member statement's position) to
    /// `__methods_seen` (see [`RECORD_METHODS`]).
    Recorded,
    /// The methods with these ids as written; every other one a function
    /// that throws, its dependencies left out. The member stays, so the
    /// class keeps its shape (its methods' names and their order).
    Only(&'s HashSet<String>),
}

/// What a program lifted with [`Methods::Recorded`] needs defined first.
pub const RECORD_METHODS: &str = "var __methods_seen=[];\
var __method=function(id,f){return function(){\
if(__methods_seen.indexOf(id)<0)__methods_seen.push(id);return f.apply(this,arguments)}};\n";

struct Walk<'i, 'a> {
    ix: &'i Index<'a>,
    methods: Methods<'i>,
    declared: Vec<String>,
    done: HashSet<String>,
    out: Vec<Lifted>,
    bytes: usize,
    stack: Vec<Pending>,
}

impl Walk<'_, '_> {
    /// Starts lifting `name` (once): a function is written at once, anything
    /// else after its dependencies.
    fn enter(&mut self, name: &str) -> Result<(), usize> {
        if self.done.contains(name) {
            return Ok(());
        }
        let Some(def) = self.ix.defs.get(name) else {
            if self.ix.declared.contains(name) {
                self.done.insert(name.to_string());
                self.declared.push(name.to_string());
            }
            return Ok(());
        };
        self.done.insert(name.to_string());
        let ix = self.ix;
        let members = ix.members.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let mut deps = free_names(ix, def.rhs.0, def.rhs.1);
        let mut statements = Vec::with_capacity(members.len());
        for (n, m) in members.iter().enumerate() {
            let id = format!("{name}#{n}");
            let is_method = ix.is(m.eq + 1, "function");
            let target = rewrite_root(ix, name, m.stmt.0, m.eq);
            let value = match self.methods {
                Methods::Only(kept) if is_method && !kept.contains(&id) => {
                    deps.extend(free_names(ix, m.stmt.0, m.eq));
                    statements.push(format!(
                        "{target}=function(){{throw new Error(\"{id} was not lifted\")}}"
                    ));
                    continue;
                }
                Methods::Recorded if is_method => format!(
                    "__method(\"{id}\",{})",
                    rewrite_root(ix, name, m.eq + 1, m.stmt.1)
                ),
                _ => rewrite_root(ix, name, m.eq + 1, m.stmt.1),
            };
            deps.extend(free_names(ix, m.stmt.0, m.stmt.1));
            statements.push(format!("{target}={value}"));
        }
        let lifted = Lifted {
            key: name.to_string(),
            rhs: with_members(ix.span(def.rhs.0, def.rhs.1), &statements),
        };
        // Functions are only read when called, so their dependencies may
        // follow them; everything else needs its dependencies first.
        let is_function = members.is_empty() && ix.is(def.rhs.0, "function");
        let after_deps = if is_function {
            self.emit(lifted)?;
            None
        } else {
            Some(lifted)
        };
        self.stack.push(Pending {
            deps,
            next: 0,
            after_deps,
        });
        Ok(())
    }

    fn emit(&mut self, lifted: Lifted) -> Result<(), usize> {
        self.bytes += lifted.key.len() + lifted.rhs.len() + 7;
        if self.bytes > MAX_PROGRAM_BYTES {
            return Err(self.bytes);
        }
        self.out.push(lifted);
        Ok(())
    }
}

/// `rhs` as an expression that also runs `statements` (a class's member
/// statements, each reference to the class rewritten to `__v`: a member
/// statement may read another member at once, `C.prototype.on=C.prototype.subscribe`).
fn with_members(rhs: &str, statements: &[String]) -> String {
    if statements.is_empty() {
        return rhs.to_string();
    }
    let mut out = format!("(function(){{var __v={rhs};\n");
    for s in statements {
        out.push_str(s);
        out.push_str(";\n");
    }
    out.push_str("return __v})()");
    out
}

/// Source of tokens `a..b` with each read of `name` (`x` or `param.x`, not a
/// member `o.x` nor an object key) replaced by `__v`.
fn rewrite_root(ix: &Index<'_>, name: &str, a: usize, b: usize) -> String {
    let (prefix, last) = match name.split_once('.') {
        Some((p, x)) => (Some(p), x),
        None => (None, name),
    };
    let mut out = String::new();
    let mut copied = ix.toks[a].start;
    let mut i = a;
    while i < b {
        let start = i;
        let matched = match prefix {
            Some(p) => ix.is(i, p) && ix.is(i + 1, ".") && ix.is(i + 2, last) && i + 2 < b,
            None => ix.is(i, last) && ix.kind(i) == Some(Kind::Ident),
        };
        let member = start > a && (ix.is(start - 1, ".") || ix.is(start - 1, "?."));
        let key = ix.is(i + if prefix.is_some() { 3 } else { 1 }, ":")
            && start > a
            && (ix.is(start - 1, "{") || ix.is(start - 1, ","));
        if matched && !member && !key {
            out.push_str(&ix.src[copied..ix.toks[start].start]);
            out.push_str("__v");
            i += if prefix.is_some() { 3 } else { 1 };
            copied = ix.toks[i - 1].end;
            continue;
        }
        i += 1;
    }
    out.push_str(&ix.src[copied..ix.toks[b - 1].end]);
    out
}

//! The player's top level as an index: which statement defines which name.
//!
//! A player is one closure `(function(g){ … })(_yt_player)` whose body is a
//! long list of statements: `var a,b=…,c=…;`, `name=function(…){…};`,
//! `g.name=…;`, `function name(…){…}`. Each defined name maps to the tokens of
//! its right-hand side, so a function can be lifted out together with the
//! globals it reads. Statements that assign into a defined name's members
//! (`name.prototype.m=…`, `g.name[t[17]][t[11]]=…`: a class's methods) are
//! kept with that name, in source order, so a lifted class keeps its methods.

use std::collections::{HashMap, HashSet};

use crate::lex::{Kind, Token};

/// One top-level definition: `name` = tokens `rhs.0..rhs.1`.
#[derive(Debug, Clone, Copy)]
pub struct Def {
    pub rhs: (usize, usize),
}

/// A statement `root<access…>=…` (tokens `stmt.0..stmt.1`, the `=` at
/// `eq`) whose target is a member of a defined name.
#[derive(Debug, Clone, Copy)]
pub struct Member {
    pub stmt: (usize, usize),
    pub eq: usize,
}

pub struct Index<'a> {
    pub src: &'a str,
    pub toks: Vec<Token>,
    /// Name (`w`, `hW`, or `g.XT` for members of the closure's parameter) → definition.
    pub defs: HashMap<String, Def>,
    /// Name → the statements that assign into its members, in source order.
    pub members: HashMap<String, Vec<Member>>,
    /// Names a top-level `var` declares, with or without a value (the
    /// player's `var a,b,c;` list names hundreds it assigns only at run time).
    pub declared: HashSet<String>,
    /// The closure parameter's name (`g`).
    pub param: Option<String>,
}

impl<'a> Index<'a> {
    pub fn text(&self, i: usize) -> &'a str {
        let t = &self.toks[i];
        &self.src[t.start..t.end]
    }

    pub fn is(&self, i: usize, s: &str) -> bool {
        i < self.toks.len() && self.text(i) == s
    }

    pub fn kind(&self, i: usize) -> Option<Kind> {
        self.toks.get(i).map(|t| t.kind)
    }

    /// Source text of tokens `a..b`.
    pub fn span(&self, a: usize, b: usize) -> &'a str {
        if a >= b {
            return "";
        }
        &self.src[self.toks[a].start..self.toks[b - 1].end]
    }

    /// Index of the token closing the bracket opened at `open`.
    pub fn close_of(&self, open: usize) -> Option<usize> {
        let d = self.toks.get(open)?.depth;
        (open + 1..self.toks.len())
            .find(|&j| self.toks[j].depth == d && matches!(self.text(j), ")" | "]" | "}"))
    }

    /// Builds the index; `None` when the script has no recognisable body.
    pub fn build(src: &'a str, toks: Vec<Token>) -> Option<Self> {
        let mut ix = Index {
            src,
            toks,
            defs: HashMap::new(),
            members: HashMap::new(),
            declared: HashSet::new(),
            param: None,
        };
        // The body is where the `'use strict'` directive sits; fall back to
        // the first `function(x){` when a player drops the directive.
        let body_start = (0..ix.toks.len())
            .find(|&i| {
                ix.kind(i) == Some(Kind::Str)
                    && matches!(ix.text(i), "'use strict'" | "\"use strict\"")
            })
            .or_else(|| {
                (0..ix.toks.len())
                    .find(|&i| ix.is(i, "function") && ix.is(i + 1, "("))
                    .map(|i| i + 5)
            })?;
        let body_depth = ix.toks.get(body_start)?.depth;
        ix.param = (0..body_start)
            .rev()
            .find(|&i| {
                ix.is(i, "function") && ix.is(i + 1, "(") && ix.kind(i + 2) == Some(Kind::Ident)
            })
            .map(|i| ix.text(i + 2).to_string());
        let mut i = body_start;
        while i < ix.toks.len() && ix.toks[i].depth >= body_depth {
            // One statement: up to the next `;` at body depth, or to where
            // the next one starts right after a block (`if(…){…}var a=…`,
            // `a:{…}g.b=…`: block statements end without `;`).
            let end = (i..ix.toks.len())
                .find(|&j| {
                    ix.toks[j].depth < body_depth
                        || (ix.toks[j].depth == body_depth
                            && (ix.is(j, ";") || (j > i && ix.starts_after_block(j))))
                })
                .unwrap_or(ix.toks.len());
            ix.index_statement(i, end, body_depth);
            i = if ix.is(end, ";") { end + 1 } else { end };
        }
        Some(ix)
    }

    /// Whether token `j` (at the body's depth) starts a statement that
    /// follows a block without `;`: it comes right after a `}` of the same
    /// depth and reads `var`/`let`/`const`/`function` or `name=`, `name.`,
    /// `name[` (a block's `else`, `while`, `catch`, `finally` never do).
    fn starts_after_block(&self, j: usize) -> bool {
        if j == 0 || !self.is(j - 1, "}") || self.toks[j - 1].depth != self.toks[j].depth {
            return false;
        }
        match self.text(j) {
            "var" | "let" | "const" | "function" => true,
            "else" | "while" | "catch" | "finally" | "in" | "instanceof" => false,
            _ => {
                self.kind(j) == Some(Kind::Ident)
                    && (self.is(j + 1, "=") || self.is(j + 1, ".") || self.is(j + 1, "["))
            }
        }
    }

    fn index_statement(&mut self, mut a: usize, b: usize, depth: u32) {
        // Function declarations end without `;`: each is a definition, and
        // whatever follows it up to the `;` is the next statement.
        while self.is(a, "function") && self.kind(a + 1) == Some(Kind::Ident) && self.is(a + 2, "(")
        {
            let Some(close) = self.close_of(a + 2) else {
                return;
            };
            if !self.is(close + 1, "{") {
                return;
            }
            let Some(end) = self.close_of(close + 1) else {
                return;
            };
            let name = self.text(a + 1).to_string();
            self.defs.insert(name, Def { rhs: (a, end + 1) });
            a = end + 1;
            if a >= b {
                return;
            }
        }
        if self.is(a, "var") || self.is(a, "let") || self.is(a, "const") {
            // Declarators split at `,` on the statement's depth.
            let mut j = a + 1;
            while j < b {
                let end = (j..b)
                    .find(|&k| self.toks[k].depth == depth && self.is(k, ","))
                    .unwrap_or(b);
                if self.kind(j) == Some(Kind::Ident) {
                    self.declared.insert(self.text(j).to_string());
                }
                if self.kind(j) == Some(Kind::Ident) && self.is(j + 1, "=") && j + 2 < end {
                    let name = self.text(j).to_string();
                    self.defs.insert(name, Def { rhs: (j + 2, end) });
                }
                j = end + 1;
            }
            return;
        }
        if self.kind(a) == Some(Kind::Ident) && self.is(a + 1, "=") && a + 2 < b {
            let name = self.text(a).to_string();
            self.defs.insert(name, Def { rhs: (a + 2, b) });
            return;
        }
        let param = self.param.clone().unwrap_or_default();
        if self.is(a, &param)
            && self.is(a + 1, ".")
            && self.kind(a + 2) == Some(Kind::Ident)
            && self.is(a + 3, "=")
            && a + 4 < b
        {
            let name = format!("{param}.{}", self.text(a + 2));
            self.defs.insert(name, Def { rhs: (a + 4, b) });
            return;
        }
        self.index_member_assignment(a, b, &param);
    }

    /// `root<access…>=…` with at least one access after the root (`root` a
    /// name or `param.name`): remembered with the root.
    fn index_member_assignment(&mut self, a: usize, b: usize, param: &str) {
        if self.kind(a) != Some(Kind::Ident) {
            return;
        }
        let (root, after_root) =
            if self.is(a, param) && self.is(a + 1, ".") && self.kind(a + 2) == Some(Kind::Ident) {
                (format!("{param}.{}", self.text(a + 2)), a + 3)
            } else {
                (self.text(a).to_string(), a + 1)
            };
        let mut j = after_root;
        let mut accesses = 0;
        while j < b {
            if self.is(j, ".") && self.kind(j + 1) == Some(Kind::Ident) {
                j += 2;
            } else if self.is(j, "[") {
                match self.close_of(j) {
                    Some(c) if c < b => j = c + 1,
                    _ => return,
                }
            } else {
                break;
            }
            accesses += 1;
        }
        if accesses > 0 && self.is(j, "=") && j + 1 < b {
            self.members.entry(root).or_default().push(Member {
                stmt: (a, b),
                eq: j,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::tokenize;

    fn index(body: &str) -> Index<'_> {
        Index::build(body, tokenize(body).expect("tokens")).expect("index")
    }

    #[test]
    fn statements_after_blocks_and_function_declarations_are_indexed() {
        let src = "(function(g){'use strict';var a,b=1;if(x){a=2}else a=3;var c=a;\
                   l:{break l}g.d=function(){return c};function e(u){return u}f=e;\
                   C=function(){};C.prototype.m=function(){};g.D=function(){};\
                   g.D[t[1]][\"n\"]=C.prototype.m;})(_yt_player);";
        let ix = index(src);
        let rhs = |k: &str| ix.defs.get(k).map(|d| ix.span(d.rhs.0, d.rhs.1));
        assert_eq!(rhs("b"), Some("1"));
        assert_eq!(rhs("c"), Some("a"), "a var after an if/else block");
        assert_eq!(
            rhs("g.d"),
            Some("function(){return c}"),
            "after a labeled block"
        );
        assert_eq!(rhs("e"), Some("function e(u){return u}"));
        assert_eq!(rhs("f"), Some("e"), "after a function declaration");
        assert!(ix.declared.contains("a") && !ix.defs.contains_key("a"));
        let members = |k: &str| -> Vec<&str> {
            ix.members.get(k).map_or(vec![], |m| {
                m.iter().map(|m| ix.span(m.stmt.0, m.stmt.1)).collect()
            })
        };
        assert_eq!(members("C"), ["C.prototype.m=function(){}"]);
        assert_eq!(members("g.D"), ["g.D[t[1]][\"n\"]=C.prototype.m"]);
    }
}

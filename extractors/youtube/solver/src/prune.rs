//! Keeps a known player's program quick to load. The lifted closure of the
//! two functions can be large (146 KB for the 2026 player, whose functions
//! sit inside dispatchers that reach the player's URL and UI code), and an
//! engine compiles all of it on every parse. Here the program is run once on
//! sample challenges with every definition lazy; the definitions those runs
//! touched become the eagerly compiled program, the rest stay lazy text (a
//! path the samples missed still finds them). The result is kept only when
//! it answers the samples exactly as the fully eager program does.

use std::collections::HashSet;

use crate::bytecode;
use crate::extract::Lifted;
use crate::program::{Frame, Program};
use crate::{SolveError, Solver};

/// Sample challenges: `n` values are 15–18 characters of the base64url
/// alphabet, signatures ~100; pseudo-random so every run picks the same.
pub fn samples() -> (Vec<String>, Vec<String>) {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut word = |len: usize| -> String {
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ALPHABET[(state >> 58) as usize] as char
            })
            .collect()
    };
    let n = [15, 16, 17, 18].map(&mut word).to_vec();
    let sig = [103, 108].map(&mut word).to_vec();
    (n, sig)
}

/// The answers to the samples (the `n` ones first), `None` if any sample fails.
fn answers(solver: &mut Solver) -> Option<Vec<String>> {
    checked_answers(solver).ok()
}

/// The answers to the samples, or why one failed.
fn checked_answers(solver: &mut Solver) -> Result<Vec<String>, SolveError> {
    let (n, sig) = samples();
    let mut out = Vec::new();
    for x in &n {
        out.push(solver.n(x)?);
    }
    for x in &sig {
        out.push(solver.sig(x)?);
    }
    Ok(out)
}

/// The smallest program that answers like `defs` all eager (the all-eager
/// one when pruning cannot be checked or changes an answer), carrying its
/// bytecode when the bytecode answers the same too.
pub fn program(frame: &Frame<'_>, defs: &[Lifted]) -> Program {
    let full = Program::eager(frame, defs);
    let Some(reference) = Solver::new(&full).ok().and_then(|mut s| answers(&mut s)) else {
        return full;
    };
    let program = pruned(frame, defs, &reference).unwrap_or(full);
    with_bytecode(program, &reference)
}

/// The answers of `defs` all eager to the samples, or why one failed.
pub fn reference(frame: &Frame<'_>, defs: &[Lifted]) -> Result<Vec<String>, SolveError> {
    checked_answers(&mut Solver::new(&Program::eager(frame, defs))?)
}

/// Like [`program`], but `None` unless `defs` all eager answer the samples
/// exactly as `reference`.
pub fn matching(frame: &Frame<'_>, defs: &[Lifted], reference: &[String]) -> Option<Program> {
    let full = Program::eager(frame, defs);
    if answers(&mut Solver::new(&full).ok()?)? != reference {
        return None;
    }
    let program = pruned(frame, defs, reference).unwrap_or(full);
    Some(with_bytecode(program, reference))
}

/// The ids of the methods the samples call, for `defs` lifted with
/// `Methods::Recorded` (`frame` defining what that needs); `None` when a
/// sample fails.
pub fn methods_called(frame: &Frame<'_>, defs: &[Lifted]) -> Option<HashSet<String>> {
    let mut probe = Solver::new(&Program::with_lazy(frame, &[], defs)).ok()?;
    answers(&mut probe)?;
    Some(probe.strings("__methods_seen")?.into_iter().collect())
}

fn pruned(frame: &Frame<'_>, defs: &[Lifted], reference: &[String]) -> Option<Program> {
    let mut probe = Solver::new(&Program::with_lazy(frame, &[], defs)).ok()?;
    if answers(&mut probe)? != reference {
        return None;
    }
    let touched = probe.materialized()?;
    let (eager, lazy): (Vec<Lifted>, Vec<Lifted>) =
        defs.iter().cloned().partition(|d| touched.contains(&d.key));
    let program = Program::with_lazy(frame, &eager, &lazy);
    (answers(&mut Solver::new(&program).ok()?)? == reference).then_some(program)
}

/// `program` with its bytecode, if loading only from it answers `reference`.
fn with_bytecode(program: Program, reference: &[String]) -> Program {
    let Ok(bytes) = crate::compile(&program) else {
        return program;
    };
    let candidate = program.with_bytecode(&bytecode::encode(&bytes));
    let same = Solver::from_bytecode(&candidate)
        .ok()
        .and_then(|mut s| answers(&mut s))
        .is_some_and(|a| a == reference);
    if same { candidate } else { program }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(key: &str, rhs: &str) -> Lifted {
        Lifted {
            key: key.into(),
            rhs: rhs.into(),
        }
    }

    const HEADER: &str = "var window=globalThis,self=globalThis,g={};\n";

    fn frame(glue: &str) -> Frame<'_> {
        Frame {
            header: HEADER,
            param: "g",
            glue,
        }
    }

    /// `__n` takes a branch no sample (≤ 18 characters) takes for long input.
    const GLUE: &str = "var __n=function(a){return a.length>30?rare(a):common(a)};\n\
                        var __sig=function(a){return g.flip(a)};\n";

    fn defs() -> Vec<Lifted> {
        vec![
            def("table", "\"x{y\".split(\"{\")"),
            def("common", "function(a){return a.toUpperCase()+table[0]}"),
            def("rare", "function(a){return g.deep(a)+table[1]}"),
            def(
                "g.deep",
                "function(a){return a.split(\"\").reverse().join(\"\")}",
            ),
            def("g.flip", "function(a){return a.slice(1)}"),
            def("unused", "function(){return 1}"),
        ]
    }

    #[test]
    fn untouched_definitions_stay_lazy_and_a_missed_path_still_finds_them() {
        let program = program(&frame(GLUE), &defs());
        let parts = program.parts().expect("well formed");
        let (js, lazy) = (parts.js, parts.lazy);
        let lazy: Vec<&str> = lazy.iter().map(|(k, _)| *k).collect();
        assert_eq!(lazy, ["rare", "g.deep", "unused"]);
        assert!(js.contains("var common=") && js.contains("g.flip=") && js.contains("var table="));
        let mut solver = Solver::new(&program).expect("loads");
        assert_eq!(solver.n("abc").unwrap(), "ABCx");
        let long = "abcdefghijklmnopqrstuvwxyz0123456789";
        let reversed: String = long.chars().rev().collect();
        assert_eq!(solver.n(long).unwrap(), format!("{reversed}y"));
        assert_eq!(solver.sig("xyz").unwrap(), "yz");
        assert_eq!(
            solver.materialized().unwrap(),
            ["rare".to_string(), "g.deep".to_string()]
        );
    }

    #[test]
    fn a_failing_sample_keeps_everything_eager() {
        let glue = "var __n=function(a){throw new Error('no')};var __sig=function(a){return a};\n";
        let program = program(&frame(glue), &defs());
        assert_eq!(program, Program::eager(&frame(glue), &defs()));
        assert!(program.parts().unwrap().lazy.is_empty());
    }

    #[test]
    fn a_malformed_lazy_section_is_refused_by_name() {
        let program = program(&frame(GLUE), &defs());
        let text = program.source.split("\n//@bytecode ").next().unwrap();
        let cut = Program {
            source: text[..text.len() - 5].to_string(),
        };
        assert_eq!(cut.parts(), None);
        match Solver::new(&cut) {
            Err(crate::SolveError::Eval(_, why)) => assert!(why.contains("malformed"), "{why}"),
            other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn the_bytecode_is_checked_and_damaged_bytecode_falls_back_to_the_source() {
        let program = program(&frame(GLUE), &defs());
        assert!(program.parts().unwrap().bytecode.is_some());
        let long = "abcdefghijklmnopqrstuvwxyz0123456789";
        let mut from_bytecode = Solver::from_bytecode(&program).expect("bytecode runs");
        assert_eq!(from_bytecode.n(long).unwrap().len(), long.len() + 1);
        // One payload character changed: the checksum refuses the bytecode,
        // the loader compiles the JavaScript and answers the same.
        let (text, section) = program.source.rsplit_once('\n').unwrap();
        let flipped: String = section
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i == 10 {
                    if c == 'A' { 'B' } else { 'A' }
                } else {
                    c
                }
            })
            .collect();
        let damaged = Program {
            source: format!("{text}\n{flipped}"),
        };
        assert!(Solver::from_bytecode(&damaged).is_err());
        let mut solver = Solver::new(&damaged).expect("falls back to the source");
        assert_eq!(solver.n(long).unwrap(), from_bytecode.n(long).unwrap());
        assert_eq!(solver.n("abc").unwrap(), "ABCx");
    }
}

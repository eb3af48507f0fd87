//! The engine's own bounds around player code: a program that never ends, one
//! that eats memory and one that recurses without end each fail with an
//! evaluation error (never hang, abort or answer).

use std::time::{Duration, Instant};

use mediaparse_youtube_solver::{Program, SolveError, Solver};

fn program(body: &str) -> Program {
    Program {
        source: format!("var __n=function(a){{{body}}};var __sig=function(a){{return a}};"),
    }
}

fn n_fails(body: &str) -> String {
    let mut solver = Solver::new(&program(body)).expect("the program loads");
    let t = Instant::now();
    let err = solver.n("abcdefgh").expect_err("the call must fail");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "stopped late: {:?}",
        t.elapsed()
    );
    match err {
        SolveError::Eval("n function", why) => why,
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
fn an_endless_loop_is_interrupted() {
    let why = n_fails("for(;;){}");
    assert!(why.contains("interrupted"), "{why}");
}

#[test]
fn an_endless_loop_inside_try_is_still_interrupted() {
    // The interrupt is uncatchable: the player's own try/catch cannot swallow it.
    let why = n_fails("for(;;){try{for(;;){}}catch(e){}}");
    assert!(why.contains("interrupted"), "{why}");
}

#[test]
fn memory_is_capped() {
    let why = n_fails("var x=[];for(;;)x.push(new Array(100000).fill(a));");
    assert!(why.contains("memory"), "{why}");
}

#[test]
fn endless_recursion_is_stopped() {
    let why = n_fails("function f(){return f()+1}return f()");
    assert!(why.contains("stack"), "{why}");
}

#[test]
fn a_program_that_does_not_parse_is_named() {
    let err = Solver::new(&Program {
        source: "var __n=function(a){".into(),
    })
    .err()
    .expect("must not load");
    assert!(
        matches!(err, SolveError::Eval("lifted program", _)),
        "{err:?}"
    );
}

#[test]
fn the_engine_has_no_io() {
    // Nothing in the global object reaches the outside world.
    let mut solver = Solver::new(&program(
        "return [typeof require,typeof fetch,typeof XMLHttpRequest,typeof std,typeof os,typeof print].join()",
    ))
    .expect("loads");
    // The n check refuses an answer ending with the input; this one doesn't.
    let out = solver.n("q").expect("answers");
    assert_eq!(
        out,
        "undefined,undefined,undefined,undefined,undefined,undefined"
    );
}

/// A synthetic player in the shape the locator keys on: a URL factory with
/// `x.set("alr","yes")` in its body, a URL class whose methods are separate
/// statements (one reads another at once), and a transform that reaches a
/// chain of `depth` definitions, each naming the next.
fn chained_player(depth: usize) -> String {
    let mut p = String::from(
        "var _yt_player={};(function(g){var window=this;'use strict';\n\
         var U=function(u){this.u=u;this.q={}};\n\
         U.prototype.set=function(k,v){this.q[k]=v};\n\
         U.prototype[\"get\"]=function(k){return this.q[k]||null};\n\
         U.prototype.apply=function(){var n=this.get(\"n\");n&&this.set(\"n\",rev(n));\
         var s=this.get(\"s\");s&&this.set(\"s\",encodeURIComponent(rot(decodeURIComponent(s))))};\n\
         U.prototype.run=U.prototype.apply;\n\
         g.F=function(a,b,c){a=new U(a);a.set(\"alr\",\"yes\");c&&a.set(b,c);return a};\n\
         var rev=function(x){c0();return x.split(\"\").reverse().join(\"\")};\n\
         var rot=function(x){return x.slice(1)+x[0]};\n",
    );
    for i in 0..depth {
        p.push_str(&format!("c{i}=function(){{return c{}}};\n", i + 1));
    }
    p.push_str(&format!("c{depth}=function(){{return 0}};\n"));
    p.push_str("})(_yt_player);\n");
    p
}

#[test]
fn a_deep_dependency_chain_is_lifted_within_a_small_stack() {
    // Lifting walks the chain of definitions; the component's call stack is
    // small, so the walk must not take stack per link. 12,000 links fit
    // the program bound; the thread's 1 MiB stack is smaller than a
    // recursive walk of them needs.
    let player = chained_player(12_000);
    let answers = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let program = mediaparse_youtube_solver::prepare(&player).expect("prepare");
            let mut solver = Solver::new(&program).expect("load");
            (
                solver.n("abcdefghijklmnop").expect("n"),
                solver.sig("0123456789").expect("sig"),
            )
        })
        .expect("thread")
        .join()
        .expect("prepare finished without exhausting its stack");
    assert_eq!(answers.0, "ponmlkjihgfedcba");
    assert_eq!(answers.1, "1234567890");
}

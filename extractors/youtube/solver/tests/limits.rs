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

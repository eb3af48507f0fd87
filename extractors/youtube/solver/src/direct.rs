//! Calls the challenge functions directly once the URL factory has shown
//! which they are. The factory's program answers by building a URL object
//! and running the URL class's method, which does more than the two
//! transforms (and reaches more of the player). So at learning time that
//! program runs once more with every lifted top-level function wrapped: a
//! function that receives a sample challenge (besides only numbers, such as
//! a dispatcher's selector) and returns that sample's answer is a candidate.
//! A candidate found for every sample becomes a direct call (`f(a)`,
//! `f(49,a)`), lifted on its own and kept only if it answers every sample
//! exactly as the factory's program does.

use crate::extract::Lifted;
use crate::program::{Frame, Program};
use crate::{Solver, prune};

/// What the wrapped program needs defined first: `__probe` is the sample
/// being answered, `__seen` collects `key\targs\tresult` lines, the sample's
/// position in `args` written `@`.
const RECORD_CALLS: &str = "var __probe=null,__seen=[];\
var __call=function(key,f){return function(){\
var r=new.target?Reflect.construct(f,arguments,new.target):f.apply(this,arguments);\
if(__probe!==null&&typeof r===\"string\"){var a=arguments,at=-1,ok=true;\
for(var i=0;i<a.length;i++){if(a[i]===__probe&&at<0)at=i;else if(typeof a[i]!==\"number\")ok=false}\
if(ok&&at>=0)__seen.push(key+\"\\t\"+Array.prototype.map.call(a,function(x,i){return i===at?\"@\":String(x)}).join(\",\")+\"\\t\"+r)}\
return r}};\n";

/// A direct call: the function's key and its arguments, `@` for the challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub key: String,
    pub args: String,
}

impl Call {
    /// The call as JavaScript, with the challenge `a`.
    pub fn js(&self) -> String {
        let args: Vec<&str> = self
            .args
            .split(',')
            .map(|x| if x == "@" { "a" } else { x })
            .collect();
        format!("{}({})", self.key, args.join(","))
    }
}

/// What running the factory's program with its functions wrapped showed:
/// its answers to the samples (the `n` ones first), and the calls that
/// answered every `n` sample and every signature sample as it did (in the
/// order first seen, innermost first). `None` when a sample fails.
pub struct Probe {
    pub reference: Vec<String>,
    pub n: Vec<Call>,
    pub sig: Vec<Call>,
}

/// Runs `defs` (the factory's program, with `frame`) wrapped.
pub fn probe(frame: &Frame<'_>, defs: &[Lifted]) -> Option<Probe> {
    let wrapped: Vec<Lifted> = defs
        .iter()
        .map(|d| Lifted {
            key: d.key.clone(),
            rhs: if d.rhs.starts_with("function") {
                format!("__call(\"{}\",{})", d.key, d.rhs)
            } else {
                d.rhs.clone()
            },
        })
        .collect();
    let header = format!("{}{RECORD_CALLS}", frame.header);
    let probe = Frame {
        header: &header,
        param: frame.param,
        glue: frame.glue,
    };
    let mut solver = Solver::new(&Program::eager(&probe, &wrapped)).ok()?;
    let (n, sig) = prune::samples();
    let mut reference = Vec::new();
    let n = common(&mut solver, &n, "__n", &mut reference)?;
    let sig = common(&mut solver, &sig, "__sig", &mut reference)?;
    Some(Probe { reference, n, sig })
}

/// The calls seen answering every one of `inputs` through `f` as `f` did
/// (its answers appended to `reference`).
fn common(
    solver: &mut Solver,
    inputs: &[String],
    f: &str,
    reference: &mut Vec<String>,
) -> Option<Vec<Call>> {
    let mut all: Option<Vec<Call>> = None;
    for x in inputs {
        let js = format!(
            "__seen=[];__probe={x:?};var __out={f}(__probe);__probe=null;\
             __out+\"\\n\"+__seen.join(\"\\n\")"
        );
        let text = solver.run(&js)?;
        let mut lines = text.lines();
        let want = lines.next()?.to_string();
        let calls: Vec<Call> = lines
            .filter_map(|l| {
                let mut p = l.splitn(3, '\t');
                let (key, args, out) = (p.next()?, p.next()?, p.next()?);
                (out == want).then(|| Call {
                    key: key.to_string(),
                    args: args.to_string(),
                })
            })
            .collect();
        // Only a string answer is an answer (as `Solver` checks it).
        if want == "undefined" || want == "null" || want.ends_with(x.as_str()) {
            return None;
        }
        reference.push(want);
        all = Some(match all {
            None => calls,
            Some(prev) => prev.into_iter().filter(|c| calls.contains(c)).collect(),
        });
    }
    all
}

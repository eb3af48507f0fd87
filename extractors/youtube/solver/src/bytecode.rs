//! A program's JavaScript compiled once, at learning time, and remembered as
//! QuickJS bytecode, so a known player skips compiling: reading the 2026
//! player's 10 KB back costs 0.08 ms where compiling it costs 0.9 ms.
//!
//! QuickJS does not verify bytecode it reads, so only bytecode this crate
//! wrote is read: the section names the engine build it came from and a
//! checksum of its bytes; a mismatch (another engine version, a cut or edited
//! value) means compiling the source instead. It is also read back and
//! checked against the source's answers before it is remembered (`prune.rs`).
//! And all of it runs inside the component's sandbox.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rquickjs::{Ctx, qjs};

use crate::pending_exception;

/// The engine build whose bytecode format this is: `Cargo.lock`'s
/// rquickjs-sys (the test `engine_tag_matches_the_locked_engine` keeps
/// them equal, so upgrading QuickJS retires remembered bytecode).
pub const ENGINE: &str = "rquickjs-sys-0.14.0";

/// FNV-1a, 64 bits: detects a damaged or truncated value, nothing more.
pub fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The section's header line and payload for `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    format!(
        "{ENGINE} {:016x}\n{}",
        checksum(bytes),
        STANDARD.encode(bytes)
    )
}

/// The bytes of a section written by [`encode`] for this engine; `None` for
/// another engine or a damaged section.
pub fn decode(section: &str) -> Option<Vec<u8>> {
    let (head, payload) = section.split_once('\n')?;
    let (engine, sum) = head.split_once(' ')?;
    if engine != ENGINE {
        return None;
    }
    let bytes = STANDARD.decode(payload.trim_end()).ok()?;
    (format!("{:016x}", checksum(&bytes)) == sum).then_some(bytes)
}

/// Compiles `source` as sloppy global code, without running it.
pub fn compile(ctx: &Ctx<'_>, source: &str) -> Result<Vec<u8>, String> {
    let raw = ctx.as_raw().as_ptr();
    let text = std::ffi::CString::new(source).map_err(|_| "a NUL in the program".to_string())?;
    // SAFETY: `raw` is the live context `ctx` borrows; the source is a valid
    // C string of the given length; the flags compile global code only.
    let function = unsafe {
        qjs::JS_Eval(
            raw,
            text.as_ptr(),
            source.len() as _,
            c"program".as_ptr(),
            (qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32,
        )
    };
    // SAFETY: inspecting the tag of a value just returned.
    if unsafe { qjs::JS_IsException(function) } {
        return Err(pending_exception(ctx));
    }
    let mut size: qjs::size_t = 0;
    // SAFETY: `function` is an owned function value of this context; the
    // buffer returned is ours to copy and free with the context's allocator.
    let bytes = unsafe {
        let buffer =
            qjs::JS_WriteObject(raw, &mut size, function, qjs::JS_WRITE_OBJ_BYTECODE as i32);
        qjs::JS_FreeValue(raw, function);
        if buffer.is_null() {
            return Err(pending_exception(ctx));
        }
        let bytes = std::slice::from_raw_parts(buffer, size as usize).to_vec();
        qjs::js_free(raw, buffer.cast());
        bytes
    };
    Ok(bytes)
}

/// Reads bytecode written by [`compile`] and runs it as global code.
pub fn run(ctx: &Ctx<'_>, bytes: &[u8]) -> Result<(), String> {
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `bytes` is bytecode this crate wrote with this engine build
    // (checked by `decode`); reading returns an owned value or an exception,
    // and evaluating consumes the function value.
    unsafe {
        let function = qjs::JS_ReadObject(
            raw,
            bytes.as_ptr(),
            bytes.len() as _,
            qjs::JS_READ_OBJ_BYTECODE as i32,
        );
        if qjs::JS_IsException(function) {
            return Err(pending_exception(ctx));
        }
        let result = qjs::JS_EvalFunction(raw, function);
        if qjs::JS_IsException(result) {
            return Err(pending_exception(ctx));
        }
        qjs::JS_FreeValue(raw, result);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_round_trips_and_damage_is_refused() {
        let bytes: Vec<u8> = (0..=255).collect();
        let section = encode(&bytes);
        assert_eq!(decode(&section), Some(bytes.clone()));
        // Cut, edited, or from another engine: refused.
        assert_eq!(decode(&section[..section.len() - 4]), None);
        assert_eq!(decode(&section.replacen("AAEC", "AAED", 1)), None);
        assert_eq!(
            decode(&section.replacen(ENGINE, "rquickjs-sys-0.13.0", 1)),
            None
        );
    }

    #[test]
    fn engine_tag_matches_the_locked_engine() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../Cargo.lock"))
                .expect("Cargo.lock");
        let version = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"rquickjs-sys\""))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
            .map(|v| v.trim_matches('"').to_string())
            .expect("rquickjs-sys in Cargo.lock");
        assert_eq!(ENGINE, format!("rquickjs-sys-{version}"));
    }
}

//! `embedded_platform!()`: the `platform.toml` beside the `Cargo.toml` of
//! the crate being compiled, as literals:
//! `("<id>", &[("<member>", "<type>"), …])`. `mediaparse_sdk::export_extractor!`
//! uses it so a component knows its listed platformData members without
//! carrying a TOML parser. A missing or invalid file is a compile error that
//! names it.

use proc_macro::TokenStream;

#[proc_macro]
pub fn embedded_platform(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return compile_error("embedded_platform!() takes no arguments");
    }
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") else {
        return compile_error("CARGO_MANIFEST_DIR is not set: build with cargo");
    };
    let path = std::path::Path::new(&dir).join("platform.toml");
    let manifest = match mediaparse_catalogue::Manifest::load(&path) {
        Ok(m) => m,
        Err(e) => return compile_error(&e.to_string()),
    };
    let members: String = manifest
        .listed()
        .map(|(name, kind)| format!("({name:?}, {:?}),", kind.name()))
        .collect();
    // `include_str!` makes cargo rebuild the crate when the file changes.
    format!(
        "{{ const _: &str = ::core::include_str!({path:?}); ({id:?}, &[{members}]) }}",
        path = path.display().to_string(),
        id = manifest.id,
    )
    .parse()
    .unwrap_or_else(|_| compile_error("embedded_platform!: generated tokens do not parse"))
}

fn compile_error(message: &str) -> TokenStream {
    format!("::core::compile_error!({message:?})")
        .parse()
        .unwrap_or_default()
}

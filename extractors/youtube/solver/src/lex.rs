//! A small JavaScript tokenizer: enough to find statement boundaries, bracket
//! depth and identifiers in a minified player without a full parse. It knows
//! strings, template literals, regular-expression literals and comments, so a
//! bracket or a `;` inside them is never taken for code.

/// What a token is; its text is `src[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Number,
    Str,
    Template,
    Regex,
    Punct,
}

#[derive(Debug, Clone, Copy)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    /// Bracket depth (`(`, `[`, `{` together) before this token.
    pub depth: u32,
}

/// Words after which a `/` starts a regular expression, not a division.
const BEFORE_EXPRESSION: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "instanceof",
    "new",
    "delete",
    "void",
    "throw",
    "yield",
    "await",
];

/// Tokenizes `src`; `None` if a string, comment or regex never ends.
pub fn tokenize(src: &str) -> Option<Vec<Token>> {
    let b = src.as_bytes();
    let mut out: Vec<Token> = Vec::with_capacity(src.len() / 4);
    let mut i = 0;
    let mut depth: u32 = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = memchr(b, b'\n', i).unwrap_or(b.len());
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = find(b, b"*/", i + 2)? + 2;
            continue;
        }
        let start = i;
        let kind = if c == b'"' || c == b'\'' {
            i = skip_string(b, i)?;
            Kind::Str
        } else if c == b'`' {
            i = skip_template(b, i)?;
            Kind::Template
        } else if c == b'/' && regex_allowed(src, out.last()) {
            i = skip_regex(b, i)?;
            Kind::Regex
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                // An exponent's sign belongs to the number.
                if (b[i] == b'e' || b[i] == b'E') && matches!(b.get(i + 1), Some(b'+' | b'-')) {
                    i += 1;
                }
                i += 1;
            }
            Kind::Number
        } else if is_ident_start(c) {
            i += 1;
            while i < b.len() && is_ident_part(b[i]) {
                i += 1;
            }
            Kind::Ident
        } else {
            i += punct_len(&b[i..]);
            Kind::Punct
        };
        let text = &b[start..i];
        let closes = kind == Kind::Punct && matches!(text, b")" | b"]" | b"}");
        if closes {
            depth = depth.saturating_sub(1);
        }
        out.push(Token {
            kind,
            start,
            end: i,
            depth,
        });
        if kind == Kind::Punct && matches!(text, b"(" | b"[" | b"{") {
            depth += 1;
        }
    }
    Some(out)
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident_part(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

fn regex_allowed(src: &str, prev: Option<&Token>) -> bool {
    let Some(p) = prev else { return true };
    let text = &src[p.start..p.end];
    match p.kind {
        Kind::Number | Kind::Str | Kind::Template | Kind::Regex => false,
        Kind::Ident => BEFORE_EXPRESSION.contains(&text),
        Kind::Punct => !matches!(text, ")" | "]" | "}" | "++" | "--"),
    }
}

fn punct_len(rest: &[u8]) -> usize {
    const LONG: &[&[u8]] = &[
        b">>>=", b"...", b"===", b"!==", b"**=", b"<<=", b">>=", b">>>", b"&&=", b"||=", b"??=",
        b"=>", b"==", b"!=", b"<=", b">=", b"&&", b"||", b"??", b"?.", b"++", b"--", b"+=", b"-=",
        b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<", b">>", b"**",
    ];
    LONG.iter()
        .find(|p| rest.starts_with(p))
        .map_or(1, |p| p.len())
}

fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    let q = b[i];
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == q => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A template literal, including `${ … }` parts (which may hold strings,
/// nested templates and braces).
fn skip_template(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return Some(i + 1),
            b'$' if b.get(i + 1) == Some(&b'{') => {
                i += 2;
                let mut braces = 1;
                while braces > 0 {
                    match *b.get(i)? {
                        b'{' => {
                            braces += 1;
                            i += 1;
                        }
                        b'}' => {
                            braces -= 1;
                            i += 1;
                        }
                        b'"' | b'\'' => i = skip_string(b, i)?,
                        b'`' => i = skip_template(b, i)?,
                        _ => i += 1,
                    }
                }
            }
            _ => i += 1,
        }
    }
    None
}

fn skip_regex(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    let mut class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => {
                class = true;
                i += 1;
            }
            b']' => {
                class = false;
                i += 1;
            }
            b'/' if !class => {
                i += 1;
                while i < b.len() && is_ident_part(b[i]) {
                    i += 1;
                }
                return Some(i);
            }
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

fn memchr(b: &[u8], c: u8, from: usize) -> Option<usize> {
    b[from..].iter().position(|&x| x == c).map(|p| p + from)
}

fn find(b: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    b[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, &str)> {
        tokenize(src)
            .unwrap_or_default()
            .into_iter()
            .map(|t| (t.kind, &src[t.start..t.end]))
            .collect()
    }

    #[test]
    fn regex_division_strings_and_comments_are_told_apart() {
        let t = kinds(r#"a=b/c;d=/[/;]x/g.test("};")/*{*/;e=`${f({})}`"#);
        assert!(t.contains(&(Kind::Punct, "/")));
        assert!(t.contains(&(Kind::Regex, "/[/;]x/g")));
        assert!(t.contains(&(Kind::Str, "\"};\"")));
        assert!(t.contains(&(Kind::Template, "`${f({})}`")));
        assert_eq!(t.iter().filter(|x| x.1 == ";").count(), 2);
    }

    #[test]
    fn depth_counts_all_brackets() {
        let src = "f(a[{b:1}]);g";
        let toks = tokenize(src).unwrap_or_default();
        let last = toks.last().map(|t| t.depth);
        assert_eq!(last, Some(0));
        assert_eq!(toks.iter().map(|t| t.depth).max(), Some(3));
    }
}

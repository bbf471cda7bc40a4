//! BookSim2's config language, read as BookSim2's own flex/bison parser reads it
//! (`src/config.l`, `src/config.y` of booksim/booksim2): `key = value;` statements,
//! `//` comments to the end of the line, and three kinds of value — a whole number
//! (`-?[0-9]+`), a real (`1.5`, `.5`, `2e-3`) or a string (a name such as `mesh`, a path,
//! `hotspot({0,7},{1,1})`, or a `{…}` list). Tokens are matched longest first, ties going to
//! the earlier rule, as flex does; a `{…}` list has no spaces inside (BookSim2's scanner
//! takes none). Command-line overrides are the same statements without the `;`.

use std::fmt;

/// A value as the scanner classified it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

/// One `key = value;` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub key: String,
    pub value: Value,
    /// 1-based line of the key in its file (`None`: from the command line).
    pub line: Option<usize>,
}

/// A statement that cannot be read: the line and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: Option<usize>,
    pub msg: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Int(i64),
    Float(f64),
    Char(char),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Str(s) => write!(f, "`{s}`"),
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::Float(v) => write!(f, "`{v}`"),
            Tok::Char(c) => write!(f, "`{}`", c.escape_default()),
        }
    }
}

/// A character of a string after its first (`StrConst` in config.l).
fn str_tail(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_-/.+({,)}".contains(&c)
}

/// The first character of a string.
fn str_head(c: u8) -> bool {
    c.is_ascii_alphabetic() || b"_-/.".contains(&c)
}

/// A character inside a `{…}` list.
fn list_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_-.({,)}".contains(&c)
}

fn digits(b: &[u8], i: usize) -> usize {
    b[i..].iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `-?[0-9]+`
fn m_int(b: &[u8]) -> usize {
    let s = usize::from(b.first() == Some(&b'-'));
    match digits(b, s) {
        0 => 0,
        d => s + d,
    }
}

/// `-?[0-9]*\.[0-9]+`
fn m_dot(b: &[u8]) -> usize {
    let s = usize::from(b.first() == Some(&b'-'));
    let i = s + digits(b, s);
    if b.get(i) != Some(&b'.') {
        return 0;
    }
    match digits(b, i + 1) {
        0 => 0,
        d => i + 1 + d,
    }
}

/// `-?({D}*\.)?{D}+([eE][+-]?{D}+)?`, longest.
fn m_dbl(b: &[u8]) -> usize {
    let s = usize::from(b.first() == Some(&b'-'));
    // Mantissa: with a point (`D*.D+`) or without (`D+`); the longer that matches.
    let with_point = m_dot(&b[s..]);
    let without = digits(b, s);
    let mantissa = with_point.max(without);
    if mantissa == 0 {
        return 0;
    }
    let mut i = s + mantissa;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let d = digits(b, j);
        if d > 0 {
            i = j + d;
        }
    }
    i
}

/// `[A-Za-z_\-/\.][A-Za-z0-9_\-/\.\+(\{\,)\}]*`
fn m_str(b: &[u8]) -> usize {
    match b.first() {
        Some(&c) if str_head(c) => 1 + b[1..].iter().take_while(|&&c| str_tail(c)).count(),
        _ => 0,
    }
}

/// `\{L+(\,L+)*\}` with L = `[A-Za-z0-9_\-\.(\{\,)\}]`: as L holds `,` and `}`, the longest
/// run of L after the `{` that ends in `}` with at least one L before it.
fn m_list(b: &[u8]) -> usize {
    if b.first() != Some(&b'{') {
        return 0;
    }
    let run = b[1..].iter().take_while(|&&c| list_char(c)).count();
    (2..=run).rev().find(|&n| b[n] == b'}').map_or(0, |n| n + 1)
}

/// Splits `text` into tokens with their lines.
fn scan(text: &str, first_line: Option<usize>) -> Result<Vec<(Tok, Option<usize>)>, SyntaxError> {
    let b = text.as_bytes();
    let mut line = first_line;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line = line.map(|l| l + 1);
            i += 1;
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"//") {
            i += b[i..].iter().take_while(|&&c| c != b'\n').count();
            continue;
        }
        let rest = &b[i..];
        // config.l's rules in order; the longest match wins, the earlier rule on a tie.
        let lens = [m_list(rest), m_int(rest), m_dot(rest), m_dbl(rest), m_str(rest)];
        let (rule, len) =
            lens.iter().copied().enumerate().fold(
                (usize::MAX, 0),
                |best, (r, l)| if l > best.1 { (r, l) } else { best },
            );
        if len == 0 {
            // `.`: one character, returned as itself.
            let ch = text[i..].chars().next().expect("in range");
            out.push((Tok::Char(ch), line));
            i += ch.len_utf8();
            continue;
        }
        let word = &text[i..i + len];
        let tok = match rule {
            1 => match word.parse::<i64>() {
                Ok(v) if i32::try_from(v).is_ok() => Tok::Int(v),
                _ => {
                    return Err(SyntaxError {
                        line,
                        msg: format!(
                            "`{word}` is out of range: BookSim2 reads whole numbers as 32-bit integers \
                             (-2147483648 to 2147483647)"
                        ),
                    });
                }
            },
            2 | 3 => Tok::Float(word.parse::<f64>().map_err(|_| SyntaxError {
                line,
                msg: format!("`{word}` is not a number"),
            })?),
            _ => Tok::Str(word.to_string()),
        };
        out.push((tok, line));
        i += len;
    }
    Ok(out)
}

/// Reads `key = value;` statements from `text`, whose first line is `first_line`.
pub fn parse(text: &str, first_line: Option<usize>) -> Result<Vec<Stmt>, SyntaxError> {
    let toks = scan(text, first_line)?;
    let mut out = Vec::new();
    let mut it = toks.into_iter().peekable();
    let end_line = |l: Option<usize>| l;
    while let Some((tok, line)) = it.next() {
        let key = match tok {
            Tok::Str(s) => s,
            other => {
                return Err(SyntaxError {
                    line,
                    msg: format!("expected a key name, found {other}"),
                });
            }
        };
        match it.next() {
            Some((Tok::Char('='), _)) => {}
            Some((other, l)) => {
                return Err(SyntaxError {
                    line: l,
                    msg: format!("expected `=` after `{key}`, found {other}"),
                });
            }
            None => {
                return Err(SyntaxError {
                    line: end_line(line),
                    msg: format!("expected `=` after `{key}`, found the end"),
                });
            }
        }
        let value = match it.next() {
            Some((Tok::Str(s), _)) => Value::Str(s),
            Some((Tok::Int(v), _)) => Value::Int(v),
            Some((Tok::Float(v), _)) => Value::Float(v),
            Some((other, l)) => {
                let hint = if other == Tok::Char('{') {
                    " (a {…} list has no spaces in it, e.g. {0.1,0.2})"
                } else {
                    ""
                };
                return Err(SyntaxError {
                    line: l,
                    msg: format!(
                        "expected a value for `{key}` (a number, a name or a {{…}} list), found {other}{hint}"
                    ),
                });
            }
            None => {
                return Err(SyntaxError {
                    line,
                    msg: format!("expected a value for `{key}`, found the end"),
                });
            }
        };
        match it.next() {
            Some((Tok::Char(';'), _)) => {}
            Some((other, l)) => {
                return Err(SyntaxError {
                    line: l,
                    msg: format!("expected `;` after `{key} = {value}`, found {other}"),
                });
            }
            None => {
                return Err(SyntaxError {
                    line,
                    msg: format!("expected `;` after `{key} = {value}`"),
                });
            }
        }
        out.push(Stmt { key, value, line });
    }
    Ok(out)
}

/// Splits a `{a,b,{c,d}}` list into its top-level elements as BookSim2's `tokenize_str`
/// does; a value without braces is a list of one.
pub fn tokenize(data: &str) -> Vec<String> {
    if data.is_empty() {
        return Vec::new();
    }
    if !data.starts_with('{') {
        return vec![data.to_string()];
    }
    let mut out = Vec::new();
    let mut nested = 0;
    let mut start = 1;
    for (i, c) in data.char_indices().skip(1) {
        match c {
            '{' => nested += 1,
            '}' if nested > 0 => nested -= 1,
            ',' | '}' if nested == 0 => {
                if i > start {
                    out.push(data[start..i].to_string());
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// `name(params)`: the name and its `{…}`-style parameter list (BookSim2's traffic patterns
/// and injection processes).
pub fn call(s: &str) -> (&str, Vec<String>) {
    match s.find('(') {
        None => (s, Vec::new()),
        Some(l) => {
            let inner = match s.rfind(')') {
                Some(r) if r > l => &s[l + 1..r],
                _ => &s[l + 1..],
            };
            // tokenize_str treats a string without a brace as one element, so the
            // parameters are read as a list in braces.
            (&s[..l], tokenize(&format!("{{{inner}}}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Value {
        let s = parse(text, Some(1)).expect("parses");
        assert_eq!(s.len(), 1, "{text}");
        s[0].value.clone()
    }

    #[test]
    fn the_three_kinds_of_value() {
        assert_eq!(one("k = 8;"), Value::Int(8));
        assert_eq!(one("k = -8;"), Value::Int(-8));
        assert_eq!(one("r = 0.15;"), Value::Float(0.15));
        assert_eq!(one("r = .5;"), Value::Float(0.5));
        assert_eq!(one("r = 1e-3;"), Value::Float(1e-3));
        assert_eq!(one("r = 2.5E+2;"), Value::Float(250.0));
        assert_eq!(one("t = mesh;"), Value::Str("mesh".into()));
        assert_eq!(one("w = -;"), Value::Str("-".into()));
        assert_eq!(one("f = ./a/b.txt;"), Value::Str("./a/b.txt".into()));
        assert_eq!(one("r = {0.1,0.2};"), Value::Str("{0.1,0.2}".into()));
        assert_eq!(
            one("traffic = hotspot({0,7},{1,2});"),
            Value::Str("hotspot({0,7},{1,2})".into())
        );
    }

    #[test]
    fn comments_lines_and_spacing() {
        let s = parse(
            "// a comment\ntopology = torus; // trailing\n\n  k=4 ;\n",
            Some(1),
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].key.as_str(), s[0].line), ("topology", Some(2)));
        assert_eq!((s[1].key.as_str(), s[1].line), ("k", Some(4)));
        // A statement may span lines; its line is the key's.
        let s = parse("k\n=\n4\n;", Some(1)).unwrap();
        assert_eq!(s[0].line, Some(1));
        assert_eq!(parse("", Some(1)).unwrap(), Vec::new());
    }

    #[test]
    fn flex_longest_match_and_rule_order() {
        // `10` is both an integer and a real: the integer rule comes first.
        assert_eq!(one("a = 10;"), Value::Int(10));
        // `-5a` is longer as a string than as a number.
        assert_eq!(one("a = -5a;"), Value::Str("-5a".into()));
        // `5a` is a number then a string: no `;` after the value.
        let e = parse("a = 5a;", Some(1)).unwrap_err();
        assert!(
            e.msg.contains("expected `;` after `a = 5`, found `a`"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn syntax_errors_name_the_line_and_what_was_expected() {
        let cases = [
            ("k = 4\nn = 2;", 2, "expected `;` after `k = 4`, found `n`"),
            ("k 4;", 1, "expected `=` after `k`, found `4`"),
            ("k = ;", 1, "expected a value for `k`"),
            ("\n\n4 = k;", 3, "expected a key name, found `4`"),
            ("r = { 0.1, 0.2 };", 1, "no spaces in it"),
            ("k = 4", 1, "expected `;` after `k = 4`"),
            ("k = 99999999999;", 1, "out of range"),
            ("k = 4;;", 1, "expected a key name, found `;`"),
        ];
        for (text, line, msg) in cases {
            let e = parse(text, Some(1)).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}: {e:?}");
            assert!(e.msg.contains(msg), "{text}: {}", e.msg);
        }
    }

    #[test]
    fn lists_split_at_the_top_level() {
        assert_eq!(tokenize("{1,2,3}"), vec!["1", "2", "3"]);
        assert_eq!(tokenize("7"), vec!["7"]);
        assert_eq!(tokenize("{{0,1},2}"), vec!["{0,1}", "2"]);
        assert!(tokenize("").is_empty());
        assert_eq!(call("uniform"), ("uniform", vec![]));
        assert_eq!(
            call("hotspot({0,7},{1,2})"),
            ("hotspot", vec!["{0,7}".into(), "{1,2}".into()])
        );
        assert_eq!(
            call("on_off(0.1,0.2)"),
            ("on_off", vec!["0.1".into(), "0.2".into()])
        );
    }
}

//! Configs: TOML read into the raw schema ([`raw`]), `--set key=value` overrides applied,
//! then validated and built into a [`Spec`] ([`build`]). Every error names the file, the line
//! of the offending key (when it is in the file) and what was expected.

mod atoll;
pub mod booksim;
pub mod build;
mod hardware;
mod messages;
mod network;
pub mod raw;
mod routing;
mod traffic;

use crate::engine::Spec;
use std::fmt;
use std::path::Path;

/// A config that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The config file.
    pub file: String,
    /// 1-based line of the offending key, if it is in the file.
    pub line: Option<usize>,
    /// Dotted key, e.g. `topology.k`.
    pub key: String,
    pub msg: String,
    pub hint: Option<String>,
    /// The command-line option that gave the offending value, when it did not come from
    /// the file.
    pub origin: Option<Origin>,
}

/// A command-line option that gives config values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `--set key=value`.
    Set,
    /// A sweep's `--load`.
    Load,
    /// `--unset key`.
    Unset,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Origin::Set => "--set",
            Origin::Load => "--load",
            Origin::Unset => "--unset",
        })
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if self.key.is_empty() {
            write!(f, ": {}", self.msg)?;
        } else {
            write!(f, ": {}: {}", self.key, self.msg)?;
        }
        if let Some(o) = self.origin {
            write!(f, " (from {o})")?;
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// The largest seed any command takes: 2^63 − 1, the largest TOML integer, so that every
/// seed — `sim.seed` in a config, `--seed` of `run`, `sweep` and `reproduce` — has the same
/// range and one given on the command line can always be written into a config.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// Reads a `--seed`: a whole number from 0 to [`MAX_SEED`]; anything else is an error that
/// names the range.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(v) if v <= MAX_SEED => Ok(v),
        _ => Err(format!(
            "a seed is a whole number from 0 to 2^63 - 1 ({MAX_SEED}, the largest TOML integer)"
        )),
    }
}

/// `s` with its control characters (escape sequences, carriage returns, newlines) written
/// as escapes (`\u{1b}`, `\r`, `\n`), so that a name printed to a terminal shows what it
/// holds instead of acting on the terminal.
pub fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The name of what was run: the config's `name` and the overrides that changed it
/// (`mesh8x8-uniform-0.2 (traffic.load=0.3, topology.k=[256,256])`), so that a title or a
/// summary says what was actually run. `sim.check` is left out: it changes no result.
pub fn run_name(name: &str, overrides: &[String]) -> String {
    let shown: Vec<String> = overrides
        .iter()
        .filter(|o| o.split('=').next().map(str::trim) != Some("sim.check"))
        .map(|o| match o.strip_prefix(UNSET) {
            Some(k) => format!("without {}", escape_controls(k.trim())),
            None => escape_controls(o.trim()),
        })
        .collect();
    if shown.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({})", shown.join(", "))
    }
}

/// One segment of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Splits `a.b[2].c` into segments.
pub fn parse_path(s: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in s.split('.') {
        let (name, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(Seg::Key(name.to_string()));
        }
        for idx in rest.split('[').filter(|x| !x.is_empty()) {
            if let Ok(n) = idx.trim_end_matches(']').parse() {
                out.push(Seg::Index(n));
            }
        }
    }
    out
}

/// The 1-based line where `path` is written in the TOML `text`, as deep as it can be found.
pub fn locate(text: &str, path: &[Seg]) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let line_of = |off: usize| text[..off.min(text.len())].matches('\n').count() + 1;
    let mut found: Option<usize> = None;
    let mut table: Option<&DeTable> = Some(doc.get_ref());
    let mut array: Option<&[toml::Spanned<DeValue>]> = None;
    for seg in path {
        let value = match (seg, table, array) {
            (Seg::Key(k), Some(t), _) => {
                let (key, v) = t.iter().find(|(key, _)| key.get_ref().as_ref() == k.as_str())?;
                found = Some(line_of(key.span().start));
                v
            }
            (Seg::Index(i), _, Some(a)) => {
                let v = a.get(*i)?;
                found = Some(line_of(v.span().start));
                v
            }
            _ => break,
        };
        table = None;
        array = None;
        match value.get_ref() {
            DeValue::Table(t) => table = Some(t),
            DeValue::Array(a) => array = Some(a.as_ref()),
            _ => {}
        }
    }
    found
}

/// Reads a text file of at most `limit_mb` megabytes: past that it is refused rather than read
/// on (a path such as `/dev/zero` never ends).
pub(crate) fn read_text(path: &Path, limit_mb: u64) -> Result<String, String> {
    use std::io::Read;
    let limit = limit_mb << 20;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| e.to_string())?;
    if buf.len() as u64 > limit {
        return Err(format!("it is larger than {limit_mb} MB"));
    }
    String::from_utf8(buf).map_err(|_| "it is not UTF-8 text".to_string())
}

/// A config file's name (for messages) and text.
fn read_config(path: &Path) -> Result<(String, String), ConfigError> {
    let file = path.display().to_string();
    let text = read_text(path, 16).map_err(|e| ConfigError {
        file: file.clone(),
        line: None,
        key: String::new(),
        msg: format!("cannot read: {e}"),
        hint: None,
        origin: None,
    })?;
    Ok((file, text))
}

/// Reads a config file, applies `overrides` (`key=value`, the value in TOML syntax or a bare
/// string; or [`UNSET`]`key`, which removes the key, as `--unset` does) and builds it. A file
/// whose name does not end in `.toml` is a BookSim2 config
/// ([`booksim`]): its overrides are BookSim2's `key=value`, or reef's `section.key=value`
/// applied to the translation.
pub fn load(path: &Path, overrides: &[String]) -> Result<Spec, ConfigError> {
    let (file, text) = read_config(path)?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if booksim::is_booksim(path) {
        let (bs, reef) = booksim::split_overrides(overrides);
        let t = booksim::translate(&file, &text, &bs)?;
        return load_str(&file, &t.toml, &dir, &reef).map_err(|e| booksim::locate_error(&t, &file, e));
    }
    load_str(&file, &text, &dir, overrides)
}

/// A BookSim2 config translated into reef's TOML ([`booksim`]); `overrides` are BookSim2's
/// `key=value` (reef's `section.key=value` are left for [`load`]).
pub fn translate_booksim(path: &Path, overrides: &[String]) -> Result<booksim::Translation, ConfigError> {
    let (file, text) = read_config(path)?;
    let (bs, _) = booksim::split_overrides(overrides);
    booksim::translate(&file, &text, &bs)
}

/// What a run of the config at `path` should say first: for a BookSim2 config, the keys
/// that change nothing in reef and the approximations ([`booksim::Translation::notes`]);
/// nothing for a reef config (or one that cannot be read: [`load`] reports that).
pub fn notes(path: &Path, overrides: &[String]) -> Vec<String> {
    if !booksim::is_booksim(path) {
        return Vec::new();
    }
    translate_booksim(path, overrides)
        .map(|t| t.notes)
        .unwrap_or_default()
}

/// A deserialiser's message in the words of the config (its Rust names for types and enums
/// mean nothing to a user), and a hint where the new words call for one.
fn plain_words(msg: &str) -> (String, Option<String>) {
    let msg = msg.trim();
    if msg.contains("untagged enum Radix") {
        return (
            "expected a number of switches per dimension, or a list of them".into(),
            Some("e.g. k = 8 (every dimension) or k = [8, 4]".into()),
        );
    }
    if msg.contains("untagged enum LoadValue") {
        return (
            "expected a load: flits per cycle per host, or a rate in quotes".into(),
            Some("e.g. load = 0.2 or load = \"5 MB/s\"".into()),
        );
    }
    if msg.contains("untagged enum") {
        return (
            "not a value this key takes".into(),
            Some("see docs/config.md".into()),
        );
    }
    // A table (`{}`) where a name is expected.
    if msg.starts_with("wanted exactly 1 element") || msg.contains("unit variant, expected string only") {
        return (
            "expected a name in quotes".into(),
            Some("see docs/config.md for the allowed values".into()),
        );
    }
    let mut out = msg.to_string();
    // Serde's names for the shapes of TOML values.
    for (rust, words) in [
        ("a sequence", "a list, e.g. [1, 2]"),
        ("a map", "a table of keys"),
        ("a borrowed string", "a string in quotes"),
        ("a boolean", "true or false"),
        ("an array of length 2", "a list of two, e.g. [0, 1]"),
    ] {
        out = out.replace(&format!("expected {rust}"), &format!("expected {words}"));
    }
    if let Some(at) = out.find("expected struct Raw") {
        // `sim = 3`: a section given a value.
        out.replace_range(at.., "expected a table of keys (a section such as [sim])");
    }
    if let Some(at) = out.find("expected tuple") {
        out.replace_range(at.., "expected a pair, e.g. [4, 0.8]");
    }
    for (rust, words) in [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("expected u64", "expected a whole number from 0 to 2^63 - 1"),
        ("expected f64", "expected a number"),
    ] {
        if let Some(at) = out.find(rust)
            && !out[at + rust.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            out.replace_range(at..at + rust.len(), words);
        }
    }
    (out, None)
}

/// The range a numeric key takes, in words, where it is narrower than its type's (the
/// deserialiser knows only the type: `vcs = -1` would read "0 to 4294967295").
fn key_range(path: &str) -> Option<&'static str> {
    let key = path.rsplit('.').next().unwrap_or(path);
    Some(match (path, key) {
        (_, "vcs") => "a whole number of virtual channels from 1 to 64",
        (_, "buffer") => "a whole number of flits from 1 to 1048576",
        ("switch.output_buffer", _) => "a whole number of flits from 0 (none) to 1048576",
        ("sim.batches", _) => "a whole number from 1 to 1000",
        ("sim.runs", _) => "a whole number from 1 to 1000",
        ("sim.seed", _) => "a whole number from 0 to 2^63 - 1",
        ("switch.speedup", _) => "a whole number from 1 to 4294967295",
        ("traffic.packet_size", _) => "a whole number of flits from 1 to 4294967295",
        ("traffic.flit_bytes", _) => "a whole number of bytes from 1 to 4294967295",
        ("traffic.messages", _) => "a whole number from 1 to 1000000",
        (_, "token_grant") | (_, "token_max") => "a whole number of flits from 1 to 4294967295",
        (_, "flit_bits") | (_, "tail_bits") => "a whole number of bits from 1 to 4294967295",
        ("traffic.message_sizes", _) => "sizes in bytes from 1 to 1073741824",
        _ => return None,
    })
}

/// Applies `--unset KEY`: removes `key` from the table; an error if it is not there (a
/// misspelt key would otherwise be a silent no-op).
fn unset_path(table: &mut toml::Table, key: &str) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!(
            "`{key}` is not a key: expected section.key, e.g. channel.credit_delay"
        ));
    }
    let mut t = table;
    for p in &parts[..parts.len() - 1] {
        t = match t.get_mut(*p) {
            Some(toml::Value::Table(x)) => x,
            _ => return Err("the config does not set it (it already takes its default)".into()),
        };
    }
    t.remove(parts[parts.len() - 1])
        .map(|_| ())
        .ok_or_else(|| "the config does not set it (it already takes its default)".into())
}

/// The prefix that marks an override as `--unset KEY` in the lists [`load`] takes.
pub const UNSET: &str = "!unset ";

/// The config at `path` with `overrides` applied, as canonical TOML text (keys sorted, one
/// spelling of each value): two configs that read the same give the same text, whatever
/// their layout, comments or the order of their overrides' keys. A BookSim2 config is its
/// translation ([`booksim`]). Files the config names (a topology file) are named, not read.
pub fn resolved(path: &Path, overrides: &[String]) -> Result<String, ConfigError> {
    let (file, text) = read_config(path)?;
    let (text, overrides) = if booksim::is_booksim(path) {
        let (bs, reef) = booksim::split_overrides(overrides);
        (booksim::translate(&file, &text, &bs)?.toml, reef)
    } else {
        (text, overrides.to_vec())
    };
    let (table, _) = overridden_table(&file, &text, &overrides)?;
    Ok(toml::to_string(&table).unwrap_or_default())
}

/// An error in config `file`, at `line` if known, of `key`.
fn error_in(file: &str, line: Option<usize>, key: String, msg: String, hint: Option<String>) -> ConfigError {
    ConfigError {
        file: file.to_string(),
        line,
        key,
        msg,
        hint,
        origin: None,
    }
}

/// A config's text parsed and `overrides` applied to it: the table, and the keys set.
fn overridden_table(
    file: &str,
    text: &str,
    overrides: &[String],
) -> Result<(toml::Table, Vec<String>), ConfigError> {
    let err = |line, key: String, msg: String, hint: Option<String>| error_in(file, line, key, msg, hint);
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let msg = e.message().trim().to_string();
        let hint = if msg.contains("too large") || msg.contains("too small") {
            "TOML integers are from -2^63 to 2^63 - 1"
        } else {
            "check the TOML syntax"
        };
        err(line, String::new(), msg, Some(hint.into()))
    })?;
    let mut overridden = Vec::new();
    // Keys removed first, then keys set: `--unset a --set a=1` sets it.
    for o in overrides {
        if let Some(k) = o.strip_prefix(UNSET) {
            unset_path(&mut table, k).map_err(|m| ConfigError {
                origin: Some(Origin::Unset),
                ..err(None, k.to_string(), m, None)
            })?;
        }
    }
    for o in overrides.iter().filter(|o| !o.starts_with(UNSET)) {
        let (k, v) = o.split_once('=').ok_or_else(|| {
            err(
                None,
                o.clone(),
                "--set expects key=value".into(),
                Some("e.g. --set traffic.load=0.3".into()),
            )
        })?;
        let value: toml::Value = match format!("x = {v}").parse::<toml::Table>() {
            Ok(mut t) => t
                .remove("x")
                .unwrap_or_else(|| toml::Value::String(v.to_string())),
            // A list, a table or a quoted string that does not parse is a TOML mistake,
            // not a bare word to take as a string.
            Err(e) if v.trim_start().starts_with(['[', '{', '"', '\'']) => {
                return Err(ConfigError {
                    origin: Some(Origin::Set),
                    ..err(
                        None,
                        k.to_string(),
                        format!("`{v}` is not a TOML value: {}", e.message().trim()),
                        Some("check the TOML syntax, e.g. --set 'topology.k=[8, 8]'".into()),
                    )
                });
            }
            Err(_) => toml::Value::String(v.to_string()),
        };
        set_path(&mut table, k, value).map_err(|m| err(None, k.to_string(), m, None))?;
        overridden.push(k.to_string());
    }
    Ok((table, overridden))
}

/// Like [`load`], from text; `dir` resolves relative file names (topology files).
pub fn load_str(file: &str, text: &str, dir: &Path, overrides: &[String]) -> Result<Spec, ConfigError> {
    let err = |line, key: String, msg: String, hint: Option<String>| error_in(file, line, key, msg, hint);
    let (table, overridden) = overridden_table(file, text, overrides)?;
    let raw: raw::RawConfig = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let mut path = e.path().to_string();
        let (mut inner, plain_hint) = plain_words(e.inner().message());
        // A number outside its key's range: the key's range, not its type's.
        if let (Some(at), Some(range)) = (inner.find(", expected a whole number"), key_range(&path)) {
            inner.replace_range(at.., &format!(", expected {range}"));
        }
        // An unknown key is reported at its table; point at the key itself.
        let mut hint = None;
        if let Some(rest) = inner.strip_prefix("unknown field `")
            && let Some((name, expected)) = rest.split_once('`')
        {
            // The path already ends at the unknown key in current serde_path_to_error.
            if path == "." || path.is_empty() {
                path = name.to_string();
            } else if !path.ends_with(name) {
                path = format!("{path}.{name}");
            }
            let choices: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            if let Some(best) = choices
                .iter()
                .min_by_key(|c| strsim::damerau_levenshtein(c, name))
                .filter(|c| strsim::damerau_levenshtein(c, name) <= 3)
            {
                hint = Some(format!("did you mean `{best}`?"));
            }
        } else if inner.contains("unknown variant") {
            hint = Some("see docs/config.md for the allowed values".into());
        } else if plain_hint.is_some() {
            hint = plain_hint;
        } else if inner.contains("a table of keys") {
            hint = Some("a section's keys are set one at a time, e.g. --set sim.seed=3".into());
        } else if inner.starts_with("invalid type") {
            hint = Some("quantities with units are strings, e.g. \"10 ns\"; counts are numbers".into());
        }
        let from_set = overridden.iter().any(|k| path.starts_with(k.as_str()));
        let line = if from_set {
            None
        } else {
            locate(text, &parse_path(&path))
        };
        let key = if path == "." { String::new() } else { path };
        ConfigError {
            origin: from_set.then_some(Origin::Set),
            ..err(line, key, inner, hint)
        }
    })?;
    build::build(
        &raw,
        &build::Source {
            file,
            text,
            dir,
            overridden: &overridden,
        },
    )
}

fn set_path(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!(
            "`{key}` is not a key: expected section.key, e.g. traffic.load"
        ));
    }
    let mut t = table;
    for p in &parts[..parts.len() - 1] {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = match entry {
            toml::Value::Table(x) => x,
            _ => return Err(format!("`{p}` is not a table")),
        };
    }
    t.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_run_from_0_to_the_largest_toml_integer() {
        assert_eq!(parse_seed("0"), Ok(0));
        assert_eq!(parse_seed("9223372036854775807"), Ok(MAX_SEED));
        assert_eq!(MAX_SEED, i64::MAX as u64);
        for bad in [
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "x",
            "",
        ] {
            let e = parse_seed(bad).unwrap_err();
            assert!(e.contains("0 to 2^63 - 1 (9223372036854775807"), "{bad}: {e}");
        }
    }

    #[test]
    fn paths_and_lines() {
        let text = "name = \"x\"\n[topology]\nkind = \"mesh\"\nk = [8, 8]\n\n[traffic]\nload = 0.1\n";
        assert_eq!(locate(text, &parse_path("topology.k")), Some(4));
        assert_eq!(locate(text, &parse_path("topology.k[1]")), Some(4));
        assert_eq!(locate(text, &parse_path("traffic.load")), Some(7));
        assert_eq!(locate(text, &parse_path("traffic")), Some(6));
        assert_eq!(
            parse_path("a.b[2].c"),
            vec![
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Index(2),
                Seg::Key("c".into())
            ]
        );
    }
}

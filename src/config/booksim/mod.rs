//! BookSim2 configs run as they are: a BookSim2 config file (booksim/booksim2, commit
//! 28f43299) and its command-line `key=value` overrides are read as BookSim2 reads them
//! ([`parse`], [`keys`]) and translated into reef's TOML ([`map`]), which is then built like
//! any reef config. `reef convert FILE` prints the translation. Every key reef does not
//! model is an error naming the key and its line, unless it is at BookSim2's default; keys
//! that cannot change a run (trace and power output) are reported
//! as notes. docs/booksim.md says which keys map onto what and how close the result is.

mod dragonfly;
pub mod keys;
mod leftover;
mod map;
pub mod parse;
mod routing;
mod toml_out;
mod topology;
mod traffic;

use super::{ConfigError, Origin};
use keys::{From, Store};
use std::path::Path;

/// A BookSim2 config translated into reef's TOML.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The equivalent reef config, commented with the BookSim2 keys each value comes from.
    pub toml: String,
    /// Keys that are understood but change nothing in reef's run, and approximations:
    /// printed before a run.
    pub notes: Vec<String>,
    /// Which BookSim2 key (and where) gave each reef key, to point errors at the source.
    pub origins: Vec<(String, &'static str, Option<From>)>,
}

/// Is `path` a BookSim2 config? Everything that does not end in `.toml` is.
pub fn is_booksim(path: &Path) -> bool {
    path.extension().is_none_or(|e| !e.eq_ignore_ascii_case("toml"))
}

/// Splits overrides into BookSim2 statements (`key=value`, no dot in the key) and reef TOML
/// keys (`section.key=value`, e.g. the `sim.seed` of `--seed`).
pub fn split_overrides(overrides: &[String]) -> (Vec<String>, Vec<String>) {
    overrides
        .iter()
        .cloned()
        .partition(|o| !o.split('=').next().unwrap_or("").contains('.'))
}

fn error(file: &str, key: &str, from: Option<From>, msg: String, hint: Option<String>) -> ConfigError {
    ConfigError {
        file: file.to_string(),
        line: match from {
            Some(From::Line(l)) => Some(l),
            _ => None,
        },
        key: key.to_string(),
        msg,
        hint,
        origin: matches!(from, Some(From::CommandLine)).then_some(Origin::Set),
    }
}

/// Reads a BookSim2 config (`text`, from `file`) and its BookSim2 overrides into a [`Store`].
pub fn read(file: &str, text: &str, overrides: &[String]) -> Result<Store, ConfigError> {
    let mut store = Store::default();
    let stmts = parse::parse(text, Some(1)).map_err(|e| {
        let line = e.line.map(From::Line);
        error(
            file,
            "",
            line,
            e.msg,
            Some("a BookSim2 config is `key = value;` statements (read as BookSim2 because the name does not end in .toml)".into()),
        )
    })?;
    if stmts.is_empty() {
        return Err(error(
            file,
            "",
            None,
            "no settings: a BookSim2 config is `key = value;` statements".into(),
            Some("a reef config is TOML and its name ends in .toml".into()),
        ));
    }
    for st in &stmts {
        store
            .assign(st)
            .map_err(|e| error(file, &st.key, st.line.map(From::Line), e.msg, e.hint))?;
    }
    for o in overrides {
        if let Some(key) = o.strip_prefix(super::UNSET) {
            return Err(error(
                file,
                key,
                Some(From::CommandLine),
                "a BookSim2 key is not unset: BookSim2 has no unset keys, only defaults".into(),
                Some(format!("give it the value you want, e.g. {key}=<value>")),
            ));
        }
        let stmts = parse::parse(&format!("{o};"), None).map_err(|e| {
            error(
                file,
                "",
                Some(From::CommandLine),
                format!("`{o}`: {}", e.msg),
                Some("BookSim2 overrides are key=value, e.g. injection_rate=0.2".into()),
            )
        })?;
        for st in &stmts {
            store
                .assign(st)
                .map_err(|e| error(file, &st.key, Some(From::CommandLine), e.msg, e.hint))?;
        }
    }
    Ok(store)
}

/// Reads and translates a BookSim2 config.
pub fn translate(file: &str, text: &str, overrides: &[String]) -> Result<Translation, ConfigError> {
    let store = read(file, text, overrides)?;
    map::translate(&store, file).map_err(|e| error(file, e.key, e.from, e.msg, e.hint))
}

/// Points an error in the translated TOML at the BookSim2 key it came from.
pub fn locate_error(t: &Translation, file: &str, mut e: ConfigError) -> ConfigError {
    if e.origin.is_some() {
        // From a reef `section.key` override: it stands as it is.
        e.file = file.to_string();
        return e;
    }
    let best = t
        .origins
        .iter()
        .filter(|(k, _, _)| {
            e.key == *k || e.key.starts_with(&format!("{k}.")) || e.key.starts_with(&format!("{k}["))
        })
        .max_by_key(|(k, _, _)| k.len());
    match best {
        Some((reef_key, bs_key, from)) => {
            e.msg = format!("{} (reef's {reef_key})", e.msg);
            e.key = (*bs_key).to_string();
            e.line = match from {
                Some(From::Line(l)) => Some(*l),
                _ => None,
            };
            e.origin = matches!(from, Some(From::CommandLine)).then_some(Origin::Set);
        }
        None => {
            e.line = None;
            e.msg = format!(
                "{} (in the reef config translated from it; see `reef convert`)",
                e.msg
            );
        }
    }
    e.file = file.to_string();
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_booksim_key_cannot_be_unset() {
        let unset = format!("{}k", super::super::UNSET);
        let e = read("a.cfg", "k = 8;\n", &[unset]).unwrap_err();
        assert_eq!(e.key, "k");
        assert!(e.msg.contains("not unset") && e.hint.unwrap().contains("k=<value>"));
    }

    #[test]
    fn overrides_split_on_the_dot() {
        let (bs, reef) = split_overrides(&[
            "injection_rate=0.2".into(),
            "sim.seed=3".into(),
            "k=4".into(),
            "traffic.load=0.1".into(),
        ]);
        assert_eq!(bs, vec!["injection_rate=0.2", "k=4"]);
        assert_eq!(reef, vec!["sim.seed=3", "traffic.load=0.1"]);
    }

    #[test]
    fn which_files_are_booksim() {
        assert!(is_booksim(Path::new("examples/torus88")));
        assert!(is_booksim(Path::new("my.cfg")));
        assert!(!is_booksim(Path::new("examples/mesh8x8.toml")));
        assert!(!is_booksim(Path::new("X.TOML")));
    }

    #[test]
    fn read_errors_carry_the_line() {
        let e = read("a.cfg", "k = 4;\nnum_vc = 2;\n", &[]).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "num_vc"));
        assert_eq!(e.hint.as_deref(), Some("did you mean `num_vcs`?"));
        let e = read("a.cfg", "k = 4;\n", &["k=x y".into()]).unwrap_err();
        assert_eq!((e.line, e.origin), (None, Some(Origin::Set)));
        let e = read("a.cfg", "// nothing\n", &[]).unwrap_err();
        assert!(e.msg.starts_with("no settings"), "{}", e.msg);
    }
}

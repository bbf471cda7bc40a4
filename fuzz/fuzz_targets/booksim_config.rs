//! Arbitrary text as a BookSim2 config with BookSim2's command-line overrides: it is read and
//! translated, or refused with an error that names a line the text has (or none, for an
//! override), never a panic; a translation loads as reef's own config would, and what loads
//! and is small runs without breaking an engine invariant.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use reef::config::{self, booksim};

fuzz_target!(|data: &[u8]| {
    common::limit_memory();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The text up to the first NUL is the file; each line after it is one override.
    let (file, rest) = text.split_once('\0').unwrap_or((text, ""));
    let overrides: Vec<String> = rest.lines().map(str::to_string).collect();
    let (bs, reef_keys) = booksim::split_overrides(&overrides);
    match booksim::translate("fuzz.cfg", file, &bs) {
        Err(e) => {
            if let Some(line) = e.line {
                assert!(line >= 1 && line <= file.lines().count().max(1), "{e}");
            }
        }
        Ok(t) => {
            let loaded = config::load_str("fuzz.cfg", &t.toml, &common::data_dir(), &reef_keys)
                .map_err(|e| booksim::locate_error(&t, "fuzz.cfg", e));
            if let Ok(spec) = loaded {
                common::run_if_small(spec);
            }
        }
    }
});

//! Arbitrary text as a config file: it loads or gives an error (never a panic), and what
//! loads and is small runs without breaking an engine invariant.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::limit_memory();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = reef::config::load_str("fuzz.toml", text, &common::data_dir(), &[]) {
        common::run_if_small(spec);
    }
});

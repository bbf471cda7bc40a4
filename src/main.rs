//! The `reef` command line: parses, calls the library, prints. See `reef --help`.

use anyhow::{Context, Result, bail};
use clap::Parser;
use reef::bench::{self, BenchRecord};
use reef::engine::SimError;
use reef::{config, report, runner};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// The binary's own modules, beside the library's in src/: the options, and what each
// command does with them.
#[path = "cli/args.rs"]
mod args;
#[path = "cli/commands.rs"]
mod commands;

use args::{Cli, Cmd};

/// Large blocks on transparent huge pages (`memory::HugeAlloc`).
#[global_allocator]
static ALLOC: reef::memory::HugeAlloc = reef::memory::HugeAlloc;

/// Exit status when the watchdog stopped a deadlocked network.
const EXIT_DEADLOCK: u8 = 2;
/// Exit status when an engine invariant did not hold.
const EXIT_INVARIANT: u8 = 3;
/// Longest static check `reef run` makes first [s, estimated].
const LARGE_CHECK: f64 = 2.0;

fn main() -> ExitCode {
    #[cfg(unix)]
    // SAFETY: done first, before any other thread exists; SIG_DFL for SIGPIPE is what every
    // process starts with outside Rust: a write to a closed pipe then ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

#[cfg(target_os = "linux")]
fn parse_poll_us(s: &str) -> Result<std::time::Duration, String> {
    reef::live::parse_poll_us(s)
}

#[cfg(not(target_os = "linux"))]
fn parse_poll_us(s: &str) -> Result<std::time::Duration, String> {
    s.parse::<u64>()
        .map(std::time::Duration::from_micros)
        .map_err(|e| e.to_string())
}

fn sim_error_code(e: &SimError) -> ExitCode {
    match e {
        SimError::Invariant { .. } => ExitCode::from(EXIT_INVARIANT),
        _ => ExitCode::from(1),
    }
}

/// Writes an output file atomically ([`reef::output::write`]).
fn write(path: &Path, text: &str) -> Result<()> {
    reef::output::write(path, text.as_bytes()).with_context(|| format!("writing {}", path.display()))
}

/// Writes a page whole or not at all (an interrupted run leaves no half page), and says
/// where it is.
fn write_page(path: &Path, page: &str) -> Result<()> {
    write(path, page)?;
    eprintln!("wrote {} (open it in a browser)", path.display());
    Ok(())
}

/// Fails now, before any simulation, where an output could not be written at the end, or
/// two name one file ([`reef::output::check`]): `files` are (option, path), `dir` an output
/// directory.
fn check_outs(files: &[(&str, &Option<PathBuf>)], dir: Option<(&str, &Option<PathBuf>)>) -> Result<()> {
    let mut outs: Vec<reef::output::Output> = files
        .iter()
        .filter_map(|(o, p)| p.as_deref().map(|p| reef::output::Output::file(o, p)))
        .collect();
    if let Some((o, Some(p))) = dir {
        outs.push(reef::output::Output::dir(o, p));
    }
    reef::output::check(&outs).map_err(anyhow::Error::msg)
}

/// The exit status of a command that was interrupted, or `code`.
fn unless_interrupted(code: ExitCode) -> ExitCode {
    if reef::interrupt::requested() {
        ExitCode::from(reef::interrupt::EXIT_INTERRUPTED)
    } else {
        code
    }
}

/// Prints what a BookSim2 config's translation says first (keys without effect in reef,
/// approximations): on standard error, before the run.
fn print_notes(path: &Path, overrides: &[String]) {
    for n in config::notes(path, overrides) {
        eprintln!("note: {n}");
    }
}

/// The config edits of `--unset`, `--set` and `--seed`, in the form [`config::load`] takes.
fn overrides(set: &[String], unset: &[String], seed: Option<u64>) -> Result<Vec<String>> {
    let mut o: Vec<String> = unset.iter().map(|k| format!("{}{k}", config::UNSET)).collect();
    o.extend(set.iter().cloned());
    if let Some(s) = seed {
        // Both would be a silent choice of one.
        if let Some(x) = set
            .iter()
            .find(|x| x.split('=').next().map(str::trim) == Some("sim.seed"))
        {
            anyhow::bail!("--seed {s} and --set {x}: give the seed once");
        }
        o.push(format!("sim.seed={s}"));
    }
    Ok(o)
}

/// Prints a report's tables and writes its JSON and its CSVs and plots where asked (what
/// finished, if Ctrl-C stopped it: exit 130).
fn emit(rep: &reef::systems::Report, json: Option<PathBuf>, out: Option<PathBuf>) -> Result<ExitCode> {
    print!("{}", rep.table());
    if let Some(j) = json {
        write(&j, &rep.json())?;
    }
    if let Some(dir) = out {
        let files = rep
            .write_out(&dir)
            .with_context(|| format!("writing into {}", dir.display()))?;
        eprintln!("wrote {} files into {}", files.len(), dir.display());
    }
    Ok(unless_interrupted(ExitCode::SUCCESS))
}

/// `reef reproduce all`: every system, then the report into `out` (or every table).
fn reproduce_all(
    opts: &reef::systems::Options,
    json: Option<PathBuf>,
    out: Option<PathBuf>,
) -> Result<ExitCode> {
    use reef::report::reproduction as rp;
    if let Some(j) = json {
        bail!(
            "--json {}: `reproduce all` writes each system's JSON into --out DIR as DIR/<system>.json",
            j.display()
        );
    }
    // A run of minutes must not find at its end that it cannot write.
    if let Some(dir) = &out {
        rp::check_dir(dir).with_context(|| format!("--out {}: cannot write there", dir.display()))?;
    }
    let started = rp::now_utc();
    let t0 = std::time::Instant::now();
    let runs = rp::run_all(opts, opts.progress);
    let made = rp::Made {
        version: env!("CARGO_PKG_VERSION").to_string(),
        commit: rp::commit(),
        seed: opts.seed,
        quick: opts.quick,
        jobs: reef::systems::pool::jobs(),
        machine: rp::machine(),
        command: std::iter::once("reef".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        started,
        wall_s: t0.elapsed().as_secs_f64(),
    };
    match &out {
        Some(dir) => {
            let index =
                rp::write(dir, &runs, &made).with_context(|| format!("writing into {}", dir.display()))?;
            print!("{}", rp::scoreboard_text(&runs));
            eprintln!("wrote {} (open it in a browser)", index.display());
        }
        None => {
            for r in &runs {
                if let Ok(rep) = &r.report {
                    print!("{}", rep.table());
                    println!();
                }
            }
            print!("{}", rp::scoreboard_text(&runs));
            eprintln!("note: --out DIR writes the report (DIR/index.html) with every plot");
        }
    }
    let failed: Vec<String> = runs
        .iter()
        .filter_map(|r| r.report.as_ref().err().map(|e| format!("{}: {e}", r.system.name)))
        .collect();
    if !failed.is_empty() {
        bail!(
            "{} of {} systems failed:\n  {}",
            failed.len(),
            runs.len(),
            failed.join("\n  ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(target_os = "linux")]
fn live_clan(quick: bool, poll: std::time::Duration, quiet: bool) -> Result<reef::systems::Report> {
    let opts = reef::live::Options {
        poll,
        quick,
        progress: !quiet,
    };
    reef::live::run_clan(&opts).map_err(|e| anyhow::anyhow!("live clan: {e}"))
}

#[cfg(not(target_os = "linux"))]
fn live_clan(_: bool, _: std::time::Duration, _: bool) -> Result<reef::systems::Report> {
    bail!("reef live clan needs Linux (eventfd, shared anonymous mappings)")
}

fn real_main() -> Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go to stdout with success; a usage error exits 1, as other bad
        // input does (clap's own 2 is reef's "deadlock detected").
        Err(e) => {
            let _ = e.print();
            return Ok(ExitCode::from(if e.use_stderr() { 1 } else { 0 }));
        }
    };
    match cli.cmd {
        Cmd::Run(a) => commands::run(a),
        Cmd::Sweep(a) => commands::sweep(a),
        Cmd::Check(a) => commands::check(a),
        Cmd::Convert(a) => commands::convert(a),
        Cmd::Reproduce(a) => commands::reproduce(a),
        Cmd::Live(a) => commands::live(a),
        Cmd::Routes(a) => commands::routes(a),
        Cmd::Bench(a) => commands::bench(a),
    }
}

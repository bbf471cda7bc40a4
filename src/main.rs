//! The `reef` command line: parses, calls the library, prints. See `reef --help`.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use reef::bench::{self, BenchRecord};
use reef::engine::SimError;
use reef::{config, report, runner};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit status when the watchdog stopped a deadlocked network.
const EXIT_DEADLOCK: u8 = 2;
/// Exit status when an engine invariant did not hold.
const EXIT_INVARIANT: u8 = 3;
/// Longest static check `reef run` makes first [s, estimated].
const LARGE_CHECK: f64 = 2.0;

#[derive(Parser)]
#[command(
    name = "reef",
    version,
    about = "reef: an exact, fast discrete-event simulator of switched high-speed LANs and system-area networks",
    long_about = "reef simulates network fabrics — links, switches, host interfaces and the protocols on \
them — flit by flit, with integer picosecond time. Describe a network in a TOML config \
(docs/config.md; examples in examples/) and run it, sweep its load, or check its routing for \
deadlock.\n\nExit status: 0 success, 1 bad input (usage errors too) or error, 2 deadlock detected (in a run, or at a sweep's point), 3 engine invariant violated."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one simulation and print a summary (and the full result as JSON with --json).
    Run {
        /// The network config: reef's TOML (*.toml), or a BookSim2 config (any other name;
        /// docs/booksim.md).
        config: PathBuf,
        /// Overrides after the config, as BookSim2 takes them: injection_rate=0.2 for a
        /// BookSim2 config, traffic.load=0.3 for either (the same as --set).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Override a config key, e.g. --set traffic.load=0.3 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove a config key, so that it takes its default, e.g. --unset
        /// channel.credit_delay (repeatable; applied before --set).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
        /// Random seed (same as --set sim.seed=N): 0 to 2^63 - 1, the range of a TOML integer.
        #[arg(long, value_parser = config::parse_seed, allow_negative_numbers = true)]
        seed: Option<u64>,
        /// Write the full result as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Plot the distributions of packet and network latency as SVG (fraction of the
        /// measured packets per bin, on a logarithmic scale).
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Draw the network with each switch-to-switch channel coloured by its utilization,
        /// as SVG (rings, 2-D meshes and tori, the Macramé grid, folded Clos networks).
        #[arg(long, value_name = "FILE")]
        map: Option<PathBuf>,
        /// Write one self-contained page (open it in a browser): the summary, both latency
        /// distributions and the map.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Check engine invariants as the run goes (slower).
        #[arg(long)]
        check: bool,
        /// Refuse a network whose estimated memory is above this (e.g. 8GB, 512MB; default:
        /// the memory this machine has available). `reef check` prints the estimate.
        #[arg(long, value_name = "SIZE", value_parser = reef::memory::parse_size)]
        memory_limit: Option<u64>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Latency against offered load, up to saturation (points run in parallel).
    ///
    /// On a cluster, a sweep need not be one long process: `--plan DIR` writes its points
    /// into DIR, `--run DIR [--task K]` runs one point or every one not yet finished
    /// (resumable: a finished point is never run again), `--slurm DIR` writes a Slurm
    /// job-array script for them, and `--collect DIR` merges the finished points into the
    /// table, JSON, CSV, SVG and page this command writes in one process, identical to them.
    #[command(verbatim_doc_comment)]
    Sweep {
        /// The network config (TOML, or BookSim2's); its `traffic.load` is replaced by each
        /// swept load.
        #[arg(required_unless_present_any = ["run", "collect", "slurm"])]
        config: Option<PathBuf>,
        /// Overrides after the config (as for `run`).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Offered loads in flits/cycle/host: FROM:TO:STEP.
        #[arg(long, value_name = "FROM:TO:STEP", required_unless_present_any = ["run", "collect", "slurm"])]
        load: Option<String>,
        /// Write the sweep's points into DIR (a manifest, one point per line) instead of
        /// running them.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["run", "collect", "slurm", "json", "csv", "svg", "html"])]
        plan: Option<PathBuf>,
        /// Run the points of the plan in DIR that have not finished (`--jobs` at a time),
        /// or only `--task K`.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "load", "collect", "slurm", "json", "csv", "svg", "html"])]
        run: Option<PathBuf>,
        /// With --run: the one point to run, 0 to the plan's last (a Slurm array task's
        /// $SLURM_ARRAY_TASK_ID).
        #[arg(long, value_name = "K", requires = "run")]
        task: Option<usize>,
        /// Merge the finished points of the plan in DIR into the sweep's table and the
        /// files asked for (--json, --csv, --svg, --html).
        #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "load", "slurm"])]
        collect: Option<PathBuf>,
        /// Write DIR/reef-sweep.sbatch, a Slurm job array of the plan in DIR (one task a
        /// point), and say how to submit it.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "load", "json", "csv", "svg", "html"])]
        slurm: Option<PathBuf>,
        /// Override a config key, e.g. --set channel.vcs=2 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove a config key, so that it takes its default, e.g. --unset
        /// channel.credit_delay (repeatable; applied before --set).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
        /// Random seed (same as --set sim.seed=N): 0 to 2^63 - 1, the range of a TOML integer.
        #[arg(long, value_parser = config::parse_seed, allow_negative_numbers = true)]
        seed: Option<u64>,
        /// Simulations at once, 1 or more (default and most: the machine's cores).
        #[arg(long, value_parser = runner::parse_jobs)]
        jobs: Option<usize>,
        /// Write every point's full result as JSON.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write one row per point as CSV (offered, accepted, latencies, saturated).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Plot latency against accepted throughput as SVG.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Write one self-contained page (open it in a browser): latency and throughput
        /// against load, the saturation point, every point, the map at the last steady load.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Refuse a network whose estimated memory is above this (e.g. 8GB, 512MB; default:
        /// the memory this machine has available). `reef check` prints the estimate.
        #[arg(long, value_name = "SIZE", value_parser = reef::memory::parse_size)]
        memory_limit: Option<u64>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Validate a config and check its routing for unreachable destinations and cyclic
    /// channel dependencies (deadlock).
    ///
    /// Exit status: 0 if every destination is reachable and the channel dependency graph
    /// is acyclic; 1 if a pair cannot be routed, a cycle makes deadlock possible (the
    /// cycle is printed), or the config is bad.
    Check {
        /// The network config (TOML, or BookSim2's).
        config: PathBuf,
        /// Overrides after the config (as for `run`).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Override a config key, e.g. --set routing.dateline=false (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Remove a config key, so that it takes its default, e.g. --unset
        /// channel.credit_delay (repeatable; applied before --set).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
        /// Refuse a network whose estimated memory is above this (e.g. 8GB, 512MB; default:
        /// the memory this machine has available). `reef check` prints the estimate.
        #[arg(long, value_name = "SIZE", value_parser = reef::memory::parse_size)]
        memory_limit: Option<u64>,
    },
    /// Print the reef config (TOML) a BookSim2 config translates into, each value commented
    /// with the BookSim2 keys it comes from. `reef run` reads BookSim2 configs directly;
    /// docs/booksim.md says which keys map onto what.
    Convert {
        /// The BookSim2 config.
        config: PathBuf,
        /// BookSim2 overrides, e.g. injection_rate=0.2 (as BookSim2 takes them).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Write the TOML to this file instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Reproduce a modelled system's published measurements: a table per experiment with the
    /// simulated figure, the published one (and where it was published) and the deviation.
    ///
    /// README.md ("Reproducing …") describes each system's model, its experiments and how to
    /// read them.
    Reproduce {
        /// The system: atm (the Penn ATM host interface; Traw & Smith, 1992), atomic (the
        /// ATOMIC LAN; Cohen, Finn, Felderman & DeSchon, USC/ISI, 1992), atoll (the ATOLL
        /// network on a chip; Fröning, Nüssle, Slognat, Haspel & Brüning, Mannheim, 2005),
        /// clan (the Collapsed LAN with Tripwire; Riddoch, Pope et al., AT&T Laboratories
        /// Cambridge, 2001) or
        /// ieee1355 (IEEE 1355 DS links, the STC104 and CERN's Macramé testbed; Zhu et al.,
        /// CERN, 1998, and the Macramé group's HPCN '97 and WoTUG-20 papers); or all: every
        /// system at once, and with --out a report to open in a browser (DIR/index.html).
        #[arg(value_name = "SYSTEM")]
        system: String,
        /// Reduced run lengths (for tests; well under a minute).
        #[arg(long)]
        quick: bool,
        /// Write `{"system": …, "records": […]}` (one system; `all` writes DIR/<system>.json).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write a CSV per experiment and the plots (SVG) into this directory; with `all`,
        /// DIR/index.html (one self-contained page), DIR/<system>.json and DIR/<system>/.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Random seed of the simulated runs: 0 to 2^63 - 1, as for `run` and `sweep`.
        #[arg(long, default_value_t = 1, value_parser = config::parse_seed, allow_negative_numbers = true)]
        seed: u64,
        /// Simulations at once (default: the machine's cores).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run a system for real on this machine: `clan` runs CLAN's Queue and Tripwire between
    /// two processes (a shared mapping as the aperture, the 10 KB ring with its lazy read
    /// pointer, a polled location plus an eventfd wake-up) and measures round trips,
    /// streaming and transactions beside TCP over loopback and Unix domain sockets, printed
    /// beside the 2001 figures. README.md ("reef live clan") says how to read them.
    Live {
        /// The system: clan.
        #[arg(value_name = "SYSTEM")]
        system: String,
        /// Shorter measurements (for tests; the figures are noisier).
        #[arg(long)]
        quick: bool,
        /// Write `{"system": "clan-live", "records": […]}` (values in `measured`).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Write a CSV per experiment and the plots (SVG) into this directory.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// How long a waiting process polls before it sleeps [µs], 0 to 1000000 (spec: 15).
        #[arg(long, value_name = "US", default_value = "15", value_parser = parse_poll_us)]
        poll_us: std::time::Duration,
        /// No progress messages.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print a network's routes: each switch's routing table (STC104 interval tables,
    /// destination ranges) where the routing has tables, else every host pair's header
    /// (Mosaic ΔX/ΔY pairs for `routing.algorithm = "mosaic"`); or, with --lan, the ATOMIC
    /// routes (store-and-forward between Mosaic routes) of a built-in ATOMIC LAN: proto-3x3,
    /// board-8x8, lan-4x3x3, nonsym-3x3x3.
    Routes {
        /// The network config (TOML); or a built-in ATOMIC LAN name with --lan.
        config: String,
        /// Override a config key (repeatable; not with --lan).
        #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "lan")]
        set: Vec<String>,
        /// Remove a config key (repeatable; not with --lan).
        #[arg(long = "unset", value_name = "KEY", conflicts_with = "lan")]
        unset: Vec<String>,
        /// CONFIG names a built-in ATOMIC LAN (all its routes are printed).
        #[arg(long)]
        lan: bool,
        /// Most host pairs to print, where the routing has no tables (not with --lan).
        #[arg(long, default_value_t = 200, conflicts_with = "lan")]
        max_pairs: usize,
    },
    /// Run the reference workloads and report flit-hops per second.
    Bench {
        /// Write one JSON record per workload.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Only this workload (a reference or a scale workload).
        #[arg(long)]
        only: Option<String>,
        /// Run the scale workloads instead of the reference ones: a 256×256 mesh (65,536
        /// hosts, about 350 MB) and a 16-ary 3-tree (4,096 hosts, 32-port switches), to
        /// measure what a flit-hop costs beyond the caches (a few minutes).
        #[arg(long, conflicts_with = "only")]
        scale: bool,
        /// Run flit by flit (no trains): the reference path.
        #[arg(long)]
        no_trains: bool,
        /// Run on the general engine, not the express engine (the same results; to compare).
        #[arg(long)]
        general: bool,
        /// Run in this process (no child per workload; peak memory is then the whole run's).
        #[arg(long)]
        in_process: bool,
        /// Run each workload this many times, the workloads taking turns (so that a machine
        /// whose speed drifts treats them alike), and report the fastest run and the median.
        /// Every run must give the same results (the simulation is deterministic).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        repeat: u32,
        #[arg(long, hide = true)]
        child: bool,
    },
}

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
        Cmd::Run {
            config: path,
            params,
            set,
            unset,
            seed,
            json,
            svg,
            map,
            html,
            check,
            memory_limit,
            quiet,
        } => {
            if let Some(m) = memory_limit {
                reef::memory::set_limit(m);
            }
            check_outs(
                &[
                    ("--json", &json),
                    ("--svg", &svg),
                    ("--map", &map),
                    ("--html", &html),
                ],
                None,
            )?;
            let (started, t0) = (report::reproduction::now_utc(), std::time::Instant::now());
            let mut o = overrides(&[params, set].concat(), &unset, seed)?;
            print_notes(&path, &o);
            if check {
                o.push("sim.check=true".into());
            }
            reef::memory::announce_large(true);
            let mut spec = config::load(&path, &o)?;
            spec.name = config::run_name(&spec.name, &o);
            reef::interrupt::install().context("catching Ctrl-C")?;
            if map.is_some() && !report::map::can_draw(&spec.fabric) {
                bail!(
                    "--map: a map is drawn for rings, 2-D meshes and tori, the Macramé grid and folded Clos networks; {} is {}",
                    path.display(),
                    spec.fabric
                );
            }
            // The static check grows with hosts × channels; past a few seconds of it the run
            // goes without (its watchdog still stops a deadlock and names the cycle).
            let secs = reef::routing::cdg::estimate_seconds(&spec.fabric, &spec.routing);
            let rep = if secs > LARGE_CHECK {
                eprintln!(
                    "note: {} hosts: the static routing check (about {secs:.0} s) is left to `reef check`; the run's watchdog still stops a deadlock",
                    spec.fabric.num_hosts(),
                );
                Default::default()
            } else {
                runner::check_with_bar(&spec, !quiet)
            };
            if rep.failure_count > 0 {
                let (s, d, m) = &rep.failures[0];
                bail!(
                    "{}: routing cannot deliver every packet ({} source/destination pairs fail; first: host {s} → host {d}: {m})\n  hint: run `reef check {}`",
                    path.display(),
                    rep.failure_count,
                    path.display()
                );
            }
            if let Some(c) = rep.describe_cycle(&spec.fabric) {
                eprintln!(
                    "warning: the routing has a cyclic channel dependency; the run may deadlock:\n  {c}"
                );
            }
            if spec.messages.is_some() {
                if map.is_some() {
                    bail!("--map draws channel use, which a message benchmark does not measure");
                }
                if html.is_some() {
                    bail!(
                        "--html: the page shows a run's latency distributions and channel use, which a \
                         message benchmark does not measure; use --svg for its plot"
                    );
                }
                let r = match runner::run_messages(&spec, !quiet) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("error: {}: {e}", path.display());
                        return Ok(sim_error_code(&e));
                    }
                };
                print!("{}", report::messages::table(&r));
                if let Some(j) = json {
                    write(&j, &serde_json::to_string_pretty(&r)?)?;
                }
                if let Some(s) = svg {
                    let runs = [(format!("{} hops", r.hops.0), &r)];
                    let plot = report::messages::plot(&r.name, &runs, r.kind == "ping-pong");
                    write(
                        &s,
                        &report::plot::svg(&plot).map_err(|m| anyhow::anyhow!("plot: {m}"))?,
                    )?;
                }
                return Ok(unless_interrupted(ExitCode::SUCCESS));
            }
            let r = match runner::run_with_bar(&spec, !quiet) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {}: {e}", path.display());
                    return Ok(sim_error_code(&e));
                }
            };
            print!("{}", report::summary(&r));
            if let Some(j) = json {
                write(&j, &serde_json::to_string_pretty(&r)?)?;
            }
            if let Some(s) = svg {
                if r.has_latency() {
                    let plot = report::latency_plot(&r);
                    write(
                        &s,
                        &report::plot::svg(&plot).map_err(|m| anyhow::anyhow!("plot: {m}"))?,
                    )?;
                } else {
                    // Nothing to draw: say so rather than leave an empty plot.
                    eprintln!(
                        "note: --svg: no measured packet was delivered, so no latency plot ({} not written)",
                        s.display()
                    );
                }
            }
            if let Some(m) = map {
                let svg =
                    report::map::channel_map(&spec.fabric, &r).map_err(|e| anyhow::anyhow!("--map: {e}"))?;
                write(&m, &svg)?;
            }
            if let Some(h) = html {
                let made = report::study::Made::now(started, t0.elapsed().as_secs_f64());
                write_page(&h, &report::study::run_page(&spec.fabric, &r, &made))?;
            }
            Ok(unless_interrupted(if r.deadlock.is_some() {
                ExitCode::from(EXIT_DEADLOCK)
            } else {
                ExitCode::SUCCESS
            }))
        }
        Cmd::Sweep {
            config: path,
            params,
            load,
            plan,
            run,
            task,
            collect,
            slurm,
            set,
            unset,
            seed,
            jobs,
            json,
            csv,
            svg,
            html,
            memory_limit,
            quiet,
        } => {
            if let Some(m) = memory_limit {
                reef::memory::set_limit(m);
            }
            let on_plan = [("--run", &run), ("--collect", &collect), ("--slurm", &slurm)]
                .into_iter()
                .find(|(_, d)| d.is_some());
            if let Some((opt, _)) = on_plan
                && !(params.is_empty() && set.is_empty() && unset.is_empty() && seed.is_none())
            {
                anyhow::bail!(
                    "{opt}: the plan fixes the config and its overrides; give --set, --unset, \
                     --seed and KEY=VALUE to --plan"
                );
            }
            if task.is_some() && run.is_none() {
                // (clap's `requires` yields to a conflict with the config given.)
                anyhow::bail!("--task: runs one point of a plan: give it with --run DIR");
            }
            if let Some(dir) = slurm {
                let p = reef::plan::Plan::open(&dir)?.slurm()?;
                println!("wrote {}", p.display());
                println!("submit it with: sbatch {}", p.display());
                println!(
                    "then, when its tasks have finished: reef sweep --collect {} --json sweep.json",
                    dir.display()
                );
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(dir) = run {
                let p = reef::plan::Plan::open(&dir)?;
                reef::interrupt::install().context("catching Ctrl-C")?;
                let results = match task {
                    Some(k) => vec![(k, p.run_task(k, !quiet))],
                    None => {
                        let (jobs, note) = runner::sweep_jobs(jobs);
                        if let Some(n) = note {
                            eprintln!("note: {n}");
                        }
                        p.run_missing(jobs, !quiet)
                    }
                };
                let mut failed = 0;
                for (k, r) in &results {
                    // (With the bar on, each line was said as its task ended.)
                    if (quiet || task.is_some()) && r.is_ok() {
                        println!("{}", p.said(*k, r));
                    }
                    if !matches!(
                        r,
                        Ok(reef::plan::Ran::Ran { .. }
                            | reef::plan::Ran::AlreadyDone
                            | reef::plan::Ran::PastSaturation { .. })
                    ) {
                        failed += 1;
                    }
                }
                if let Some((_, Err(e))) = results.iter().find(|r| r.1.is_err()) {
                    anyhow::bail!("{e}");
                }
                return Ok(unless_interrupted(if failed > 0 {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                }));
            }
            check_outs(
                &[
                    ("--json", &json),
                    ("--csv", &csv),
                    ("--svg", &svg),
                    ("--html", &html),
                ],
                None,
            )?;
            let (started, t0) = (report::reproduction::now_utc(), std::time::Instant::now());
            let (sw, path, o, loads) = if let Some(dir) = collect {
                let p = reef::plan::Plan::open(&dir)?;
                let sw = p.collect()?;
                (sw, p.file.config, p.file.overrides, p.file.loads)
            } else {
                // (clap requires both without --run, --collect or --slurm.)
                let (Some(path), Some(load)) = (path, load) else {
                    anyhow::bail!("a sweep needs a config and --load");
                };
                let loads = runner::parse_loads(&load).map_err(|m| anyhow::anyhow!("--load: {m}"))?;
                let o = overrides(&[params, set].concat(), &unset, seed)?;
                print_notes(&path, &o);
                if let Some(dir) = plan {
                    let p = reef::plan::Plan::create(&dir, &path, &o, &loads)?;
                    println!(
                        "planned {} points of {} in {}: run them with `reef sweep --run {}` (--task K \
                         for one), or on Slurm: `reef sweep --slurm {}`; then `reef sweep --collect {}`",
                        p.tasks.len(),
                        p.file.name,
                        dir.display(),
                        dir.display(),
                        dir.display(),
                        dir.display()
                    );
                    return Ok(ExitCode::SUCCESS);
                }
                let (jobs, note) = runner::sweep_jobs(jobs);
                if let Some(n) = note {
                    eprintln!("note: {n}");
                }
                reef::interrupt::install().context("catching Ctrl-C")?;
                let sw = runner::sweep(&path, &o, &loads, jobs, !quiet)?;
                (sw, path, o, loads)
            };
            print!("{}", report::sweep_table(&sw));
            if let Some(j) = json {
                write(&j, &serde_json::to_string_pretty(&sw)?)?;
            }
            if let Some(c) = csv {
                write(&c, &report::sweep_csv(&sw))?;
            }
            let deadlocked = sw.points.iter().any(|p| p.result.deadlock.is_some());
            if let Some(s) = svg {
                let plot = report::study::latency_plot_of(&sw);
                write(
                    &s,
                    &report::plot::svg(&plot).map_err(|m| anyhow::anyhow!("plot: {m}"))?,
                )?;
            }
            if let Some(h) = html {
                // The network is the same at every load; this is its spec at the first.
                let mut o = o;
                o.extend(loads.first().map(|l| format!("traffic.load={l:?}")));
                let spec = config::load(&path, &o)?;
                let made = report::study::Made::now(started, t0.elapsed().as_secs_f64());
                write_page(&h, &report::study::sweep_page(&spec.fabric, &sw, &made))?;
            }
            Ok(unless_interrupted(if deadlocked {
                ExitCode::from(EXIT_DEADLOCK)
            } else {
                ExitCode::SUCCESS
            }))
        }
        Cmd::Check {
            config: path,
            params,
            set,
            unset,
            memory_limit,
        } => {
            if let Some(m) = memory_limit {
                reef::memory::set_limit(m);
            }
            let set = overrides(&[params, set].concat(), &unset, None)?;
            print_notes(&path, &set);
            reef::memory::announce_large(true);
            let spec = config::load(&path, &set)?;
            let secs = reef::routing::cdg::estimate_seconds(&spec.fabric, &spec.routing);
            if secs > LARGE_CHECK {
                eprintln!(
                    "note: {} hosts: the routing check follows every pair's route and takes about {}",
                    spec.fabric.num_hosts(),
                    runner::duration_text(secs)
                );
            }
            let rep = runner::check_with_bar(&spec, true);
            println!("{}: {}", path.display(), spec.fabric);
            println!(
                "routing {}: {} (channel, VC) pairs in use, {} dependencies",
                spec.routing.name(),
                rep.used,
                rep.edges
            );
            let mut ok = true;
            if rep.failure_count > 0 {
                ok = false;
                println!(
                    "UNREACHABLE: {} source/destination pairs cannot be routed:",
                    rep.failure_count
                );
                for (s, d, m) in &rep.failures {
                    println!("  host {s} → host {d}: {m}");
                }
            }
            match rep.describe_cycle(&spec.fabric) {
                Some(c) => {
                    ok = false;
                    println!("DEADLOCK POSSIBLE: cyclic channel dependency:\n  {c}");
                }
                None => println!("deadlock-free: the channel dependency graph is acyclic"),
            }
            println!("{}", reef::runner::memory_line(&spec));
            // Which engine `reef run` takes (the same results either way).
            match reef::engine::Sim::new(&spec).map(|s| s.express_refused()) {
                Ok(None) => println!("engine: express"),
                Ok(Some(why)) => println!("engine: general, because of {why}"),
                Err(e) => println!("engine: none: {e}"),
            }
            Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Cmd::Convert {
            config: path,
            params,
            output,
        } => {
            check_outs(&[("--output", &output)], None)?;
            if !config::booksim::is_booksim(&path) {
                bail!(
                    "{}: a reef config already (its name ends in .toml); convert reads BookSim2 configs",
                    path.display()
                );
            }
            if let Some(p) = params
                .iter()
                .find(|p| !p.contains('=') || p.split('=').next().is_some_and(|k| k.contains('.')))
            {
                bail!("`{p}`: convert takes BookSim2 overrides, key=value (e.g. injection_rate=0.2)");
            }
            let t = config::translate_booksim(&path, &params)?;
            // The translation must build: a config reef would refuse is not printed as good.
            let _ = config::load(&path, &params)?;
            match output {
                Some(o) => write(&o, &t.toml)?,
                None => print!("{}", t.toml),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Reproduce {
            system,
            quick,
            json,
            out,
            seed,
            jobs,
            quiet,
        } => {
            check_outs(&[("--json", &json)], Some(("--out", &out)))?;
            if let Some(n) = jobs {
                reef::systems::pool::set_jobs(n as usize);
            }
            reef::interrupt::install().context("catching Ctrl-C")?;
            let opts = reef::systems::Options {
                quick,
                seed,
                progress: !quiet,
            };
            if system == "all" {
                return reproduce_all(&opts, json, out);
            }
            let rep = reef::systems::reproduce(&system, &opts).map_err(anyhow::Error::msg)?;
            emit(&rep, json, out)
        }
        Cmd::Live {
            system,
            quick,
            json,
            out,
            poll_us,
            quiet,
        } => {
            check_outs(&[("--json", &json)], Some(("--out", &out)))?;
            if system != "clan" {
                bail!("no live run for `{system}` (available: clan)");
            }
            emit(&live_clan(quick, poll_us, quiet)?, json, out)
        }
        Cmd::Routes {
            config: path,
            set,
            unset,
            lan,
            max_pairs,
        } => {
            if lan {
                let l = reef::systems::atomic::net::named(&path).ok_or_else(|| {
                    anyhow::anyhow!(
                        "no built-in ATOMIC LAN `{path}` (proto-3x3, board-8x8, lan-4x3x3, nonsym-3x3x3)"
                    )
                })?;
                print!("{}", reef::systems::atomic::routes::lan_routes(&l));
            } else {
                let spec = config::load(Path::new(&path), &overrides(&set, &unset, None)?)?;
                match reef::routing::interval::print_routing(&spec.fabric, &spec.routing) {
                    Some(t) => print!("{path}: {}\n{t}", spec.fabric),
                    None => print!(
                        "{}",
                        reef::systems::atomic::routes::print_routes(&spec, max_pairs)
                    ),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench {
            json,
            only,
            scale,
            no_trains,
            general,
            in_process,
            repeat,
            child,
        } => {
            check_outs(&[("--json", &json)], None)?;
            let mut o: Vec<String> = Vec::new();
            if no_trains {
                o.push("sim.trains=false".into());
            }
            if general {
                o.push("sim.express=false".into());
            }
            let names: Vec<&str> = match &only {
                Some(n) => {
                    bench::workload(n).map_err(|m| anyhow::anyhow!("--only: {m}"))?;
                    vec![n.as_str()]
                }
                None if scale => bench::SCALE_WORKLOADS.iter().map(|w| w.0).collect(),
                None => bench::WORKLOADS.iter().map(|w| w.0).collect(),
            };
            if child {
                let rec = bench::run_one(names[0], &o).map_err(anyhow::Error::msg)?;
                println!("{}", serde_json::to_string(&rec)?);
                return Ok(ExitCode::SUCCESS);
            }
            if cfg!(feature = "checked") {
                // `cargo test` builds the binary with the tests' `checked` feature.
                eprintln!(
                    "warning: this binary was built by `cargo test`, with every engine array \
                     access bounds-checked (about 9 % slower); for representative numbers run \
                     `cargo run --release -- bench`"
                );
            }
            let exe = std::env::current_exe().ok();
            let measure = |n: &str| -> anyhow::Result<BenchRecord> {
                if std::io::stderr().is_terminal() {
                    eprint!("running {n}…\r");
                }
                Ok(match (&exe, in_process) {
                    (Some(exe), false) => {
                        let mut cmd = std::process::Command::new(exe);
                        cmd.args(["bench", "--child", "--only", n]);
                        if no_trains {
                            cmd.arg("--no-trains");
                        }
                        if general {
                            cmd.arg("--general");
                        }
                        let out = cmd.output().context("running a bench child")?;
                        if !out.status.success() {
                            bail!("bench {n} failed: {}", String::from_utf8_lossy(&out.stderr));
                        }
                        serde_json::from_slice(&out.stdout).context("reading a bench child's record")?
                    }
                    _ => bench::run_one(n, &o).map_err(anyhow::Error::msg)?,
                })
            };
            let many = repeat > 1;
            // Read before the runs, while the machine is as they will find it.
            let clock = bench::clock_ghz();
            println!(
                "{:<26} {:>6} {:>12} {:>9} {:>10}{} {:>10} {:>10} {:>9}  engine",
                "workload",
                "nodes",
                "flit-hops",
                "wall s",
                "Mhops/s",
                if many {
                    format!(" {:>10}", "median")
                } else {
                    String::new()
                },
                "latency",
                "accepted",
                "peak MB"
            );
            let mut runs: Vec<Vec<BenchRecord>> = vec![Vec::new(); names.len()];
            let mut recs: Vec<BenchRecord> = Vec::new();
            for round in 0..repeat {
                for (k, n) in names.iter().enumerate() {
                    let rec = measure(n)?;
                    if let Some(first) = runs[k].first()
                        && !first.same_results(&rec)
                    {
                        bail!(
                            "bench {n}: run {} gave other results than run 1 (the simulation \
                             should be deterministic): {rec:?} against {first:?}",
                            round + 1
                        );
                    }
                    runs[k].push(rec);
                    if round + 1 < repeat {
                        continue;
                    }
                    // The workload's last run: its row.
                    let mut rec = bench::summarize(std::mem::take(&mut runs[k]));
                    rec.clock_ghz = clock;
                    let median = rec.wall_s_median.filter(|_| many).map_or(String::new(), |w| {
                        format!(" {:>10.2}", rec.flit_hops as f64 / w / 1e6)
                    });
                    println!(
                        "{:<26} {:>6} {:>12} {:>9.3} {:>10.2}{} {:>10.2} {:>10.4} {:>9}  {}",
                        rec.name,
                        rec.nodes,
                        rec.flit_hops,
                        rec.wall_s,
                        rec.flit_hops_per_s / 1e6,
                        median,
                        rec.mean_latency_cycles,
                        rec.accepted_flits_per_node_cycle,
                        rec.peak_rss_mb.map_or("-".into(), |m| format!("{m:.1}")),
                        rec.engine
                    );
                    recs.push(rec);
                }
            }
            if many {
                println!("(fastest of {repeat} runs each; `median`: Mhops/s of the median run)");
            }
            if let Some(g) = clock {
                println!(
                    "(processor clock {g:.2} GHz, read by a chain of dependent multiplies, code for {}: \
                     compare Mhops/s with other runs at a like clock and instruction set)",
                    bench::ISA
                );
            }
            if bench::BUILD != "release" {
                println!(
                    "({} build, scripts/pgo-build.sh: compare with runs of the same kind of build)",
                    bench::BUILD
                );
            }
            if let Some(j) = json {
                write(&j, &serde_json::to_string_pretty(&recs)?)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

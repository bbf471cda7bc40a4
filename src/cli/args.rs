//! reef's command line: the commands and their options, as clap derives them (the help
//! text is the doc comments here).

use super::parse_poll_us;
use clap::{Args, Parser, Subcommand};
use reef::{config, runner};
use std::path::PathBuf;

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
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Run one simulation and print a summary (and the full result as JSON with --json).
    Run(RunArgs),
    /// Latency against offered load, up to saturation (points run in parallel).
    ///
    /// On a cluster, a sweep need not be one long process: `--plan DIR` writes its points
    /// into DIR, `--run DIR [--task K]` runs one point or every one not yet finished
    /// (resumable: a finished point is never run again), `--slurm DIR` writes a Slurm
    /// job-array script for them, and `--collect DIR` merges the finished points into the
    /// table, JSON, CSV, SVG and page this command writes in one process, identical to them.
    #[command(verbatim_doc_comment)]
    Sweep(SweepArgs),
    /// Validate a config and check its routing for unreachable destinations and cyclic
    /// channel dependencies (deadlock).
    ///
    /// Exit status: 0 if every destination is reachable and the channel dependency graph
    /// is acyclic; 1 if a pair cannot be routed, a cycle makes deadlock possible (the
    /// cycle is printed), or the config is bad.
    Check(CheckArgs),
    /// Print the reef config (TOML) a BookSim2 config translates into, each value commented
    /// with the BookSim2 keys it comes from. `reef run` reads BookSim2 configs directly;
    /// docs/booksim.md says which keys map onto what.
    Convert(ConvertArgs),
    /// Reproduce a modelled system's published measurements: a table per experiment with the
    /// simulated figure, the published one (and where it was published) and the deviation.
    ///
    /// README.md ("Reproducing …") describes each system's model, its experiments and how to
    /// read them.
    Reproduce(ReproduceArgs),
    /// Run a system for real on this machine: `clan` runs CLAN's Queue and Tripwire between
    /// two processes (a shared mapping as the aperture, the 10 KB ring with its lazy read
    /// pointer, a polled location plus an eventfd wake-up) and measures round trips,
    /// streaming and transactions beside TCP over loopback and Unix domain sockets, printed
    /// beside the 2001 figures. README.md ("reef live clan") says how to read them.
    Live(LiveArgs),
    /// Print a network's routes: each switch's routing table (STC104 interval tables,
    /// destination ranges) where the routing has tables, else every host pair's header
    /// (Mosaic ΔX/ΔY pairs for `routing.algorithm = "mosaic"`); or, with --lan, the ATOMIC
    /// routes (store-and-forward between Mosaic routes) of a built-in ATOMIC LAN: proto-3x3,
    /// board-8x8, lan-4x3x3, nonsym-3x3x3.
    Routes(RoutesArgs),
    /// Run the reference workloads and report flit-hops per second.
    Bench(BenchArgs),
}

/// The options of `reef run` (see [`Cmd::Run`]).
#[derive(Args)]
pub(crate) struct RunArgs {
    /// The network config: reef's TOML (*.toml), or a BookSim2 config (any other name;
    /// docs/booksim.md).
    pub(crate) config: PathBuf,
    /// Overrides after the config, as BookSim2 takes them: injection_rate=0.2 for a
    /// BookSim2 config, traffic.load=0.3 for either (the same as --set).
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    /// Override a config key, e.g. --set traffic.load=0.3 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Remove a config key, so that it takes its default, e.g. --unset
    /// channel.credit_delay (repeatable; applied before --set).
    #[arg(long = "unset", value_name = "KEY")]
    pub(crate) unset: Vec<String>,
    /// Random seed (same as --set sim.seed=N): 0 to 2^63 - 1, the range of a TOML integer.
    #[arg(long, value_parser = config::parse_seed, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Run N independent times, at seeds S, S + 1, … (same as --set sim.runs=N, BookSim2's
    /// sim_count), --jobs at a time: a line per run, then the means ±95 % confidence across
    /// the runs.
    #[arg(long, value_name = "N")]
    pub(crate) runs: Option<u32>,
    /// With several runs, how many at once, 1 or more (default and most: the machine's
    /// cores); the results are the same for any number.
    #[arg(long, value_parser = runner::parse_jobs)]
    pub(crate) jobs: Option<usize>,
    /// Write the full result as JSON.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Plot the distributions of packet and network latency as SVG (fraction of the
    /// measured packets per bin, on a logarithmic scale).
    #[arg(long, value_name = "FILE")]
    pub(crate) svg: Option<PathBuf>,
    /// Draw the network with each switch-to-switch channel coloured by its utilization,
    /// as SVG (rings, 2-D meshes and tori, the Macramé grid, folded Clos networks).
    #[arg(long, value_name = "FILE")]
    pub(crate) map: Option<PathBuf>,
    /// Write one self-contained page (open it in a browser): the summary, both latency
    /// distributions and the map.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Check engine invariants as the run goes (slower).
    #[arg(long)]
    pub(crate) check: bool,
    /// Refuse a network whose estimated memory is above this (e.g. 8GB, 512MB; default:
    /// the memory this machine has available). `reef check` prints the estimate.
    #[arg(long, value_name = "SIZE", value_parser = reef::memory::parse_size)]
    pub(crate) memory_limit: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// The options of `reef sweep` (see [`Cmd::Sweep`]).
#[derive(Args)]
pub(crate) struct SweepArgs {
    /// The network config (TOML, or BookSim2's); its `traffic.load` is replaced by each
    /// swept load.
    #[arg(required_unless_present_any = ["run", "collect", "slurm"])]
    pub(crate) config: Option<PathBuf>,
    /// Overrides after the config (as for `run`).
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    /// Offered loads in flits/cycle/host: FROM:TO:STEP.
    #[arg(long, value_name = "FROM:TO:STEP", required_unless_present_any = ["run", "collect", "slurm"])]
    pub(crate) load: Option<String>,
    /// Write the sweep's points into DIR (a manifest, one point per line) instead of
    /// running them.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["run", "collect", "slurm", "json", "csv", "svg", "html"])]
    pub(crate) plan: Option<PathBuf>,
    /// Run the points of the plan in DIR that have not finished (`--jobs` at a time),
    /// or only `--task K`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "load", "collect", "slurm", "json", "csv", "svg", "html"])]
    pub(crate) run: Option<PathBuf>,
    /// With --run: the one point to run, 0 to the plan's last (a Slurm array task's
    /// $SLURM_ARRAY_TASK_ID).
    #[arg(long, value_name = "K", requires = "run")]
    pub(crate) task: Option<usize>,
    /// Merge the finished points of the plan in DIR into the sweep's table and the
    /// files asked for (--json, --csv, --svg, --html).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "load", "slurm"])]
    pub(crate) collect: Option<PathBuf>,
    /// Write DIR/reef-sweep.sbatch, a Slurm job array of the plan in DIR (one task a
    /// point), and say how to submit it.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["config", "load", "json", "csv", "svg", "html"])]
    pub(crate) slurm: Option<PathBuf>,
    /// Override a config key, e.g. --set channel.vcs=2 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Remove a config key, so that it takes its default, e.g. --unset
    /// channel.credit_delay (repeatable; applied before --set).
    #[arg(long = "unset", value_name = "KEY")]
    pub(crate) unset: Vec<String>,
    /// Random seed (same as --set sim.seed=N): 0 to 2^63 - 1, the range of a TOML integer.
    #[arg(long, value_parser = config::parse_seed, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Simulations at once, 1 or more (default and most: the machine's cores).
    #[arg(long, value_parser = runner::parse_jobs)]
    pub(crate) jobs: Option<usize>,
    /// Write every point's full result as JSON.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write one row per point as CSV (offered, accepted, latencies, saturated).
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Plot latency against accepted throughput as SVG.
    #[arg(long, value_name = "FILE")]
    pub(crate) svg: Option<PathBuf>,
    /// Write one self-contained page (open it in a browser): latency and throughput
    /// against load, the saturation point, every point, the map at the last steady load.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Refuse a network whose estimated memory is above this (e.g. 8GB, 512MB; default:
    /// the memory this machine has available). `reef check` prints the estimate.
    #[arg(long, value_name = "SIZE", value_parser = reef::memory::parse_size)]
    pub(crate) memory_limit: Option<u64>,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// The options of `reef check` (see [`Cmd::Check`]).
#[derive(Args)]
pub(crate) struct CheckArgs {
    /// The network config (TOML, or BookSim2's).
    pub(crate) config: PathBuf,
    /// Overrides after the config (as for `run`).
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    /// Override a config key, e.g. --set routing.dateline=false (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Remove a config key, so that it takes its default, e.g. --unset
    /// channel.credit_delay (repeatable; applied before --set).
    #[arg(long = "unset", value_name = "KEY")]
    pub(crate) unset: Vec<String>,
    /// Refuse a network whose estimated memory is above this (e.g. 8GB, 512MB; default:
    /// the memory this machine has available). `reef check` prints the estimate.
    #[arg(long, value_name = "SIZE", value_parser = reef::memory::parse_size)]
    pub(crate) memory_limit: Option<u64>,
}

/// The options of `reef convert` (see [`Cmd::Convert`]).
#[derive(Args)]
pub(crate) struct ConvertArgs {
    /// The BookSim2 config.
    pub(crate) config: PathBuf,
    /// BookSim2 overrides, e.g. injection_rate=0.2 (as BookSim2 takes them).
    #[arg(value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
    /// Write the TOML to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

/// The options of `reef reproduce` (see [`Cmd::Reproduce`]).
#[derive(Args)]
pub(crate) struct ReproduceArgs {
    /// The system: atm (the Penn ATM host interface; Traw & Smith, 1992), atomic (the
    /// ATOMIC LAN; Cohen, Finn, Felderman & DeSchon, USC/ISI, 1992), atoll (the ATOLL
    /// network on a chip; Fröning, Nüssle, Slognat, Haspel & Brüning, Mannheim, 2005),
    /// clan (the Collapsed LAN with Tripwire; Riddoch, Pope et al., AT&T Laboratories
    /// Cambridge, 2001) or
    /// ieee1355 (IEEE 1355 DS links, the STC104 and CERN's Macramé testbed; Zhu et al.,
    /// CERN, 1998, and the Macramé group's HPCN '97 and WoTUG-20 papers); or all: every
    /// system at once, and with --out a report to open in a browser (DIR/index.html).
    #[arg(value_name = "SYSTEM")]
    pub(crate) system: String,
    /// Reduced run lengths (for tests; well under a minute).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Write `{"system": …, "records": […]}` (one system; `all` writes DIR/<system>.json).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write a CSV per experiment and the plots (SVG) into this directory; with `all`,
    /// DIR/index.html (one self-contained page), DIR/<system>.json and DIR/<system>/.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Random seed of the simulated runs: 0 to 2^63 - 1, as for `run` and `sweep`.
    #[arg(long, default_value_t = 1, value_parser = config::parse_seed, allow_negative_numbers = true)]
    pub(crate) seed: u64,
    /// Simulations at once (default: the machine's cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) jobs: Option<u32>,
    /// No progress bar.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// The options of `reef live` (see [`Cmd::Live`]).
#[derive(Args)]
pub(crate) struct LiveArgs {
    /// The system: clan.
    #[arg(value_name = "SYSTEM")]
    pub(crate) system: String,
    /// Shorter measurements (for tests; the figures are noisier).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Write `{"system": "clan-live", "records": […]}` (values in `measured`).
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Write a CSV per experiment and the plots (SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// How long a waiting process polls before it sleeps [µs], 0 to 1000000 (spec: 15).
    #[arg(long, value_name = "US", default_value = "15", value_parser = parse_poll_us)]
    pub(crate) poll_us: std::time::Duration,
    /// No progress messages.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// The options of `reef routes` (see [`Cmd::Routes`]).
#[derive(Args)]
pub(crate) struct RoutesArgs {
    /// The network config (TOML); or a built-in ATOMIC LAN name with --lan.
    pub(crate) config: String,
    /// Override a config key (repeatable; not with --lan).
    #[arg(long = "set", value_name = "KEY=VALUE", conflicts_with = "lan")]
    pub(crate) set: Vec<String>,
    /// Remove a config key (repeatable; not with --lan).
    #[arg(long = "unset", value_name = "KEY", conflicts_with = "lan")]
    pub(crate) unset: Vec<String>,
    /// CONFIG names a built-in ATOMIC LAN (all its routes are printed).
    #[arg(long)]
    pub(crate) lan: bool,
    /// Most host pairs to print, where the routing has no tables (not with --lan).
    #[arg(long, default_value_t = 200, conflicts_with = "lan")]
    pub(crate) max_pairs: usize,
}

/// The options of `reef bench` (see [`Cmd::Bench`]).
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Write one JSON record per workload.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Only this workload (a reference or a scale workload).
    #[arg(long)]
    pub(crate) only: Option<String>,
    /// Run the scale workloads instead of the reference ones: a 256×256 mesh (65,536
    /// hosts, about 350 MB) and a 16-ary 3-tree (4,096 hosts, 32-port switches), to
    /// measure what a flit-hop costs beyond the caches (a few minutes).
    #[arg(long, conflicts_with = "only")]
    pub(crate) scale: bool,
    /// Run flit by flit (no trains): the reference path.
    #[arg(long)]
    pub(crate) no_trains: bool,
    /// Run on the general engine, not the express engine (the same results; to compare).
    #[arg(long)]
    pub(crate) general: bool,
    /// Run in this process (no child per workload; peak memory is then the whole run's).
    #[arg(long)]
    pub(crate) in_process: bool,
    /// Run each workload this many times, the workloads taking turns (so that a machine
    /// whose speed drifts treats them alike), and report the fastest run and the median.
    /// Every run must give the same results (the simulation is deterministic).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) repeat: u32,
    #[arg(long, hide = true)]
    pub(crate) child: bool,
}

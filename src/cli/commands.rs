//! What each of reef's commands does, from its parsed options (`args`): load, run, print
//! and write; the library does the simulating.

use super::args::*;
use super::*;

/// `reef run`.
pub(crate) fn run(a: RunArgs) -> Result<ExitCode> {
    let RunArgs {
        config: path,
        params,
        set,
        unset,
        seed,
        runs,
        jobs,
        json,
        svg,
        map,
        html,
        check,
        memory_limit,
        quiet,
    } = a;
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
    if let Some(n) = runs {
        o.push(format!("sim.runs={n}"));
    }
    reef::memory::announce_large(true);
    let mut spec = config::load(&path, &o)?;
    spec.name = config::run_name(&spec.name, &o);
    if jobs.is_some() && spec.params.runs == 1 {
        eprintln!("note: --jobs sets how many of several runs go at once; this is one run (see --runs)");
    }
    if spec.params.runs > 1 {
        for (flag, given) in [
            ("--svg", svg.is_some()),
            ("--map", map.is_some()),
            ("--html", html.is_some()),
        ] {
            if given {
                bail!(
                    "{flag} draws one run, and {} asks for {} (sim.runs): draw one with --set sim.runs=1 (and --seed for another seed)",
                    path.display(),
                    spec.params.runs
                );
            }
        }
    }
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
        eprintln!("warning: the routing has a cyclic channel dependency; the run may deadlock:\n  {c}");
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
    if spec.params.runs > 1 {
        return run_many(&path, &o, &spec, jobs, json, !quiet);
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
        let svg = report::map::channel_map(&spec.fabric, &r).map_err(|e| anyhow::anyhow!("--map: {e}"))?;
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

/// `reef run` of a config with `sim.runs` above 1: run `k` is the config with seed
/// `sim.seed + k`, as `reef run CONFIG --seed S+k` runs it, `jobs` at a time
/// ([`runner::runs`]); then a line per run and their means (`report::runs`). The first
/// run (in seed order) that fails ends it with its error; Ctrl-C keeps the runs that
/// finished.
fn run_many(
    path: &Path,
    o: &[String],
    spec: &reef::engine::Spec,
    jobs: Option<usize>,
    json: Option<PathBuf>,
    show: bool,
) -> Result<ExitCode> {
    let (n, seed0) = (spec.params.runs as usize, spec.params.seed);
    let (jobs, note) = runner::sweep_jobs(jobs, "run");
    if let Some(m) = note {
        eprintln!("note: {m}");
    }
    let build = |k: usize| {
        let mut ok = o.to_vec();
        ok.push(format!("sim.seed={}", seed0 + k as u64));
        ok.push("sim.runs=1".into());
        let mut sk = config::load(path, &ok)?;
        sk.name = format!("{} (run {} of {n})", spec.name, k + 1);
        Ok(sk)
    };
    let label = format!("{}: {n} runs", spec.name);
    let out = runner::runs(n, spec, &build, jobs, &label, show)?;
    let mut results = Vec::with_capacity(n);
    let mut stopped = None;
    for (k, r) in out.into_iter().enumerate() {
        match r {
            Some(Ok(r)) if r.interrupted => {
                stopped.get_or_insert(r);
            }
            Some(Ok(r)) => results.push(r),
            Some(Err(e)) => {
                eprintln!(
                    "error: {} (run {} of {n}, seed {}): {e}",
                    path.display(),
                    k + 1,
                    seed0 + k as u64
                );
                return Ok(sim_error_code(&e));
            }
            None => {}
        }
    }
    if results.is_empty() {
        // Not one run finished: the first one stopped, as a single run reports it.
        if let Some(r) = stopped {
            print!("{}", report::summary(&r));
            if let Some(j) = &json {
                write(j, &serde_json::to_string_pretty(&r)?)?;
            }
        }
        return Ok(unless_interrupted(ExitCode::SUCCESS));
    }
    let rs = report::runs::Runs::of(&spec.name, results, n);
    print!("{}", report::runs::table(&rs));
    if let Some(j) = json {
        write(&j, &serde_json::to_string_pretty(&rs)?)?;
    }
    Ok(unless_interrupted(if rs.deadlocked_runs > 0 {
        ExitCode::from(EXIT_DEADLOCK)
    } else {
        ExitCode::SUCCESS
    }))
}

/// `reef sweep`.
pub(crate) fn sweep(a: SweepArgs) -> Result<ExitCode> {
    let SweepArgs {
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
    } = a;
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
                let (jobs, note) = runner::sweep_jobs(jobs, "point");
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
        let (jobs, note) = runner::sweep_jobs(jobs, "point");
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

/// `reef check`.
pub(crate) fn check(a: CheckArgs) -> Result<ExitCode> {
    let CheckArgs {
        config: path,
        params,
        set,
        unset,
        memory_limit,
    } = a;
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
        None if spec.routing.has_escape() => println!(
            "deadlock-free: the escape channels' dependency graph is acyclic (a waiting head \
             depends on its escape output alone, Duato's condition)"
        ),
        None => println!("deadlock-free: the channel dependency graph is acyclic"),
    }
    println!("{}", reef::runner::memory_line(&spec));
    // Which engine `reef run` takes (the same results either way).
    match reef::engine::Sim::new(&spec) {
        Ok(s) => println!("engine: {}", s.engine_choice()),
        Err(e) => println!("engine: none: {e}"),
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `reef convert`.
pub(crate) fn convert(a: ConvertArgs) -> Result<ExitCode> {
    let ConvertArgs {
        config: path,
        params,
        output,
    } = a;
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

/// `reef reproduce`.
pub(crate) fn reproduce(a: ReproduceArgs) -> Result<ExitCode> {
    let ReproduceArgs {
        system,
        quick,
        json,
        out,
        seed,
        jobs,
        quiet,
    } = a;
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

/// `reef live`.
pub(crate) fn live(a: LiveArgs) -> Result<ExitCode> {
    let LiveArgs {
        system,
        quick,
        json,
        out,
        poll_us,
        quiet,
    } = a;
    check_outs(&[("--json", &json)], Some(("--out", &out)))?;
    if system != "clan" {
        bail!("no live run for `{system}` (available: clan)");
    }
    emit(&live_clan(quick, poll_us, quiet)?, json, out)
}

/// `reef routes`.
pub(crate) fn routes(a: RoutesArgs) -> Result<ExitCode> {
    let RoutesArgs {
        config: path,
        set,
        unset,
        lan,
        max_pairs,
    } = a;
    if lan {
        let l = reef::systems::atomic::net::named(&path).ok_or_else(|| {
            anyhow::anyhow!("no built-in ATOMIC LAN `{path}` (proto-3x3, board-8x8, lan-4x3x3, nonsym-3x3x3)")
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

/// `reef bench`.
pub(crate) fn bench(a: BenchArgs) -> Result<ExitCode> {
    let BenchArgs {
        json,
        only,
        scale,
        no_trains,
        general,
        in_process,
        repeat,
        child,
    } = a;
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

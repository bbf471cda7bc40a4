//! Issue 31: a network too large for the machine is refused before it is built, with the
//! estimate, the limit and what to change; and the estimate is within 25 % of the peak
//! resident memory `reef run` measures, on three sizes.

mod common;
use common::reef;

use reef::config;
use reef::memory::Counts;
use std::path::Path;
use std::process::Command;

#[test]
fn a_network_too_large_is_refused_before_it_is_built() {
    // 2^24 hosts: accepted by the config check, it aborted after reaching 15 GB.
    let t = std::time::Instant::now();
    let (code, out, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "topology.k=[4096,4096]",
        "--memory-limit",
        "16GB",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());
    for want in [
        "topology.k: this network needs about",
        "16777216 switches",
        "buffer slots",
        "more than --memory-limit (16.0 GB)",
        "a smaller topology.k",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    // Without --memory-limit the limit is what the machine has available.
    let (code, _, err) = reef(&[
        "check",
        "examples/mesh8x8.toml",
        "--set",
        "topology.k=[4096,4096]",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("more than the memory this machine has available"),
        "{err}"
    );
    // A sweep too, and a network that fits the machine but not the limit given.
    let (code, _, err) = reef(&[
        "sweep",
        "examples/mesh8x8.toml",
        "--load",
        "0.1:0.2:0.1",
        "--set",
        "topology.k=256",
        "--memory-limit",
        "100MB",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("or a larger --memory-limit"), "{err}");
    // `reef check` prints the estimate.
    let (code, out, _) = reef(&["check", "examples/mesh8x8.toml", "--memory-limit", "1GB"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("memory: about ")
            && out.contains("64 switches")
            && out.contains("limit 1.0 GB (--memory-limit)"),
        "{out}"
    );
}

/// Peak resident memory of `reef args` [bytes], from the kernel's accounting of the child.
#[cfg(unix)]
#[allow(clippy::zombie_processes)] // wait4 below reaps it (Child::wait would lose the rusage).
fn peak_rss(args: &[&str]) -> u64 {
    let child = Command::new(env!("CARGO_BIN_EXE_reef"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 on our own child, not yet waited for.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}: {status}"
    );
    // (Linux: kilobytes.)
    ru.ru_maxrss as u64 * 1024
}

#[test]
#[cfg(target_os = "linux")]
fn the_estimate_is_within_a_quarter_of_the_measured_peak() {
    for (k, extra) in [("128", None), ("180", Some("channel.vcs=2")), ("256", None)] {
        let mut set = vec![
            format!("topology.k={k}"),
            "sim.warmup=\"20 cycles\"".to_string(),
            "sim.measure=\"20 cycles\"".to_string(),
        ];
        if let Some(e) = extra {
            set.push(e.to_string());
        }
        let spec = config::load(Path::new("examples/mesh8x8.toml"), &set).unwrap();
        let est = Counts::of_spec(&spec).bytes() as f64;
        drop(spec);
        let mut args = vec!["run", "examples/mesh8x8.toml", "-q"];
        for s in &set {
            args.extend(["--set", s.as_str()]);
        }
        let peak = peak_rss(&args) as f64;
        eprintln!(
            "k={k} {extra:?}: estimate {:.1} MB, peak {:.1} MB",
            est / 1e6,
            peak / 1e6
        );
        assert!(
            (est / peak - 1.0).abs() < 0.25,
            "k={k}: estimate {est}, peak {peak}"
        );
    }
}

/// Issue 35: a network that takes a large share of the memory allowed (above 1 GB, or half
/// the limit) says what it will hold before it is built — first, before the run's other
/// notes; and only once (it is checked as planned and as built). `reef check` of a network
/// whose routing check is long says how long first.
#[test]
fn a_large_network_says_its_estimate_first() {
    let (code, _, err) = reef(&[
        "run",
        "examples/mesh8x8.toml",
        "--set",
        "topology.k=[100,100]",
        "--set",
        "sim.warmup=\"10 cycles\"",
        "--set",
        "sim.measure=\"100 cycles\"",
        "--memory-limit",
        "60MB",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("note: building a network that needs about")
            && first.contains("10000 switches")
            && first.contains("(--memory-limit: 60 MB)"),
        "{err}"
    );
    assert_eq!(err.matches("building a network").count(), 1, "{err}");
    // Far from the limit: nothing said.
    let (code, _, err) = reef(&["run", "examples/mesh8x8.toml", "-q"]);
    assert_eq!(code, 0);
    assert!(!err.contains("building a network"), "{err}");
}

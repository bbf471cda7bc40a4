//! BookSim2's sampling decides the measurement window in the run that measures it: the
//! numbers must be those of a run of the decided window fixed from the start, bit for bit
//! (`engine::window`), on random meshes, loads and sampling parameters, with the invariant
//! checks on.

mod common;

use common::{cases, json, run, spec};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Case {
    k: u32,
    vcs: u32,
    allocator: &'static str,
    packet: u32,
    load: f64,
    period: u32,
    warmup_periods: u32,
    max_samples: u32,
    throughput: bool,
    trains: bool,
    batches: u32,
    seed: u64,
    /// 0: credits; 1: DS tokens (one VC, greedy allocation); 2: channels clocked at
    /// 300 MHz, off the picosecond grid.
    link: u32,
}

impl Case {
    fn toml(&self) -> String {
        let (clock, flow) = match self.link {
            1 => (
                "1 GHz",
                "flow_control = \"tokens\"\ntoken_grant = 2\ntoken_max = 4",
            ),
            2 => (
                "300 MHz",
                "flow_control = \"credit\"\ncredit_delay = \"2 cycles\"",
            ),
            _ => ("1 GHz", "flow_control = \"credit\"\ncredit_delay = \"2 cycles\""),
        };
        let sampling = if self.throughput {
            "booksim-throughput"
        } else {
            "booksim"
        };
        format!(
            r#"
[sim]
clock = "{clock}"
sampling = "{sampling}"
sample_period = "{period} cycles"
warmup_periods = {warm}
max_samples = {max}
trains = {trains}
batches = {batches}
check = true
seed = {seed}

[topology]
kind = "mesh"
k = [{k}, {k}]

[channel]
flit_time = "1 cycle"
latency = "1 cycle"
vcs = {vcs}
buffer = 4
{flow}

[host_channel]
flit_time = "1 cycle"
latency = "1 cycle"
vcs = {vcs}
buffer = 4
{flow}

[switch]
mode = "wormhole"
router_delay = "3 cycles"
flit_delay = "1 cycle"
allocator = "{alloc}"

[routing]
algorithm = "dor"

[traffic]
pattern = "uniform"
packet_size = {packet}
load = {load}
"#,
            period = self.period,
            warm = self.warmup_periods,
            max = self.max_samples,
            trains = self.trains,
            batches = self.batches,
            seed = self.seed,
            k = self.k,
            vcs = self.vcs,
            alloc = self.allocator,
            packet = self.packet,
            load = self.load,
        )
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        (3u32..=5, prop::sample::select(vec![1u32, 2, 4])),
        prop::sample::select(vec!["greedy", "islip", "separable-input-first"]),
        (1u32..=6, 0.02f64..0.9),
        (15u32..400, 0u32..=3, 1u32..=12),
        (any::<bool>(), any::<bool>(), 1u32..=12, 0u64..1000),
        0u32..3,
    )
        .prop_map(
            |(
                (k, vcs),
                allocator,
                (packet, load),
                (period, warmup_periods, more),
                (throughput, trains, batches, seed),
                link,
            )| {
                Case {
                    k,
                    vcs: if link != 0 { 1 } else { vcs },
                    allocator: if link == 1 { "greedy" } else { allocator },
                    packet,
                    load: (load * 1000.0).round() / 1000.0,
                    period,
                    warmup_periods,
                    max_samples: warmup_periods + more,
                    throughput,
                    trains,
                    batches,
                    seed,
                    link,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("REEF_SAMPLING_CASES", 40),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_sampled_window_counts_as_the_same_window_fixed(c in case()) {
        let text = c.toml();
        let sampled = spec(&text);
        let r = run(&sampled);
        let s = r.sampling.clone().expect("BookSim2's sampling");
        // The window BookSim2's sampling decided, fixed from the start.
        // (n cycles of a clock of period P are ⌊n·P⌋ ps.)
        let period = match c.link {
            2 => c.period as u64 * 10_000 / 3,
            _ => c.period as u64 * 1000,
        };
        let mut fixed = sampled.clone();
        fixed.params.sampling = None;
        fixed.params.warmup = s.warmup_periods as u64 * period;
        fixed.params.measure = s.measured_periods as u64 * period;
        let mut want = run(&fixed);
        want.sampling = r.sampling.clone();
        want.events = r.events;
        // A network idle before the window's end: the fixed run ends at its last event,
        // the sampled one at the window's end, where its sampling decided it (its idle
        // hosts' next packets, after the end, were still due while the window was open).
        let end_ns = ((s.warmup_periods + s.measured_periods) as u64 * period) as f64 / 1000.0;
        if want.sim_end_ns < end_ns {
            want.sim_end_ns = end_ns;
        }
        if s.unstable.is_some() {
            // (Only the sampled run knows BookSim2 would call it unstable.)
            (want.saturated, want.saturation_reason) = (r.saturated, r.saturation_reason.clone());
        }
        let (a, b) = (json(&want), json(&r));
        if let Some((x, y)) = a.lines().zip(b.lines()).find(|(x, y)| x != y) {
            prop_assert!(false, "fixed {} against sampled {} ({:?}) in\n{}", x, y, s, text);
        }
        prop_assert_eq!(a.lines().count(), b.lines().count(), "in\n{}", text);
    }
}

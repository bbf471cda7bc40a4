//! IEEE 1355 / Macramé: DS-link token flow control against the spec's computed ceilings.

use reef::engine::{HostParams, Sim, SimParams, Spec};
use reef::fabric::{FabricBuilder, Shape};
use reef::link::{FlowControl, LinkParams};
use reef::routing::Routing;
use reef::routing::table::TableBuilder;
use reef::switch::SwitchParams;
use reef::time::Ratio;
use reef::workload::{Pattern, Process, Sizes, Workload};

/// A DS link: 10-bit data characters and a 4-bit EOP at 100 MBaud, 10 ns of cable.
fn ds(buffer: u32) -> LinkParams {
    LinkParams {
        flit_time: 100_000,
        tail_time: 40_000,
        latency: 10_000,
        vcs: 1,
        buffer,
        flow: FlowControl::ds_link(40_000),
        delete_header: false,
    }
}

/// Two traffic nodes joined by one DS link, backlogged with packets of `l` payload bytes and
/// `h` header bytes, one way or both ways: payload throughput per direction [MB/s].
fn link_throughput(l: u32, h: u32, both: bool, trains: bool) -> f64 {
    let mut b = FabricBuilder::new(&[], 2);
    b.link(b.host(0), 0, b.host(1), 0, ds(32)).unwrap();
    let fab = b.build(SwitchParams::default(), Shape::Irregular).unwrap();
    let flits = h + l + 1;
    let measure = 2_000_000_000; // 2 ms
    let spec = Spec {
        name: "ds-link".into(),
        fabric: fab,
        routing: Routing::Table(TableBuilder::new(0, 2, 1).build("none")),
        workload: Workload {
            pattern: Pattern::Map(vec![1, if both { 0 } else { u32::MAX }]),
            process: Process::Backlogged,
            sizes: Sizes::Fixed(flits),
            load: 1.0,
        },
        params: SimParams {
            seed: 1,
            warmup: 100_000_000,
            measure,
            drain_limit: 100_000_000,
            drain_all: false,
            batches: 1,
            cycle: Ratio::int(1000),
            check: true,
            watchdog: 100_000_000,
            flit_bytes: 1,
            trains,
            max_header: 0,
        },
        host: HostParams::default(),
    };
    let mut sim = Sim::new(&spec).unwrap();
    let out = sim.run(&mut |_| {}).unwrap();
    let r = sim.result(&out);
    // Flits that landed at host 1 in the window, as packets, as payload bytes.
    let flits_in = r.accepted_flits_per_node_cycle * 2.0 * (measure as f64 / 1000.0);
    let bytes = flits_in / flits as f64 * l as f64;
    bytes / (measure as f64 * 1e-12) / 1e6 / if both { 2.0 } else { 1.0 }
}

/// The spec's ceiling: L / (10·(L+h) + 4 [+ 4·(L+h+1)/8 both ways]) × 10⁸ bytes/s [MB/s].
fn ceiling(l: u32, h: u32, both: bool) -> f64 {
    let bits = 10.0 * (l + h) as f64 + 4.0 + if both { 4.0 * (l + h + 1) as f64 / 8.0 } else { 0.0 };
    l as f64 / bits * 100.0
}

#[test]
fn ds_link_ceilings() {
    // (payload, header, both ways, the spec's figure)
    let cases = [
        (64, 1, false, 9.79),
        (64, 1, true, 9.32),
        (64, 2, true, 9.18),
        (1024, 1, false, 9.99),
        (4096, 1, true, 9.52),
    ];
    for trains in [true, false] {
        for (l, h, both, spec) in cases {
            let got = link_throughput(l, h, both, trains);
            let f = ceiling(l, h, both);
            assert!(
                (got - f).abs() < 2e-4 * f,
                "{l} B, h = {h}, both = {both}: {got:.4} MB/s, formula {f:.4}"
            );
            assert!(
                (got - spec).abs() < 0.006,
                "{l} B, h = {h}, both = {both}: {got:.4} MB/s, spec {spec}"
            );
        }
    }
}

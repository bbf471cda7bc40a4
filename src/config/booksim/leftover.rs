//! BookSim2 keys the translation did not read: those that cannot change a run (trace and
//! statistics files, the power model, keys of other simulation types or topologies) are
//! noted; any other set away from BookSim2's default is refused with its line, and a hint
//! where there is one (docs/booksim.md, "Not yet").

use super::keys::KEYS;
use super::map::*;

/// Keys that only steer BookSim2's own output (traces, statistics files, its power model):
/// they cannot change a run, so they are noted, not refused.
const OUTPUT_KEYS: &[&str] = &[
    "print_activity",
    "print_csv_results",
    "deadlock_warn_timeout",
    "viewer_trace",
    "watch_file",
    "watch_flits",
    "watch_packets",
    "watch_transactions",
    "watch_out",
    "stats_out",
    "injected_flits_out",
    "received_flits_out",
    "stored_flits_out",
    "sent_flits_out",
    "outstanding_credits_out",
    "ejected_flits_out",
    "active_packets_out",
    "used_credits_out",
    "free_credits_out",
    "max_credits_out",
    "sent_packets_out",
    "pair_stats",
];

const POWER_KEYS: &[&str] = &[
    "power_output_file",
    "tech_file",
    "channel_width",
    "channel_sweep",
    "H_INVD2",
    "W_INVD2",
    "H_DFQD1",
    "W_DFQD1",
    "H_ND2D1",
    "W_ND2D1",
    "H_SRAM",
    "W_SRAM",
    "Vdd",
    "R",
    "IoffSRAM",
    "IoffP",
    "IoffN",
    "Cg_pwr",
    "Cd_pwr",
    "Cgdl",
    "Cg",
    "Cd",
    "LAMBDA",
    "MetalPitch",
    "Rw",
    "Cw_gnd",
    "Cw_cpl",
    "wire_length",
];

pub(super) const THRESHOLD_KEYS: &[&str] = &[
    "latency_thres",
    "warmup_thres",
    "acc_warmup_thres",
    "stopping_thres",
    "acc_stopping_thres",
];

const BATCH_KEYS: &[&str] = &["batch_size", "batch_count", "max_outstanding_requests"];

/// Keys (or the starts of keys) a batch simulation does not read: its sources' rate and
/// process, and the sampling.
const NOT_IN_BATCH: &[&str] = &[
    "injection_rate",
    "injection_process",
    "burst_",
    "sample_period",
    "warmup_periods",
    "max_samples",
    "latency_thres",
    "warmup_thres",
    "acc_warmup_thres",
    "stopping_thres",
    "acc_stopping_thres",
];

/// Keys BookSim2's mesh, torus, fly and anynet do not read, and those only some of them read
/// (left unread by the translation where the topology does not read them).
const OTHER_TOPOLOGY_KEYS: &[&str] = &[
    "c",
    "x",
    "y",
    "xr",
    "yr",
    "in_ports",
    "out_ports",
    "k",
    "n",
    "use_noc_latency",
    "network_file",
];

/// Why a key set away from its default cannot run, where there is more to say than that.
fn hint_for(key: &str) -> Option<&'static str> {
    Some(match key {
        "internal_speedup" => {
            "BookSim2's router runs its whole pipeline (VC and switch allocation, the crossbar) \
             internal_speedup times a cycle, into output queues shared by an output's VCs; \
             reef's switch allocates once a cycle, from its input buffers (docs/booksim.md, \
             \"Not yet\")"
        }
        "classes" | "class_priority" | "priority" => "reef runs one traffic class, without priorities",
        "use_read_write" => "reef's synthetic traffic has no request/reply transactions",
        "subnets" => "reef runs one network",
        _ => return None,
    })
}

/// Every key the translation did not read: noted if it cannot change a run, accepted at
/// BookSim2's default, refused otherwise.
pub(super) fn leftovers(c: &Cfg, batch: bool) -> R<()> {
    let used = c.used.borrow().clone();
    let other = format!("not read by BookSim2's {}", c.str("topology"));
    for key in KEYS {
        let name = key.name;
        if used.contains(name) || !c.changed(name) {
            continue;
        }
        let why = if OUTPUT_KEYS.contains(&name) {
            "BookSim2's own trace and statistics output; reef writes its own (--json, --csv, --svg)"
        } else if POWER_KEYS.contains(&name) {
            "BookSim2's power model (sim_power = 0): no effect on a run"
        } else if batch && NOT_IN_BATCH.iter().any(|k| name.starts_with(k)) {
            "not read by a batch simulation, whose sources create a packet a cycle and which \
             measures every packet (as in BookSim2)"
        } else if BATCH_KEYS.contains(&name) {
            "used only when sim_type = batch (as in BookSim2)"
        } else if name.starts_with("read_") || name.starts_with("write_") {
            "used only when use_read_write = 1 (as in BookSim2)"
        } else if OTHER_TOPOLOGY_KEYS.contains(&name) {
            &other
        } else if name == "perm_seed" {
            "used only by traffic = randperm (as in BookSim2)"
        } else if name.starts_with("burst_") {
            "used only by injection_process = on_off (as in BookSim2)"
        } else if THRESHOLD_KEYS.contains(&name) {
            "not read by a throughput simulation, which tests only the accepted throughput \
             (as in BookSim2)"
        } else {
            let default = match (key.int, key.float, key.str) {
                (Some(i), _, _) => i.to_string(),
                (_, Some(f), _) => f.to_string(),
                (_, _, Some("")) => "empty".to_string(),
                (_, _, Some(s)) => s.to_string(),
                _ => String::new(),
            };
            return Err(c.err(
                name,
                format!(
                    "reef does not model `{name} = {}`: it runs this key only at BookSim2's default ({default})",
                    c.shown(name)
                ),
                Some(hint_for(name).unwrap_or("docs/booksim.md lists the keys reef models")),
            ));
        };
        c.note(name, why);
    }
    Ok(())
}

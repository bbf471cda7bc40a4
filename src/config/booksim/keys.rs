//! BookSim2's keys, their types and defaults, as `booksim_config.cpp` of booksim/booksim2
//! (commit 28f43299) declares them, and the store an assignment goes into. A key may take
//! a whole number, a real, a string, or two of these (BookSim2 keeps one value of each kind:
//! `packet_size = 4;` and `packet_size = {4,8};` set different slots, and the string, when
//! not empty, is the one read). Assigning a kind a key does not take is an error, as in
//! BookSim2, except a whole number where a real is taken (BookSim2 refuses `x = 2;` for a
//! real `x`; reef reads it as 2.0).

use super::parse::{Stmt, Value};
use std::collections::BTreeMap;

/// A BookSim2 key: its default whole number, real and string, for the kinds it takes.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    pub int: Option<i64>,
    pub float: Option<f64>,
    pub str: Option<&'static str>,
}

const fn key(name: &'static str, int: Option<i64>, float: Option<f64>, str: Option<&'static str>) -> Key {
    Key {
        name,
        int,
        float,
        str,
    }
}

/// Every key BookSim2 accepts, with its defaults.
pub const KEYS: &[Key] = &[
    key("channel_file", None, None, Some("")),
    key("subnets", Some(1), None, None),
    key("topology", None, None, Some("torus")),
    key("k", Some(8), None, None),
    key("n", Some(2), None, None),
    key("c", Some(1), None, None),
    key("routing_function", None, None, Some("none")),
    key("use_noc_latency", Some(1), None, None),
    key("x", Some(8), None, None),
    key("y", Some(8), None, None),
    key("xr", Some(1), None, None),
    key("yr", Some(1), None, None),
    key("link_failures", Some(0), None, None),
    key("fail_seed", Some(0), None, Some("")),
    key("in_ports", Some(5), None, None),
    key("out_ports", Some(5), None, None),
    key("router", None, None, Some("iq")),
    key("output_delay", Some(0), None, None),
    key("credit_delay", Some(0), None, None),
    key("internal_speedup", None, Some(1.0), None),
    key("output_buffer_size", Some(-1), None, None),
    key("noq", Some(0), None, None),
    key("speculative", Some(0), None, None),
    key("spec_check_elig", Some(1), None, None),
    key("spec_check_cred", Some(1), None, None),
    key("spec_mask_by_reqs", Some(0), None, None),
    key("spec_sw_allocator", None, None, Some("prio")),
    key("num_vcs", Some(16), None, None),
    key("vc_buf_size", Some(8), None, None),
    key("buf_size", Some(-1), None, None),
    key("buffer_policy", None, None, Some("private")),
    key("private_bufs", Some(-1), None, None),
    key("private_buf_size", Some(1), None, Some("")),
    key("private_buf_start_vc", Some(-1), None, Some("")),
    key("private_buf_end_vc", Some(-1), None, Some("")),
    key("max_held_slots", Some(-1), None, None),
    key("feedback_aging_scale", Some(1), None, None),
    key("feedback_offset", Some(0), None, None),
    key("wait_for_tail_credit", Some(0), None, None),
    key("vc_busy_when_full", Some(0), None, None),
    key("vc_prioritize_empty", Some(0), None, None),
    key("vc_priority_donation", Some(0), None, None),
    key("vc_shuffle_requests", Some(0), None, None),
    key("hold_switch_for_packet", Some(0), None, None),
    key("input_speedup", Some(1), None, None),
    key("output_speedup", Some(1), None, None),
    key("routing_delay", Some(1), None, None),
    key("vc_alloc_delay", Some(1), None, None),
    key("sw_alloc_delay", Some(1), None, None),
    key("st_prepare_delay", Some(0), None, None),
    key("st_final_delay", Some(1), None, None),
    key("vct", Some(0), None, None),
    key("vc_allocator", None, None, Some("islip")),
    key("sw_allocator", None, None, Some("islip")),
    key("arb_type", None, None, Some("round_robin")),
    key("alloc_iters", Some(1), None, None),
    key("classes", Some(1), None, None),
    key("traffic", None, None, Some("uniform")),
    key("class_priority", Some(0), None, Some("")),
    key("perm_seed", Some(0), None, Some("")),
    key("injection_rate", None, Some(0.1), Some("")),
    key("injection_rate_uses_flits", Some(0), None, None),
    key("packet_size", Some(1), None, Some("")),
    key("packet_size_rate", Some(1), None, Some("")),
    key("injection_process", None, None, Some("bernoulli")),
    key("burst_alpha", None, Some(0.5), None),
    key("burst_beta", None, Some(0.5), None),
    key("burst_r1", None, Some(-1.0), None),
    key("priority", None, None, Some("none")),
    key("batch_size", Some(1000), None, None),
    key("batch_count", Some(1), None, None),
    key("max_outstanding_requests", Some(0), None, None),
    key("use_read_write", Some(0), None, Some("")),
    key("write_fraction", None, Some(0.5), Some("")),
    key("read_request_begin_vc", Some(0), None, None),
    key("read_request_end_vc", Some(5), None, None),
    key("write_request_begin_vc", Some(2), None, None),
    key("write_request_end_vc", Some(7), None, None),
    key("read_reply_begin_vc", Some(8), None, None),
    key("read_reply_end_vc", Some(13), None, None),
    key("write_reply_begin_vc", Some(10), None, None),
    key("write_reply_end_vc", Some(15), None, None),
    key("read_request_subnet", Some(0), None, None),
    key("read_reply_subnet", Some(0), None, None),
    key("write_request_subnet", Some(0), None, None),
    key("write_reply_subnet", Some(0), None, None),
    key("read_request_size", Some(1), None, Some("")),
    key("write_request_size", Some(1), None, Some("")),
    key("read_reply_size", Some(1), None, Some("")),
    key("write_reply_size", Some(1), None, Some("")),
    key("sim_type", None, None, Some("latency")),
    key("warmup_periods", Some(3), None, None),
    key("sample_period", Some(1000), None, None),
    key("max_samples", Some(10), None, None),
    key("measure_stats", Some(1), None, Some("")),
    key("pair_stats", Some(0), None, None),
    key("latency_thres", None, Some(500.0), Some("")),
    key("warmup_thres", None, Some(0.05), Some("")),
    key("acc_warmup_thres", None, Some(0.05), Some("")),
    key("stopping_thres", None, Some(0.05), Some("")),
    key("acc_stopping_thres", None, Some(0.05), Some("")),
    key("sim_count", Some(1), None, None),
    key("include_queuing", Some(1), None, None),
    key("seed", Some(0), None, Some("")),
    key("print_activity", Some(0), None, None),
    key("print_csv_results", Some(0), None, None),
    key("deadlock_warn_timeout", Some(256), None, None),
    key("viewer_trace", Some(0), None, None),
    key("watch_file", None, None, Some("")),
    key("watch_flits", None, None, Some("")),
    key("watch_packets", None, None, Some("")),
    key("watch_transactions", None, None, Some("")),
    key("watch_out", None, None, Some("")),
    key("stats_out", None, None, Some("")),
    key("injected_flits_out", None, None, Some("")),
    key("received_flits_out", None, None, Some("")),
    key("stored_flits_out", None, None, Some("")),
    key("sent_flits_out", None, None, Some("")),
    key("outstanding_credits_out", None, None, Some("")),
    key("ejected_flits_out", None, None, Some("")),
    key("active_packets_out", None, None, Some("")),
    key("used_credits_out", None, None, Some("")),
    key("free_credits_out", None, None, Some("")),
    key("max_credits_out", None, None, Some("")),
    key("sent_packets_out", None, None, Some("")),
    key("sim_power", Some(0), None, None),
    key("power_output_file", None, None, Some("pwr_tmp")),
    key("tech_file", None, None, Some("")),
    key("channel_width", Some(128), None, None),
    key("channel_sweep", Some(0), None, None),
    key("network_file", None, None, Some("")),
    key("H_INVD2", Some(0), None, None),
    key("W_INVD2", Some(0), None, None),
    key("H_DFQD1", Some(0), None, None),
    key("W_DFQD1", Some(0), None, None),
    key("H_ND2D1", Some(0), None, None),
    key("W_ND2D1", Some(0), None, None),
    key("H_SRAM", Some(0), None, None),
    key("W_SRAM", Some(0), None, None),
    key("Vdd", None, Some(0.0), None),
    key("R", None, Some(0.0), None),
    key("IoffSRAM", None, Some(0.0), None),
    key("IoffP", None, Some(0.0), None),
    key("IoffN", None, Some(0.0), None),
    key("Cg_pwr", None, Some(0.0), None),
    key("Cd_pwr", None, Some(0.0), None),
    key("Cgdl", None, Some(0.0), None),
    key("Cg", None, Some(0.0), None),
    key("Cd", None, Some(0.0), None),
    key("LAMBDA", None, Some(0.0), None),
    key("MetalPitch", None, Some(0.0), None),
    key("Rw", None, Some(0.0), None),
    key("Cw_gnd", None, Some(0.0), None),
    key("Cw_cpl", None, Some(0.0), None),
    key("wire_length", None, Some(0.0), None),
];

/// The key called `name`.
pub fn lookup(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

/// Where a value came from: the line in the file, or the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    Line(usize),
    CommandLine,
}

/// One assigned slot of a key.
#[derive(Debug, Clone, PartialEq)]
pub struct Set<T> {
    pub value: T,
    pub from: From,
}

/// The values a config assigned, by key; keys not assigned keep their defaults.
#[derive(Debug, Default, Clone)]
pub struct Store {
    pub int: BTreeMap<&'static str, Set<i64>>,
    pub float: BTreeMap<&'static str, Set<f64>>,
    pub str: BTreeMap<&'static str, Set<String>>,
}

/// An assignment BookSim2 would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignError {
    pub msg: String,
    pub hint: Option<String>,
}

fn kinds(k: &Key) -> String {
    let mut v = Vec::new();
    if k.int.is_some() {
        v.push("a whole number");
    }
    if k.float.is_some() {
        v.push("a number");
    }
    if k.str.is_some() {
        v.push("a name or a {…} list");
    }
    v.join(" or ")
}

impl Store {
    /// Assigns one statement, as BookSim2's `Configuration::Assign` does.
    pub fn assign(&mut self, st: &Stmt) -> Result<(), AssignError> {
        let Some(k) = lookup(&st.key) else {
            let best = KEYS
                .iter()
                .map(|k| (strsim::damerau_levenshtein(k.name, &st.key), k.name))
                .min()
                .filter(|(d, _)| *d <= 3)
                .map(|(_, n)| format!("did you mean `{n}`?"));
            return Err(AssignError {
                msg: format!("`{}` is not a BookSim2 key", st.key),
                hint: best.or_else(|| Some("docs/booksim.md lists the keys".into())),
            });
        };
        let from = st.line.map_or(From::CommandLine, From::Line);
        let wrong = || AssignError {
            msg: format!("`{}` takes {}, not `{}`", k.name, kinds(k), st.value),
            hint: None,
        };
        match &st.value {
            Value::Int(v) if k.int.is_some() => {
                self.int.insert(k.name, Set { value: *v, from });
            }
            Value::Int(v) if k.float.is_some() => {
                self.float.insert(
                    k.name,
                    Set {
                        value: *v as f64,
                        from,
                    },
                );
            }
            Value::Float(v) if k.float.is_some() => {
                self.float.insert(k.name, Set { value: *v, from });
            }
            Value::Str(s) if k.str.is_some() => {
                self.str.insert(
                    k.name,
                    Set {
                        value: s.clone(),
                        from,
                    },
                );
            }
            _ => return Err(wrong()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(key: &str, value: Value) -> Stmt {
        Stmt {
            key: key.into(),
            value,
            line: Some(3),
        }
    }

    #[test]
    fn the_table_holds_booksims_defaults() {
        let k = lookup("num_vcs").unwrap();
        assert_eq!((k.int, k.float, k.str), (Some(16), None, None));
        let k = lookup("injection_rate").unwrap();
        assert_eq!((k.int, k.float, k.str), (None, Some(0.1), Some("")));
        assert_eq!(lookup("topology").unwrap().str, Some("torus"));
        assert_eq!(lookup("routing_function").unwrap().str, Some("none"));
        // No key twice.
        let mut names: Vec<_> = KEYS.iter().map(|k| k.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KEYS.len());
    }

    #[test]
    fn assignments_go_to_the_slot_of_their_kind() {
        let mut s = Store::default();
        s.assign(&st("packet_size", Value::Int(4))).unwrap();
        s.assign(&st("packet_size", Value::Str("{4,8}".into()))).unwrap();
        assert_eq!(s.int["packet_size"].value, 4);
        assert_eq!(s.str["packet_size"].value, "{4,8}");
        // A whole number where a real is taken.
        s.assign(&st("internal_speedup", Value::Int(2))).unwrap();
        assert_eq!(s.float["internal_speedup"].value, 2.0);
        assert_eq!(s.float["internal_speedup"].from, From::Line(3));
    }

    #[test]
    fn wrong_kinds_and_unknown_keys_are_errors() {
        let mut s = Store::default();
        let e = s.assign(&st("k", Value::Float(8.5))).unwrap_err();
        assert_eq!(e.msg, "`k` takes a whole number, not `8.5`");
        let e = s.assign(&st("num_vcs", Value::Str("many".into()))).unwrap_err();
        assert!(e.msg.contains("takes a whole number, not `many`"), "{}", e.msg);
        let e = s.assign(&st("topology", Value::Int(3))).unwrap_err();
        assert!(e.msg.contains("takes a name"), "{}", e.msg);
        let e = s.assign(&st("num_vc", Value::Int(3))).unwrap_err();
        assert_eq!(e.msg, "`num_vc` is not a BookSim2 key");
        assert_eq!(e.hint.as_deref(), Some("did you mean `num_vcs`?"));
    }
}

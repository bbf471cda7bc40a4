//! BookSim2's traffic keys in reef's terms: the pattern (`traffic`), packet sizes
//! (`packet_size`, `packet_size_rate`), the rate (`injection_rate`, in packets a cycle unless
//! `injection_rate_uses_flits`) and the injection process (`injection_process`, bernoulli or
//! on_off with `burst_alpha`, `burst_beta`, `burst_r1`), as `traffic.cpp` and
//! `injection.cpp` of BookSim2 define them.

use super::map::{Cfg, R};
use super::parse::{call, tokenize};
use super::toml_out::{Toml, decimal, quote, real};

/// The reef pattern for BookSim2's `traffic` and the keys that go with it; `cube` is the
/// (k, n) of a mesh or torus (patterns by coordinates need one).
pub(super) fn pattern(c: &Cfg, t: &mut Toml, cube: Option<(i64, i64)>, nodes: i64) -> R<()> {
    let mut extra = Vec::new();
    let reef = pattern_name(c, &mut extra, cube, nodes)?;
    t.put(c, "traffic", "pattern", quote(reef), &["traffic"]);
    for (key, value) in extra {
        t.put(c, "traffic", key, value, &["traffic"]);
    }
    Ok(())
}

fn pattern_name(
    c: &Cfg,
    extra: &mut Vec<(&'static str, String)>,
    cube: Option<(i64, i64)>,
    nodes: i64,
) -> R<&'static str> {
    let traffic = c.str("traffic");
    let (name, params) = call(&traffic);
    let pow2 = nodes & (nodes - 1) == 0;
    let bits = || -> R<()> {
        if !pow2 {
            return Err(c.err(
                "traffic",
                format!("`{name}` is a bit permutation: it needs a power-of-two number of nodes (this network has {nodes})"),
                None,
            ));
        }
        Ok(())
    };
    let no_params = |what: &str| -> R<()> {
        if params.is_empty() {
            Ok(())
        } else {
            Err(c.err("traffic", format!("`{what}` takes no parameters"), None))
        }
    };
    let reef = match name {
        "uniform" => {
            no_params(name)?;
            extra.push(("include_self", "true".into()));
            "uniform"
        }
        "transpose" => {
            no_params(name)?;
            bits()?;
            if !nodes.trailing_zeros().is_multiple_of(2) {
                return Err(c.err(
                    "traffic",
                    format!("transpose needs an even power of two nodes (this network has {nodes})"),
                    None,
                ));
            }
            "transpose"
        }
        "bitcomp" => {
            no_params(name)?;
            bits()?;
            "bit-complement"
        }
        "bitrev" => {
            no_params(name)?;
            bits()?;
            "bit-reverse"
        }
        "shuffle" => {
            no_params(name)?;
            bits()?;
            "shuffle"
        }
        "tornado" | "neighbor" => {
            let Some((k, n)) = cube else {
                return Err(c.err(
                    "traffic",
                    format!(
                        "`{name}` moves a node by coordinates: reef runs it on a mesh or torus, not a {}",
                        c.str("topology")
                    ),
                    None,
                ));
            };
            let num = |i: usize, key: &str| -> R<i64> {
                match params.get(i) {
                    Some(p) => p.trim().parse::<i64>().map_err(|_| {
                        c.err(
                            "traffic",
                            format!("`{name}`: parameter {} is not a whole number: `{p}`", i + 1),
                            None,
                        )
                    }),
                    None => Ok(c.int(key)),
                }
            };
            let (pk, pn, pxr) = (num(0, "k")?, num(1, "n")?, num(2, "xr")?);
            if (pk, pn, pxr) != (k, n, 1) {
                return Err(c.err(
                    "traffic",
                    format!(
                        "`{name}` over k = {pk}, n = {pn}, xr = {pxr}: reef applies it to the network's own \
                         coordinates (k = {k}, n = {n}, one node a router)"
                    ),
                    None,
                ));
            }
            if name == "tornado" { "tornado" } else { "neighbour" }
        }
        "randperm" => {
            if params.len() > 1 {
                return Err(c.err("traffic", "`randperm` takes one parameter, the seed", None));
            }
            c.mark("perm_seed");
            c.note(
                "traffic",
                "a random permutation drawn by reef from sim.seed, not the one BookSim2 draws from perm_seed",
            );
            "permutation"
        }
        "hotspot" => {
            let hot: Vec<String> = params.first().map(|p| tokenize(p)).unwrap_or_default();
            let mut hosts = Vec::new();
            for h in &hot {
                match h.trim().parse::<i64>() {
                    Ok(v) if (0..nodes).contains(&v) => hosts.push(v),
                    Ok(v) if v < 0 => {
                        return Err(c.err(
                            "traffic",
                            "hotspot: a negative node is one BookSim2 draws at random; name the node",
                            None,
                        ));
                    }
                    _ => {
                        return Err(c.err(
                            "traffic",
                            format!("hotspot: `{h}` is not a node from 0 to {}", nodes - 1),
                            None,
                        ));
                    }
                }
            }
            if hosts.is_empty() {
                return Err(c.err(
                    "traffic",
                    "hotspot needs its nodes: hotspot({a,b,…}) (BookSim2 would draw one at random)",
                    None,
                ));
            }
            if let Some(rates) = params.get(1) {
                let r = tokenize(rates);
                if r.windows(2).any(|w| w[0].trim() != w[1].trim()) {
                    return Err(c.err(
                        "traffic",
                        "hotspot with different rates per node: reef's hot-spot pattern picks its hot nodes evenly",
                        None,
                    ));
                }
            }
            let list = hosts.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
            extra.push(("hot", format!("[{list}]")));
            extra.push(("hot_fraction", "1.0".into()));
            extra.push(("include_self", "true".into()));
            "hot-spot"
        }
        other => {
            return Err(c.err(
                "traffic",
                format!("reef does not model BookSim2's `{other}` traffic pattern"),
                Some("reef runs uniform, transpose, bitcomp, bitrev, shuffle, tornado, neighbor, randperm and hotspot"),
            ));
        }
    };
    Ok(reef)
}

/// Packet sizes and their weights (`packet_size`, `packet_size_rate`); returns the mean.
pub(super) fn sizes(c: &Cfg, t: &mut Toml) -> R<f64> {
    let ints = |key: &str| -> R<Vec<i64>> {
        let s = c.str(key);
        if s.is_empty() {
            return Ok(vec![c.int(key)]);
        }
        tokenize(&s)
            .iter()
            .map(|x| {
                x.trim()
                    .parse::<i64>()
                    .map_err(|_| c.err(key, format!("`{x}` in the list is not a whole number"), None))
            })
            .collect()
    };
    let sizes = ints("packet_size")?;
    let mut rates = ints("packet_size_rate")?;
    if sizes.is_empty() {
        return Err(c.err("packet_size", "an empty list", None));
    }
    if let Some(&s) = sizes.iter().find(|&&s| !(1..=65_535).contains(&s)) {
        return Err(c.err(
            "packet_size",
            format!("a packet is 1 to 65535 flits, not {s}"),
            None,
        ));
    }
    let last = *rates.last().unwrap_or(&1);
    rates.resize(sizes.len(), last);
    if rates.iter().any(|&r| r < 0) || rates.iter().all(|&r| r == 0) {
        return Err(c.err(
            "packet_size_rate",
            "weights must be non-negative and not all zero",
            None,
        ));
    }
    let total: i64 = rates.iter().sum();
    let mean = sizes
        .iter()
        .zip(&rates)
        .map(|(&s, &r)| (s * r) as f64)
        .sum::<f64>()
        / total as f64;
    if sizes.len() == 1 {
        t.put(
            c,
            "traffic",
            "packet_size",
            sizes[0].to_string(),
            &["packet_size"],
        );
    } else {
        let list = sizes
            .iter()
            .zip(&rates)
            .map(|(s, r)| format!("[{s}, {r}.0]"))
            .collect::<Vec<_>>()
            .join(", ");
        t.put(
            c,
            "traffic",
            "sizes",
            format!("[{list}]"),
            &["packet_size", "packet_size_rate"],
        );
    }
    Ok(mean)
}

/// The injection rate in packets per cycle per node, and the load in flits.
pub(super) fn load(c: &Cfg, t: &mut Toml, mean: f64) -> R<f64> {
    let list = c.str("injection_rate");
    let rate = if list.is_empty() {
        c.float("injection_rate")
    } else {
        let v = tokenize(&list);
        if v.len() > 1 {
            c.note(
                "injection_rate",
                "one traffic class: the first rate is the one used (as in BookSim2)",
            );
        }
        let first = v
            .first()
            .ok_or_else(|| c.err("injection_rate", "an empty list", None))?;
        first
            .trim()
            .parse::<f64>()
            .map_err(|_| c.err("injection_rate", format!("`{first}` is not a number"), None))?
    };
    if !(rate.is_finite() && rate >= 0.0) {
        return Err(c.err("injection_rate", "must be a non-negative number", None));
    }
    let flits = c.int("injection_rate_uses_flits") != 0;
    let load = if flits { rate } else { rate * mean };
    t.put(
        c,
        "traffic",
        "load",
        real(load),
        &["injection_rate", "injection_rate_uses_flits", "packet_size"],
    );
    Ok(if flits { rate / mean } else { rate })
}

/// `sim_type = batch`: each node sends `batch_size` packets, one created a cycle (BookSim2's
/// batch sources read neither the injection rate nor the process), `batch_count` times, at
/// most `max_outstanding_requests` of a node's packets in flight.
/// Returns the batch count, the runs they become.
pub(super) fn batch(c: &Cfg, t: &mut Toml) -> R<i64> {
    let size = c.int_in("batch_size", 1, 1_000_000_000)?;
    let count = c.int_in("batch_count", 1, 1000)?;
    // (BookSim2 reads zero and below as no limit.)
    let window = c.int("max_outstanding_requests");
    let window = u32::try_from(window.max(0)).map_err(|_| {
        c.err(
            "max_outstanding_requests",
            format!("{window} is more than reef counts"),
            None,
        )
    })?;
    t.put(c, "traffic", "injection", quote("batch"), &["sim_type"]);
    t.put(c, "traffic", "batch", size.to_string(), &["batch_size"]);
    if window > 0 {
        t.put(
            c,
            "traffic",
            "max_outstanding",
            window.to_string(),
            &["max_outstanding_requests"],
        );
    }
    if count > 1 {
        c.note(
            "batch_count",
            "BookSim2 sends its batches one after another in one simulation, each once the one \
             before is delivered; reef runs each as a run of its own (sim.runs: seeds seed, \
             seed + 1, …, each on a fresh network). The mean batch duration and latency are \
             over all the batches in both",
        );
    }
    Ok(count)
}

/// `injection_process`: Bernoulli, or on/off with BookSim2's α (off → on), β (on → off) and
/// r1 (packet probability while on), two of which are given.
pub(super) fn injection(c: &Cfg, t: &mut Toml, rate: f64) -> R<()> {
    let process = c.str("injection_process");
    let (name, params) = call(&process);
    match name {
        "bernoulli" => {
            t.put(
                c,
                "traffic",
                "injection",
                quote("bernoulli"),
                &["injection_process"],
            );
            Ok(())
        }
        "on_off" => {
            let p = |i: usize, key: &str| -> R<f64> {
                match params.get(i) {
                    Some(x) => x
                        .trim()
                        .parse::<f64>()
                        .map_err(|_| c.err("injection_process", format!("`{x}` is not a number"), None)),
                    None => Ok(c.float(key)),
                }
            };
            if params.len() > 3 {
                return Err(c.err(
                    "injection_process",
                    "on_off with initial states: reef starts each node on or off at random, in proportion",
                    None,
                ));
            }
            let (mut a, mut b, r1) = (p(0, "burst_alpha")?, p(1, "burst_beta")?, p(2, "burst_r1")?);
            let given = [a, b, r1].iter().filter(|x| **x >= 0.0).count();
            if given != 2 {
                return Err(c.err(
                    "injection_process",
                    format!("on_off needs exactly two of burst_alpha, burst_beta and burst_r1 (have α = {a}, β = {b}, r1 = {r1}; negative is unset)"),
                    None,
                ));
            }
            if a < 0.0 {
                a = b * rate / (r1 - rate);
            } else if b < 0.0 {
                b = a * (r1 - rate) / rate;
            }
            if !(a > 0.0 && a <= 1.0 && b > 0.0 && b <= 1.0) {
                return Err(c.err(
                    "injection_process",
                    format!("on_off at this rate gives α = {a:.4}, β = {b:.4}: both must be in (0, 1]"),
                    None,
                ));
            }
            let from = ["injection_process", "burst_alpha", "burst_beta", "burst_r1"];
            t.put(c, "traffic", "injection", quote("on-off"), &from[..1]);
            t.put(
                c,
                "traffic",
                "on",
                quote(&format!("{} cycles", decimal(1.0 / b))),
                &from,
            );
            t.put(
                c,
                "traffic",
                "off",
                quote(&format!("{} cycles", decimal(1.0 / a))),
                &from,
            );
            Ok(())
        }
        other => Err(c.err(
            "injection_process",
            format!("BookSim2 has no injection process `{other}`: bernoulli or on_off"),
            None,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::keys::From;
    use super::super::map::tests::{toml, tr};

    #[test]
    fn rates_in_packets_or_flits_and_size_lists() {
        let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\n";
        let t = toml(&format!("{base}packet_size = 4;\ninjection_rate = 0.05;\n"));
        assert_eq!(t["traffic"]["load"].as_float(), Some(0.2));
        let t = toml(&format!(
            "{base}packet_size = 4;\ninjection_rate = 0.2;\ninjection_rate_uses_flits = 1;\n"
        ));
        assert_eq!(t["traffic"]["load"].as_float(), Some(0.2));
        let t = toml(&format!(
            "{base}packet_size = {{1,5}};\npacket_size_rate = {{3,1}};\ninjection_rate = 0.1;\n"
        ));
        // Mean size (3·1 + 1·5) / 4 = 2.
        assert_eq!(t["traffic"]["load"].as_float(), Some(0.2));
        assert_eq!(t["traffic"]["sizes"].as_array().unwrap().len(), 2);
        assert!(t["traffic"].get("packet_size").is_none());
    }

    #[test]
    fn on_off_from_alpha_beta_or_r1() {
        let base = "topology = mesh;\nk = 4;\nn = 2;\nrouting_function = dor;\ninjection_rate = 0.1;\n";
        let t = toml(&format!(
            "{base}injection_process = on_off;\nburst_alpha = 0.25;\nburst_beta = 0.5;\n"
        ));
        assert_eq!(t["traffic"]["injection"].as_str(), Some("on-off"));
        assert_eq!(t["traffic"]["on"].as_str(), Some("2 cycles"));
        assert_eq!(t["traffic"]["off"].as_str(), Some("4 cycles"));
        // β from α and r1: β = α (r1 - rate) / rate = 0.2 · 0.4 / 0.1.
        let t = toml(&format!("{base}injection_process = on_off(0.2,-1,0.5);\n"));
        assert_eq!(t["traffic"]["on"].as_str(), Some("1.25 cycles"));
        assert_eq!(t["traffic"]["off"].as_str(), Some("5 cycles"));
        let e = tr(&format!("{base}injection_process = on_off;\nburst_r1 = 0.5;\n")).unwrap_err();
        assert!(e.msg.contains("exactly two"), "{}", e.msg);
    }

    #[test]
    fn patterns() {
        let base = "topology = mesh;\nk = 8;\nn = 2;\nrouting_function = dor;\n";
        for (bs, reef) in [
            ("transpose", "transpose"),
            ("bitcomp", "bit-complement"),
            ("bitrev", "bit-reverse"),
            ("shuffle", "shuffle"),
            ("tornado", "tornado"),
            ("neighbor", "neighbour"),
            ("randperm", "permutation"),
        ] {
            let t = toml(&format!("{base}traffic = {bs};\n"));
            assert_eq!(t["traffic"]["pattern"].as_str(), Some(reef), "{bs}");
            assert!(t["traffic"].get("include_self").is_none(), "{bs}");
        }
        let t = toml(&format!("{base}traffic = hotspot({{0,9}});\n"));
        assert_eq!(t["traffic"]["pattern"].as_str(), Some("hot-spot"));
        assert_eq!(t["traffic"]["hot_fraction"].as_float(), Some(1.0));
        let bad = [
            ("traffic = hotspot({0,9},{1,2});", "different rates"),
            ("traffic = hotspot;", "needs its nodes"),
            ("traffic = hotspot({64});", "not a node from 0 to 63"),
            ("traffic = tornado(4,2);", "k = 4, n = 2"),
            ("traffic = diagonal;", "`diagonal` traffic pattern"),
            ("traffic = uniform(3);", "takes no parameters"),
        ];
        for (line, msg) in bad {
            let e = tr(&format!("{base}{line}\n")).unwrap_err();
            assert_eq!((e.key, e.from), ("traffic", Some(From::Line(5))), "{line}");
            assert!(e.msg.contains(msg), "{line}: {}", e.msg);
        }
        let e =
            tr("topology = mesh;\nk = 6;\nn = 2;\nrouting_function = dor;\ntraffic = bitrev;\n").unwrap_err();
        assert!(
            e.msg
                .contains("power-of-two number of nodes (this network has 36)"),
            "{}",
            e.msg
        );
    }
}

//! Irregular topologies read from a file: an edge list with ports.
//!
//! Format (one item per line, `#` starts a comment):
//!
//! ```text
//! s0:1 s1:0            # a link: one channel each way between switch 0 port 1 and switch 1 port 0
//! h0 s0:3              # host 0 (its only port, 0) to switch 0 port 3
//! s2:1 -> s3:0         # one channel only, from s2:1 to s3:0 (a non-symmetric connection)
//! s1:2 s2:0 latency=20ns buffer=16 vcs=2   # per-link overrides of the [channel] settings
//! s3:0 s4:1 cable=15ft # a Mosaic handshake over 15 ft: byte time ≥ 13 ns + 3 ns/ft × 15 ft
//! switch s4 ports=8    # declare a port count (default: highest port used + 1)
//! ```
//!
//! Switches are `s0 … s(S−1)` and hosts `h0 … h(H−1)`; every number in between must appear.
//! Every host needs a channel out and in on port 0, both to one switch port.

use super::{Fabric, FabricBuilder, FabricError, NodeId, Shape};
use crate::fabric::LinkParams;
use crate::fabric::SwitchParams;
use crate::time::{Quantity, Ratio, parse_quantity};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Switch(u32),
    Host(u32),
}

struct Edge {
    line: usize,
    a: (End, u16),
    b: (End, u16),
    both: bool,
    params: LinkParams,
}

fn parse_end(tok: &str) -> Result<(End, u16), String> {
    let (name, port) = match tok.split_once(':') {
        Some((n, p)) => (
            n,
            p.parse::<u16>()
                .ok()
                .filter(|&p| (p as usize) < crate::fabric::MAX_PORTS)
                .ok_or_else(|| {
                    format!(
                        "`{p}` in `{tok}` is not a port number (0 to {})",
                        crate::fabric::MAX_PORTS - 1
                    )
                })?,
        ),
        None => (tok, 0),
    };
    let num = |s: &str| s.parse::<u32>().ok();
    match name.split_at_checked(1) {
        Some(("s", n)) if num(n).is_some() => Ok((End::Switch(num(n).unwrap()), port)),
        Some(("h", n)) if num(n).is_some() => {
            if port != 0 {
                return Err(format!("hosts have one port, 0 (got `{tok}`)"));
            }
            Ok((End::Host(num(n).unwrap()), 0))
        }
        _ => Err(format!(
            "`{tok}` is not a node: expected s<number>[:port] or h<number>"
        )),
    }
}

fn parse_option(kv: &str, params: &mut LinkParams, cycle: Option<Ratio>) -> Result<(), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("`{kv}` is not an option (expected key=value)"))?;
    match k {
        "latency" => {
            let ps = match parse_quantity(v)? {
                Quantity::Duration(d) => d,
                Quantity::Cycles(n) => n.times(cycle.ok_or("`cycles` needs sim.clock in the config")?),
                q => return Err(format!("latency must be a duration, got {}", q.kind())),
            };
            params.latency = ps.round();
            if params.latency > crate::time::MAX_SPAN {
                return Err(format!("latency {v} is longer than reef's limit of 1000 s"));
            }
        }
        "buffer" => {
            let b: u64 = v
                .parse()
                .map_err(|_| format!("buffer must be a number of flits, got `{v}`"))?;
            params.buffer = super::check_buffer(b).map_err(|m| format!("buffer {m}"))?;
        }
        "vcs" => {
            params.vcs = v
                .parse()
                .ok()
                .filter(|&n| (1..=64).contains(&n))
                .ok_or_else(|| format!("vcs must be 1..=64, got `{v}`"))?
        }
        "cable" => {
            let mft = crate::fabric::parse_feet(v)
                .ok_or_else(|| format!("cable must be a length in feet, e.g. cable=2ft, got `{v}`"))?;
            *params = params.over_cable(crate::fabric::Handshake::MOSAIC, mft);
        }
        _ => {
            return Err(format!(
                "unknown option `{k}` (expected latency, buffer, vcs or cable)"
            ));
        }
    }
    Ok(())
}

/// Parses an irregular topology. `file` names the source in errors; `net` and `host` are the
/// default parameters of switch-to-switch and host channels; `cycle` is the declared clock
/// period [ps], if any, for `latency=… cycles`.
pub fn parse(
    file: &str,
    text: &str,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
    cycle: Option<Ratio>,
) -> Result<Fabric, FabricError> {
    let err = |line: usize, msg: String| FabricError::File {
        file: file.to_string(),
        line,
        msg,
    };
    let mut edges = Vec::new();
    let mut declared: Vec<(u32, u16, usize)> = Vec::new();
    // (A byte-order mark some editors write is not part of the first line.)
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let toks: Vec<&str> = body.split_whitespace().collect();
        if toks[0] == "switch" {
            let name = toks
                .get(1)
                .ok_or_else(|| err(line, "`switch` needs a name: switch s3 ports=8".into()))?;
            let (end, _) = parse_end(name).map_err(|m| err(line, m))?;
            let End::Switch(s) = end else {
                return Err(err(line, "only switches can declare ports".into()));
            };
            if name.contains(':') || toks.len() > 3 {
                return Err(err(
                    line,
                    format!("`{body}`: expected `switch s{s} ports=<number>` and nothing more"),
                ));
            }
            if let Some(&(_, _, first)) = declared.iter().find(|d| d.0 == s) {
                return Err(err(line, format!("s{s} is declared on line {first} already")));
            }
            let given = toks
                .get(2)
                .and_then(|t| t.strip_prefix("ports="))
                .ok_or_else(|| err(line, "expected `ports=<number>` after the switch name".into()))?;
            let ports = given.parse::<u64>().map_err(|_| {
                err(
                    line,
                    format!(
                        "`ports={given}`: a port count is a whole number from 1 to {}",
                        crate::fabric::MAX_PORTS
                    ),
                )
            })?;
            if ports as usize > crate::fabric::MAX_PORTS {
                return Err(err(
                    line,
                    format!(
                        "s{s} declares {ports} ports; reef supports up to {}",
                        crate::fabric::MAX_PORTS
                    ),
                ));
            }
            declared.push((s, ports as u16, line));
            continue;
        }
        let (both, rest) = if toks.get(1) == Some(&"->") {
            (false, 2)
        } else {
            (true, 1)
        };
        let b_tok = toks
            .get(rest)
            .ok_or_else(|| err(line, format!("`{body}` needs two ends: a:port b:port")))?;
        let a = parse_end(toks[0]).map_err(|m| err(line, m))?;
        let b = parse_end(b_tok).map_err(|m| err(line, m))?;
        if a.0 == b.0 {
            return Err(err(
                line,
                format!(
                    "`{body}` links {} to itself: a link joins two different nodes",
                    toks[0].split(':').next().unwrap_or(toks[0])
                ),
            ));
        }
        let is_host = |e: End| matches!(e, End::Host(_));
        if is_host(a.0) && is_host(b.0) {
            return Err(err(
                line,
                format!("`{body}` links two hosts: a host links to a switch port"),
            ));
        }
        let mut params = if is_host(a.0) || is_host(b.0) { host } else { net };
        let opts = &toks[rest + 1..];
        for (j, kv) in opts.iter().enumerate() {
            let key = kv.split('=').next().unwrap_or(kv);
            if opts[..j].iter().any(|o| o.split('=').next() == Some(key)) {
                return Err(err(line, format!("`{key}` is given twice")));
            }
            parse_option(kv, &mut params, cycle).map_err(|m| err(line, m))?;
        }
        edges.push(Edge {
            line,
            a,
            b,
            both,
            params,
        });
    }
    // Nodes are numbered from 0 without gaps and every link has two ends, so no number can
    // reach twice the links (checked before any table is sized by a number).
    let bound = 2 * edges.len() as u64;
    let ends = edges.iter().flat_map(|e| [(e.a.0, e.line), (e.b.0, e.line)]);
    let declared_ends = declared.iter().map(|&(s, _, line)| (End::Switch(s), line));
    for (end, line) in ends.chain(declared_ends) {
        let (kind, n) = match end {
            End::Switch(s) => ('s', s),
            End::Host(h) => ('h', h),
        };
        if n as u64 >= bound {
            return Err(err(
                line,
                format!(
                    "`{kind}{n}`: nodes are numbered from 0 without gaps, and {} links cannot reach that number",
                    edges.len()
                ),
            ));
        }
    }
    // A host's channels out and in go to one switch (the engine's host sits on one).
    // Per host: the switch port of its first link, and that link's line.
    let mut host_sw: Vec<Option<(u32, u16, usize)>> = Vec::new();
    for e in &edges {
        let (h, s) = match (e.a.0, e.b.0) {
            (End::Host(h), End::Switch(s)) | (End::Switch(s), End::Host(h)) => (h, s),
            _ => continue,
        };
        if host_sw.len() <= h as usize {
            host_sw.resize(h as usize + 1, None);
        }
        let port = if matches!(e.a.0, End::Switch(_)) {
            e.a.1
        } else {
            e.b.1
        };
        if let Some((s0, port0, line0)) = host_sw[h as usize]
            && (s0, port0) != (s, port)
        {
            return Err(err(
                e.line,
                format!(
                    "h{h} links to s{s}:{port} here and to s{s0}:{port0} on line {line0}: a host's \
                     channels out and in both go to one switch port"
                ),
            ));
        }
        host_sw[h as usize].get_or_insert((s, port, e.line));
    }
    let mut nsw = 0u32;
    let mut nhost = 0u32;
    let mut max_port: Vec<u16> = Vec::new();
    let mut seen_sw: Vec<bool> = Vec::new();
    let mut seen_host: Vec<bool> = Vec::new();
    let mut note = |e: (End, u16)| match e.0 {
        End::Switch(s) => {
            nsw = nsw.max(s + 1);
            if max_port.len() < nsw as usize {
                max_port.resize(nsw as usize, 0);
                seen_sw.resize(nsw as usize, false);
            }
            max_port[s as usize] = max_port[s as usize].max(e.1 + 1);
            seen_sw[s as usize] = true;
        }
        End::Host(h) => {
            nhost = nhost.max(h + 1);
            if seen_host.len() < nhost as usize {
                seen_host.resize(nhost as usize, false);
            }
            seen_host[h as usize] = true;
        }
    };
    for e in &edges {
        note(e.a);
        note(e.b);
    }
    for &(s, ports, line) in &declared {
        if s >= nsw || !seen_sw[s as usize] {
            return Err(err(line, format!("switch s{s} is declared but never linked")));
        }
        if ports < max_port[s as usize] {
            return Err(err(
                line,
                format!(
                    "s{s} declares {ports} ports but port {} is used",
                    max_port[s as usize] - 1
                ),
            ));
        }
        max_port[s as usize] = ports;
    }
    if nhost == 0 {
        return Err(err(0, "the topology has no hosts (h0 …)".into()));
    }
    if let Some(s) = seen_sw.iter().position(|&x| !x) {
        return Err(err(
            0,
            format!("switches are numbered s0…s{}, but s{s} never appears", nsw - 1),
        ));
    }
    if let Some(h) = seen_host.iter().position(|&x| !x) {
        return Err(err(
            0,
            format!("hosts are numbered h0…h{}, but h{h} never appears", nhost - 1),
        ));
    }
    if let Some((s, &p)) = max_port.iter().enumerate().max_by_key(|x| x.1) {
        super::check_radix(p as u64).map_err(|e| err(0, format!("s{s}: {e}")))?;
    }
    let mut fb = FabricBuilder::new(&max_port, nhost);
    let node = |e: End| match e {
        End::Switch(s) => NodeId(s),
        End::Host(h) => NodeId(nsw + h),
    };
    for e in &edges {
        let (a, pa, b, pb) = (node(e.a.0), e.a.1, node(e.b.0), e.b.1);
        let r = if e.both {
            fb.link(a, pa, b, pb, e.params)
        } else {
            fb.channel(a, pa, b, pb, e.params).map(|_| ())
        };
        r.map_err(|x| err(e.line, x.to_string()))?;
    }
    fb.build(sw, Shape::Irregular).map_err(|x| err(0, x.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RING3: &str = "\
# a ring of three switches, one host each
s0:0 s1:1
s1:0 s2:1
s2:0 s0:1 latency=5ns
h0 s0:2
h1 s1:2
h2 s2:2
";

    fn p() -> LinkParams {
        LinkParams::default()
    }

    #[test]
    fn parses_a_ring() {
        let f = parse("ring.txt", RING3, p(), p(), SwitchParams::default(), None).unwrap();
        assert_eq!(f.switches, 3);
        assert_eq!(f.num_hosts(), 3);
        assert_eq!(f.channels.len(), 12);
        let c = f.out_chan[2][0].unwrap();
        assert_eq!(f.channels[c.idx()].params.latency, 5_000);
    }

    /// The error `parse` gives for topology file `text` (named x.txt).
    fn parse_err(text: &str) -> String {
        parse("x.txt", text, p(), p(), SwitchParams::default(), None)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse_err("s0:0 s1:0\nh0 s0:1\nq7 s1:1\n");
        assert!(e.starts_with("x.txt:3: `q7` is not a node"), "{e}");
        let e = parse_err("s0:0 s1:0\nh0 s0:1\nh1 s0:1\n");
        assert!(e.contains("x.txt:3:") && e.contains("twice"), "{e}");
        let e = parse_err("s0:0 s2:0\nh0 s0:1\n");
        assert!(e.contains("s1 never appears"), "{e}");
        let e = parse_err("s0:0 s1:0 speed=3\nh0 s0:1\n");
        assert!(e.contains("unknown option `speed`"), "{e}");
    }

    /// Found by fuzzing configs: each of these once got through the parser and then
    /// panicked, corrupted memory or stopped the run with an engine invariant.
    #[test]
    fn rejects_what_the_engine_cannot_hold() {
        // (text, how its error starts)
        let cases = [
            ("h0 h1\nh2 s0:0\nh3 s0:1\n", "x.txt:1: `h0 h1` links two hosts"),
            (
                "s0:1 s1:3\nh0 -> s1:2\ns0:4 -> h0\n",
                "x.txt:3: h0 links to s0:4 here and to s1:2 on line 2",
            ),
            (
                "h0 s0:0\nh1 s1:0\ns0:1 s1:1 buffer=2147483649\n",
                "x.txt:3: buffer must be 1..=1048576 flits, got 2147483649",
            ),
            ("h0 s0:0 buffer=0\nh1 s0:1\n", "x.txt:1: buffer must be 1..="),
            // Lines that said more than was read, or twice.
            (
                "h0 s0:0\nh1 s0:1 latency=1e30ns\n",
                "x.txt:2: latency 1e30ns is longer than",
            ),
            (
                "h0 s0:0\nh1 s0:1 latency=5ns latency=7ns\n",
                "x.txt:2: `latency` is given twice",
            ),
            (
                "switch s0:3 ports=4 garbage\nh0 s0:0\n",
                "x.txt:1: `switch s0:3 ports=4 garbage`: expected",
            ),
            (
                "switch s0 ports=4\nswitch s0 ports=8\nh0 s0:0\n",
                "x.txt:2: s0 is declared on line 1 already",
            ),
        ];
        for (text, want) in cases {
            let e = parse_err(text);
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        // A byte-order mark before the first line is not part of it.
        let f = parse(
            "x.txt",
            "\u{feff}h0 s0:0\nh1 s0:1\n",
            p(),
            p(),
            SwitchParams::default(),
            None,
        );
        assert_eq!(f.unwrap().num_hosts(), 2);
        // Both directions to one switch port, on one line or two, are one host link.
        let f = parse(
            "x.txt",
            "h0 -> s0:0\ns0:0 -> h0\nh1 s0:1\n",
            p(),
            p(),
            SwitchParams::default(),
            None,
        )
        .unwrap();
        assert_eq!(f.num_hosts(), 2);
    }

    #[test]
    fn one_way_channels() {
        let f = parse(
            "y.txt",
            "s0:0 -> s1:0\ns1:1 -> s0:1\nh0 s0:2\nh1 s1:2\n",
            p(),
            p(),
            SwitchParams::default(),
            None,
        )
        .unwrap();
        assert_eq!(f.channels.iter().filter(|c| c.reverse.is_none()).count(), 2);
    }
}

//! BookSim2's `anynet`: a network read from a file in BookSim2's own format
//! (`src/networks/anynet.cpp` of booksim/booksim2, commit 28f43299), built with BookSim2's
//! port numbering and link latencies.
//!
//! Each line names a router or node, then what it is linked to:
//!
//! ```text
//! router 0 node 0 node 1 router 1        router 0 has nodes 0 and 1 and a link to router 1
//! router 2 router 0 5 router 1           a 5-cycle channel from router 2 to router 0
//! ```
//!
//! A link between routers is a channel each way: a number after `router R` is the latency
//! of the channel from the line's router to R (its credits take as long), and the channel
//! back takes 1 cycle unless its own line gives it a weight. Channels into and out of
//! nodes take 1 cycle. Routers and nodes are numbered from 0 without gaps; a node sits on
//! one router. As in BookSim2, a router's ports are its nodes in increasing number, then
//! the routers it links to in increasing number (the same number in and out); the number
//! at the head of a line makes a router of that number, whatever the line says it is.
//!
//! reef refuses what BookSim2 misreads or stops on, naming the file and line: a word that
//! is not `router`, `node` or a whole number (BookSim2 asserts, or reads it as 0), a weight
//! after a node (BookSim2 sets the latency of a channel to the router with that node's
//! number, not the node's), a weight below 1 (BookSim2: "Channel must have positive
//! delay"), a router linked to itself, a node on two routers, and numbers with gaps. Tabs
//! and carriage returns separate words too (BookSim2 splits on spaces only).
//!
//! In reef a weight `w` adds `w − 1` cycles to the `[channel]` latency and credit delay:
//! weight 1 is the channel as configured. [`Shape::AnyNet`] keeps the weights for
//! BookSim2's shortest-path routing ([`crate::routing::table::anynet_min`]).

use super::{Fabric, FabricBuilder, FabricError, Shape, check_radix};
use crate::fabric::SwitchParams;
use crate::fabric::{FlowControl, LinkParams};
use crate::time::Ratio;
use std::collections::{BTreeMap, BTreeSet};

/// Most routers or nodes a file may number (each takes a line's worth of memory at most).
const MAX_ID: u32 = 1 << 20;

/// A network as BookSim2 reads it from an anynet file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnyNet {
    /// Per router: its nodes, in increasing number.
    pub nodes: Vec<Vec<u32>>,
    /// Per router: the routers it has a channel to, with that channel's weight [cycles], in
    /// increasing router number.
    pub links: Vec<BTreeMap<u32, u32>>,
    /// Host count (nodes are `0..hosts`).
    pub hosts: u32,
}

/// Reads BookSim2's anynet format (`file` names it in errors).
pub fn read(file: &str, text: &str) -> Result<AnyNet, FabricError> {
    let err = |line: usize, msg: String| FabricError::File {
        file: file.to_string(),
        line,
        msg,
    };
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Router,
        Node,
    }
    // Router number → what it has, and the line it first appeared on.
    #[derive(Default)]
    struct Router {
        nodes: BTreeSet<u32>,
        links: BTreeMap<u32, u32>,
        line: usize,
    }
    let mut routers: BTreeMap<u32, Router> = BTreeMap::new();
    let make = |line| Router {
        line,
        ..Router::default()
    };
    // Node number → (router, line).
    let mut node_at: BTreeMap<u32, (u32, usize)> = BTreeMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let toks: Vec<&str> = raw.split_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        let kind = |t: &str, what: &str| match t {
            "router" => Ok(Kind::Router),
            "node" => Ok(Kind::Node),
            _ => Err(err(
                line,
                format!(
                    "`{t}`: expected `router` or `node` {what} (BookSim2's anynet format: router 0 node 0 router 1 …)"
                ),
            )),
        };
        let number = |t: &str, of: &str| {
            t.parse::<u32>().ok().filter(|&v| v < MAX_ID).ok_or_else(|| {
                err(
                    line,
                    format!("`{t}` after `{of}` is not a number from 0 to {}", MAX_ID - 1),
                )
            })
        };
        let head_kind = kind(toks[0], "at the start of a line")?;
        let head_word = toks[0];
        let head = number(
            toks.get(1)
                .ok_or_else(|| err(line, format!("`{head_word}` needs its number")))?,
            head_word,
        )?;
        // BookSim2 makes a router of every head number, a node's too.
        routers.entry(head).or_insert_with(|| make(line));
        let mut j = 2;
        while j < toks.len() {
            let body_kind = kind(toks[j], "or a link weight")?;
            let body = number(
                toks.get(j + 1).ok_or_else(|| {
                    err(
                        line,
                        format!("`{}` at the end of the line needs its number", toks[j]),
                    )
                })?,
                toks[j],
            )?;
            j += 2;
            let weight = match toks.get(j) {
                Some(t) if *t != "router" && *t != "node" => {
                    j += 1;
                    let w = t.parse::<i64>().map_err(|_| {
                        err(
                            line,
                            format!(
                                "`{t}` is not a link weight (a whole number of cycles) or `router`/`node`"
                            ),
                        )
                    })?;
                    if !(1..=1_000_000).contains(&w) {
                        return Err(err(
                            line,
                            format!(
                                "link weight {w}: a channel takes 1 to 1000000 cycles (BookSim2 refuses 0 and less)"
                            ),
                        ));
                    }
                    Some(w as u32)
                }
                _ => None,
            };
            match (head_kind, body_kind) {
                (Kind::Node, Kind::Node) => {
                    return Err(err(
                        line,
                        format!("node {head} is linked to node {body}: a node links to a router"),
                    ));
                }
                (Kind::Router, Kind::Router) => {
                    if body == head {
                        return Err(err(line, format!("router {head} is linked to itself")));
                    }
                    routers.entry(body).or_insert_with(|| make(line));
                    // Each mention sets the weight (1 unless given); the channel back is
                    // made with weight 1 if it is not there yet.
                    routers
                        .get_mut(&head)
                        .expect("made above")
                        .links
                        .insert(body, weight.unwrap_or(1));
                    routers
                        .get_mut(&body)
                        .expect("made above")
                        .links
                        .entry(head)
                        .or_insert(1);
                }
                (hk, _) => {
                    if let Some(w) = weight {
                        return Err(err(
                            line,
                            format!(
                                "link weight {w} after a node: BookSim2 would set the latency of a channel \
                                 to router {body} instead (anynet.cpp indexes it by the line's head), and \
                                 keeps a node's channels at 1 cycle"
                            ),
                        ));
                    }
                    let (r, n) = if hk == Kind::Router {
                        (head, body)
                    } else {
                        (body, head)
                    };
                    if let Some(&(r0, l0)) = node_at.get(&n)
                        && r0 != r
                    {
                        return Err(err(
                            line,
                            format!(
                                "node {n} is on router {r} here and on router {r0} on line {l0}: a node sits on one router"
                            ),
                        ));
                    }
                    node_at.entry(n).or_insert((r, line));
                    routers.entry(r).or_insert_with(|| make(line)).nodes.insert(n);
                }
            }
        }
    }
    if routers.is_empty() {
        return Err(err(
            0,
            "no routers: expected lines such as `router 0 node 0 router 1`".into(),
        ));
    }
    if node_at.is_empty() {
        return Err(err(
            0,
            "no nodes: a router's line lists them (`router 0 node 0 node 1`)".into(),
        ));
    }
    for (what, ids) in [
        ("routers", routers.keys().copied().collect::<Vec<_>>()),
        ("nodes", node_at.keys().copied().collect::<Vec<_>>()),
    ] {
        if let Some(gap) = ids.iter().enumerate().position(|(i, &v)| v != i as u32) {
            return Err(err(
                0,
                format!(
                    "{what} are numbered from 0 without gaps, as BookSim2 needs: {} is missing (the highest is {})",
                    gap,
                    ids[ids.len() - 1]
                ),
            ));
        }
    }
    let net = AnyNet {
        nodes: routers
            .values()
            .map(|r| r.nodes.iter().copied().collect())
            .collect(),
        links: routers.values().map(|r| r.links.clone()).collect(),
        hosts: node_at.len() as u32,
    };
    // BookSim2's routing needs every router to reach every other (else it loops for ever).
    let n = net.links.len();
    for from in 0..n {
        let mut seen = vec![false; n];
        let mut stack = vec![from];
        seen[from] = true;
        while let Some(r) = stack.pop() {
            for &q in net.links[r].keys() {
                if !seen[q as usize] {
                    seen[q as usize] = true;
                    stack.push(q as usize);
                }
            }
        }
        if let Some(to) = seen.iter().position(|s| !s) {
            let line = routers[&(to as u32)].line;
            return Err(err(
                line,
                format!(
                    "router {to} (first named here) cannot be reached from router {from}: BookSim2's min \
                     routing needs a path between every two routers"
                ),
            ));
        }
    }
    for (r, (nodes, links)) in net.nodes.iter().zip(&net.links).enumerate() {
        check_radix((nodes.len() + links.len()) as u64)
            .map_err(|e| err(routers[&(r as u32)].line, format!("router {r}: {e}")))?;
    }
    Ok(net)
}

impl AnyNet {
    /// The port of router `r` that leads to router `q` (and comes from it).
    pub fn port_to(&self, r: u32, q: u32) -> Option<u16> {
        let links = &self.links[r as usize];
        links
            .contains_key(&q)
            .then(|| (self.nodes[r as usize].len() + links.range(..q).count()) as u16)
    }

    /// Builds the fabric: `net` for channels between routers, each `w − 1` cycles (of
    /// `cycle` ps) longer than configured, and `host` for nodes.
    pub fn fabric(
        &self,
        file: &str,
        net: LinkParams,
        host: LinkParams,
        sw: SwitchParams,
        cycle: Ratio,
    ) -> Result<Fabric, FabricError> {
        let ports: Vec<u16> = self
            .nodes
            .iter()
            .zip(&self.links)
            .map(|(n, l)| (n.len() + l.len()) as u16)
            .collect();
        let mut b = FabricBuilder::new(&ports, self.hosts);
        let mut weight = Vec::new();
        for (r, nodes) in self.nodes.iter().enumerate() {
            for (p, &h) in nodes.iter().enumerate() {
                b.link(b.host(h), 0, b.switch(r as u32), p as u16, host)?;
                weight.extend([1, 1]);
            }
        }
        for (r, links) in self.links.iter().enumerate() {
            let r = r as u32;
            for (&q, &w) in links {
                let extra = Ratio::int(u128::from(w - 1)).times(cycle).round();
                let mut params = net;
                params.latency += extra;
                if let FlowControl::Credit { delay } = &mut params.flow {
                    *delay += extra;
                }
                if params.latency > crate::time::MAX_SPAN {
                    return Err(FabricError::File {
                        file: file.to_string(),
                        line: 0,
                        msg: format!(
                            "the channel from router {r} to {q} (weight {w}) is longer than reef's limit of 1000 s"
                        ),
                    });
                }
                let (pa, pb) = (
                    self.port_to(r, q).expect("a link"),
                    self.port_to(q, r).expect("links go both ways"),
                );
                b.channel(b.switch(r), pa, b.switch(q), pb, params)?;
                weight.push(w);
            }
        }
        b.build(sw, Shape::AnyNet { weight })
    }
}

/// Reads an anynet file and builds its fabric ([`read`], [`AnyNet::fabric`]).
pub fn parse(
    file: &str,
    text: &str,
    net: LinkParams,
    host: LinkParams,
    sw: SwitchParams,
    cycle: Ratio,
) -> Result<Fabric, FabricError> {
    read(file, text)?.fabric(file, net, host, sw, cycle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BookSim2's example (`examples/anynet/anynet_file`).
    const TRIANGLE: &str = "router 0 node 0 node 1 node 2 router 1\n\
                            router 1 node 3 node 4 node 5\n\
                            router 2 node 6 node 7 node 8 router 1 router 0\n";

    fn cycle() -> Ratio {
        Ratio::int(1000)
    }

    #[test]
    fn booksims_example() {
        let a = read("f", TRIANGLE).unwrap();
        assert_eq!(a.hosts, 9);
        assert_eq!(a.nodes[2], vec![6, 7, 8]);
        // Router 0 links to 1 (its own line) and 2 (router 2's line, the channel back).
        assert_eq!(a.links[0].keys().copied().collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(a.links[1].keys().copied().collect::<Vec<_>>(), vec![0, 2]);
        // Ports: nodes first, then routers in increasing number.
        assert_eq!(
            (a.port_to(0, 1), a.port_to(0, 2), a.port_to(2, 0)),
            (Some(3), Some(4), Some(3))
        );
        let p = LinkParams::default();
        let f = a.fabric("f", p, p, SwitchParams::default(), cycle()).unwrap();
        assert_eq!((f.switches, f.num_hosts()), (3, 9));
        assert_eq!(f.host_switch(4), (crate::fabric::NodeId(1), 1));
        assert_eq!(f.channels.len(), 18 + 6);
    }

    #[test]
    fn weights_are_one_way_and_lengthen_the_channel() {
        let a = read("f", "router 0 node 0 router 1 5\nrouter 1 node 1\n").unwrap();
        assert_eq!((a.links[0][&1], a.links[1][&0]), (5, 1));
        // Given again later, the channel back takes its own weight.
        let a = read("f", "router 0 node 0 router 1 5\nrouter 1 node 1 router 0 3\n").unwrap();
        assert_eq!((a.links[0][&1], a.links[1][&0]), (5, 3));
        let p = LinkParams::default();
        let f = a.fabric("f", p, p, SwitchParams::default(), cycle()).unwrap();
        let c = f.out_chan[0][1].unwrap();
        assert_eq!(f.channels[c.idx()].params.latency, p.latency + 4000);
        assert_eq!(
            f.shape,
            Shape::AnyNet {
                weight: vec![1, 1, 1, 1, 5, 3]
            }
        );
    }

    #[test]
    fn errors_name_the_line() {
        for (text, want) in [
            (
                "router 0 node 0\nswitch 1 node 1\n",
                "f:2: `switch`: expected `router` or `node`",
            ),
            ("router 0 node 0 node 1 3\n", "f:1: link weight 3 after a node"),
            (
                "router 0 node 0 router 1 0\nrouter 1 node 1\n",
                "f:1: link weight 0",
            ),
            (
                "router 0 node 0\nrouter 1 node 0\n",
                "f:2: node 0 is on router 1 here and on router 0 on line 1",
            ),
            (
                "router 0 node 0 node\n",
                "f:1: `node` at the end of the line needs its number",
            ),
            ("router 0 node x\n", "f:1: `x` after `node` is not a number"),
            ("router 0 node 0 router 0\n", "f:1: router 0 is linked to itself"),
            (
                "router 0 node 0 router 2\n",
                "f: routers are numbered from 0 without gaps",
            ),
            (
                "router 0 node 1 router 1\n",
                "f: nodes are numbered from 0 without gaps",
            ),
            (
                "router 0 node 0\nrouter 1 node 1\n",
                "f:2: router 1 (first named here) cannot be reached",
            ),
            ("node 0 node 1\n", "f:1: node 0 is linked to node 1"),
        ] {
            let e = read("f", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_node_line_makes_a_router_of_its_number() {
        // `node 1 router 0`: BookSim2 makes router 1 too (unlinked here: refused).
        let e = read("f", "router 0 node 0\nnode 1 router 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("router 1 (first named here) cannot be reached"), "{e}");
        let a = read("f", "router 0 node 0 router 1\nnode 1 router 1\n").unwrap();
        assert_eq!(a.nodes, vec![vec![0], vec![1]]);
    }

    fn word() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just("router".to_string()),
            Just("node".to_string()),
            (0u32..6).prop_map(|v| v.to_string()),
            prop::sample::select(vec!["-1", "0", "x", "99999999999", "\t"]).prop_map(str::to_string),
        ]
    }

    proptest::proptest! {
        /// Any file of anynet words is read or refused (naming a line, or the file as a
        /// whole), never a panic; what is read builds a fabric and its min routing
        /// reaches every host from every host.
        #[test]
        fn any_words_are_read_or_refused(
            lines in proptest::collection::vec(proptest::collection::vec(word(), 0..8), 0..6),
            shaped in proptest::collection::vec((0u32..4, proptest::collection::vec((proptest::bool::ANY, 0u32..5, 0u32..4), 0..4)), 0..6),
            free in proptest::bool::ANY,
        ) {
            // Free words, or lines shaped as BookSim2's (`router R` then `node N` or
            // `router Q [w]`), which are mostly valid.
            let text: String = if free {
                lines.iter().map(|l| l.join(" ") + "\n").collect()
            } else {
                let mut next_node = 0;
                let routers = shaped.len() as u32;
                shaped
                    .iter()
                    .enumerate()
                    .map(|(i, (r, body))| {
                        // Mostly line i is router i; now and then a number seen already.
                        let head = if *r == 0 { i as u32 / 2 } else { i as u32 };
                        let mut l = format!("router {head}");
                        for (is_node, id, w) in body {
                            if *is_node {
                                // Nodes in order, now and then one seen already.
                                let n = if *id == 0 && next_node > 0 { next_node - 1 } else { next_node };
                                next_node = next_node.max(n + 1);
                                l += &format!(" node {n}");
                            } else {
                                let id = id % routers.max(1);
                                l += &format!(" router {id}");
                                if *w > 1 {
                                    l += &format!(" {w}");
                                }
                            }
                        }
                        l + "\n"
                    })
                    .collect()
            };
            match read("f", &text) {
                Err(e) => proptest::prop_assert!(e.to_string().starts_with("f")),
                Ok(a) => {
                    let p = LinkParams::default();
                    let f = a.fabric("f", p, p, SwitchParams::default(), cycle()).unwrap();
                    let t = crate::routing::table::anynet_min(&f).unwrap();
                    for s in 0..a.hosts {
                        for d in 0..a.hosts {
                            let (mut sw, _) = f.host_switch(s);
                            let mut reached = false;
                            for _ in 0..=f.switches {
                                let at = crate::routing::At { switch: sw.0, in_port: 0, in_vc: 0, in_class: 0 };
                                let w = t.route(at, crate::routing::Header::dst(d)).unwrap();
                                let c = f.out_chan[sw.idx()][w.ports.first().unwrap() as usize].unwrap();
                                let to = f.channels[c.idx()].dst;
                                if let Some(h) = f.host_of(to) {
                                    proptest::prop_assert_eq!(h, d);
                                    reached = true;
                                    break;
                                }
                                sw = to;
                            }
                            proptest::prop_assert!(reached, "{s} → {d} loops in {text:?}");
                        }
                    }
                }
            }
        }
    }
}

//! The static description of a network: nodes (switches and hosts), their numbered ports,
//! and the unidirectional channels between ports, each with its own timing and flow control.
//!
//! Topology builders ([`mesh`], [`clos`], [`fattree`], [`full`], [`fly`], [`irregular`],
//! [`anynet`], [`cmesh`], [`flatfly`], [`dragonfly`]) make a [`Fabric`]; the engine flattens it into
//! arrays. Node numbering is the same for every builder: switches first (`0..switches`),
//! then hosts, so host `h` is node
//! `switches + h` and host numbers are the destination addresses packets carry.

pub mod anynet;
pub mod atoll;
pub mod clos;
pub mod cmesh;
pub mod dragonfly;
pub mod fattree;
pub mod flatfly;
pub mod fly;
pub mod full;
pub mod grid;
pub mod irregular;
pub mod mesh;
pub mod mosaic;
mod params;

pub use params::{
    Arbitration, FlowControl, Handshake, LinkParams, Selection, SwAllocator, SwitchMode, SwitchParams,
    VcAllocator, VcChoice, VcRelease, parse_feet,
};
use std::fmt;

/// Most ports a switch may have (the width of the routing layer's port sets,
/// [`crate::routing::PortSet`]).
pub const MAX_PORTS: usize = 128;

/// A node of the fabric (switch or host), numbered from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct NodeId(pub u32);

/// A unidirectional channel, numbered from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct ChannelId(pub u32);

impl NodeId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl ChannelId {
    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Switch,
    /// A buffer stage after a switch output (an output FIFO): one input, one output, no
    /// routing delay; packets pass through on the VC they came in on.
    Stage,
    /// A host (traffic source and sink) with its host number.
    Host(u32),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    pub name: String,
    pub ports: u16,
}

/// One unidirectional channel from `src:src_port` to `dst:dst_port`.
#[derive(Clone, Debug)]
pub struct Channel {
    pub src: NodeId,
    pub src_port: u16,
    pub dst: NodeId,
    pub dst_port: u16,
    pub params: LinkParams,
    /// The channel in the opposite direction between the same two ports, if any.
    pub reverse: Option<ChannelId>,
}

/// What the builder knows about the arrangement of the nodes; traffic patterns and
/// dimension-order routing use it.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// k-ary n-cube: `k[d]` switches along dimension `d` (dimension 0 varies fastest),
    /// `wrap` for a torus, `conc` hosts per switch.
    Cube { k: Vec<u32>, wrap: bool, conc: u32 },
    /// Two-level folded Clos (leaf/spine).
    Clos {
        leaves: u32,
        hosts_per_leaf: u32,
        spines: u32,
        links_per_pair: u32,
    },
    /// k-ary n-tree (a fat tree): `n` levels of `k^(n-1)` switches.
    FatTree { k: u32, n: u32 },
    /// BookSim2's k-ary n-tree ([`fattree`]): `n` levels of `k^(n-1)` switches, the top
    /// level (`k` ports each) numbered first.
    BookSimFatTree { k: u32, n: u32 },
    /// k-ary n-fly (a butterfly, [`fly`]): `n` stages of `k^(n-1)` switches; a host sends
    /// into stage 0 and receives from stage `n - 1`.
    Fly { k: u32, n: u32 },
    /// BookSim2's anynet ([`anynet`]): each channel's link weight (1 into and out of hosts),
    /// by channel number, for its shortest-path routing.
    AnyNet { weight: Vec<u32> },
    /// BookSim2's concentrated mesh ([`cmesh`]): `k × k` routers of four nodes each, with
    /// express channels along the edges.
    CMesh { k: u32 },
    /// BookSim2's on-chip flattened butterfly ([`flatfly`]): `k^n` routers of `xr × xr`
    /// nodes each, laid out `x` to a row.
    FlatFly { k: u32, n: u32, xr: u32, x: u32 },
    /// BookSim2's dragonfly ([`dragonfly`]): `p` nodes a router, groups of `2p` routers,
    /// `p` global channels a router, `2p² + 1` groups.
    Dragonfly { p: u32 },
    /// Every switch linked to every other; `conc` hosts per switch.
    Full { switches: u32, conc: u32 },
    /// A K×K grid (or torus) of switches with `conc` hosts each and `group` parallel links
    /// to each neighbour ([`grid`], the Macramé grid).
    Grid {
        k: u32,
        wrap: bool,
        conc: u32,
        group: u32,
    },
    /// Anything read from a file.
    Irregular,
}

impl Shape {
    /// A folded Clos's (leaves, hosts per leaf, spines, links per leaf-spine pair).
    pub fn clos_dims(&self) -> Option<(u32, u32, u32, u32)> {
        match *self {
            Shape::Clos {
                leaves,
                hosts_per_leaf,
                spines,
                links_per_pair,
            } => Some((leaves, hosts_per_leaf, spines, links_per_pair)),
            _ => None,
        }
    }
}

/// A complete static network.
#[derive(Clone, Debug)]
pub struct Fabric {
    pub nodes: Vec<Node>,
    pub channels: Vec<Channel>,
    /// Host number → node.
    pub hosts: Vec<NodeId>,
    /// Number of switch-like nodes (switches, then buffer stages): nodes `0..switches`.
    pub switches: u32,
    /// Nodes `stage_base..switches` are buffer stages (equal to `switches` when none).
    pub stage_base: u32,
    /// Per node and port: the channel leaving that port.
    pub out_chan: Vec<Vec<Option<ChannelId>>>,
    /// Per node and port: the channel arriving at that port.
    pub in_chan: Vec<Vec<Option<ChannelId>>>,
    /// Per node (switches; hosts hold a copy that is not used).
    pub switch_params: Vec<SwitchParams>,
    /// Which free VC a head (and a host's packet) is given, in every switch and host.
    pub vc_choice: VcChoice,
    /// How long after a tail starts on a switch's output VC another packet's head may start
    /// on it [ps] (0: as soon as the tail has passed); see `switch.vc_reuse_delay`.
    pub vc_reuse: crate::time::Time,
    /// The least time a flit spends in a switch's input buffer, from landing to leaving
    /// [ps]; see `switch.flit_delay`.
    pub flit_delay: crate::time::Time,
    /// How many times a cycle a switch allocates its crossbar (1 or 2); see
    /// `switch.internal_speedup`.
    pub internal_speedup: u32,
    /// How many flits a cycle a switch output takes from the crossbar (1 or more); see
    /// `switch.output_speedup`.
    pub output_speedup: u32,
    /// How switches whose inputs share the crossbar allocate it.
    pub sw_allocator: SwAllocator,
    /// How switches give free output VCs to waiting heads.
    pub vc_allocator: VcAllocator,
    pub shape: Shape,
}

/// Why a fabric could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    /// A port number is not below the node's port count.
    #[error("{node} has {ports} ports; port {port} does not exist")]
    NoSuchPort { node: String, ports: u16, port: u16 },
    /// Two channels leave (or arrive at) the same port.
    #[error("port {node}:{port} is connected twice ({dir})")]
    PortInUse {
        node: String,
        port: u16,
        dir: &'static str,
    },
    /// The topology parameters describe no valid network.
    #[error("impossible topology: {0}")]
    Impossible(String),
    /// An irregular-topology file has a bad line (`line` 0: the file as a whole).
    #[error("{}: {msg}", if *line == 0 { file.clone() } else { format!("{file}:{line}") })]
    File { file: String, line: usize, msg: String },
    /// A host is not connected both ways.
    #[error("host {0} must have one channel out and one channel in on port 0")]
    HostNotAttached(String),
}

/// Most flits a buffer may hold (a VC's input buffer, an output FIFO, a link's `buffer=`).
pub const MAX_BUFFER: u32 = 1 << 20;

/// Rejects a buffer size outside `1..=MAX_BUFFER` flits.
pub fn check_buffer(flits: u64) -> Result<u32, String> {
    match u32::try_from(flits) {
        Ok(b) if (1..=MAX_BUFFER).contains(&b) => Ok(b),
        _ => Err(format!("must be 1..={MAX_BUFFER} flits, got {flits}")),
    }
}

/// Rejects switches with more ports than routing can address ([`MAX_PORTS`]).
pub fn check_radix(ports: u64) -> Result<(), FabricError> {
    if ports > MAX_PORTS as u64 {
        return Err(FabricError::Impossible(format!(
            "a switch would have {ports} ports; reef supports up to {}",
            MAX_PORTS
        )));
    }
    Ok(())
}

/// Builds a [`Fabric`] node by node and link by link, checking ports.
pub struct FabricBuilder {
    nodes: Vec<Node>,
    channels: Vec<Channel>,
    out_chan: Vec<Vec<Option<ChannelId>>>,
    in_chan: Vec<Vec<Option<ChannelId>>>,
    switches: u32,
    hosts: u32,
}

impl FabricBuilder {
    /// A builder for `switches` switches (nodes `0..switches`, named `s<i>`, each with the
    /// given port count) and `hosts` hosts (nodes after them, named `h<i>`, one port each).
    pub fn new(switch_ports: &[u16], hosts: u32) -> FabricBuilder {
        let mut b = FabricBuilder {
            nodes: Vec::new(),
            channels: Vec::new(),
            out_chan: Vec::new(),
            in_chan: Vec::new(),
            switches: switch_ports.len() as u32,
            hosts,
        };
        for (i, &p) in switch_ports.iter().enumerate() {
            b.push_node(NodeKind::Switch, format!("s{i}"), p);
        }
        for h in 0..hosts {
            b.push_node(NodeKind::Host(h), format!("h{h}"), 1);
        }
        b
    }

    fn push_node(&mut self, kind: NodeKind, name: String, ports: u16) {
        self.nodes.push(Node { kind, name, ports });
        self.out_chan.push(vec![None; ports as usize]);
        self.in_chan.push(vec![None; ports as usize]);
    }

    pub fn switch(&self, i: u32) -> NodeId {
        NodeId(i)
    }

    pub fn host(&self, h: u32) -> NodeId {
        NodeId(self.switches + h)
    }

    pub fn node_name(&self, n: NodeId) -> &str {
        &self.nodes[n.idx()].name
    }

    fn check_port(&self, n: NodeId, port: u16) -> Result<(), FabricError> {
        let node = &self.nodes[n.idx()];
        if port >= node.ports {
            return Err(FabricError::NoSuchPort {
                node: node.name.clone(),
                ports: node.ports,
                port,
            });
        }
        Ok(())
    }

    /// Adds one channel `a:pa → b:pb`.
    pub fn channel(
        &mut self,
        a: NodeId,
        pa: u16,
        b: NodeId,
        pb: u16,
        params: LinkParams,
    ) -> Result<ChannelId, FabricError> {
        self.check_port(a, pa)?;
        self.check_port(b, pb)?;
        if self.out_chan[a.idx()][pa as usize].is_some() {
            return Err(FabricError::PortInUse {
                node: self.nodes[a.idx()].name.clone(),
                port: pa,
                dir: "output",
            });
        }
        if self.in_chan[b.idx()][pb as usize].is_some() {
            return Err(FabricError::PortInUse {
                node: self.nodes[b.idx()].name.clone(),
                port: pb,
                dir: "input",
            });
        }
        let id = ChannelId(self.channels.len() as u32);
        // The reverse channel, if already present, links the two up.
        let reverse = self.out_chan[b.idx()][pb as usize].filter(|&r| {
            let c = &self.channels[r.idx()];
            c.dst == a && c.dst_port == pa
        });
        if let Some(r) = reverse {
            self.channels[r.idx()].reverse = Some(id);
        }
        self.channels.push(Channel {
            src: a,
            src_port: pa,
            dst: b,
            dst_port: pb,
            params,
            reverse,
        });
        self.out_chan[a.idx()][pa as usize] = Some(id);
        self.in_chan[b.idx()][pb as usize] = Some(id);
        Ok(id)
    }

    /// Adds a channel each way between `a:pa` and `b:pb`.
    pub fn link(
        &mut self,
        a: NodeId,
        pa: u16,
        b: NodeId,
        pb: u16,
        params: LinkParams,
    ) -> Result<(), FabricError> {
        self.channel(a, pa, b, pb, params)?;
        self.channel(b, pb, a, pa, params)?;
        Ok(())
    }

    /// Finishes the fabric. Every host must be attached both ways on its port 0.
    pub fn build(self, switch_params: SwitchParams, shape: Shape) -> Result<Fabric, FabricError> {
        for h in 0..self.hosts {
            let n = (self.switches + h) as usize;
            if self.out_chan[n][0].is_none() || self.in_chan[n][0].is_none() {
                return Err(FabricError::HostNotAttached(self.nodes[n].name.clone()));
            }
        }
        let hosts = (0..self.hosts).map(|h| NodeId(self.switches + h)).collect();
        Ok(Fabric {
            switch_params: vec![switch_params; self.nodes.len()],
            vc_choice: VcChoice::Lowest,
            vc_reuse: 0,
            flit_delay: 0,
            internal_speedup: 1,
            output_speedup: 1,
            sw_allocator: SwAllocator::Greedy,
            vc_allocator: VcAllocator::Greedy,
            nodes: self.nodes,
            channels: self.channels,
            hosts,
            switches: self.switches,
            stage_base: self.switches,
            out_chan: self.out_chan,
            in_chan: self.in_chan,
            shape,
        })
    }
}

impl Fabric {
    /// Whether switch outputs queue flits after the crossbar (an internal or an output
    /// speed-up): each output's queue sends one flit a flit time.
    pub fn output_queues(&self) -> bool {
        self.internal_speedup > 1 || self.output_speedup > 1
    }

    pub fn num_hosts(&self) -> usize {
        self.hosts.len()
    }

    pub fn is_switch(&self, n: NodeId) -> bool {
        n.0 < self.switches
    }

    /// Puts a buffer stage of `depth` flits after every switch output: the switch's output
    /// port feeds the stage over an internal channel (`internal` timing; its buffer is the
    /// stage's FIFO), and the stage drives the original link. Switch and host numbers and
    /// every port number stay as they were, so routing built for the plain fabric still
    /// applies (stages pass packets through). Stage nodes follow the switches.
    pub fn with_output_buffers(mut self, depth: u32, internal: LinkParams) -> Fabric {
        let s0 = self.stage_base;
        let outs: Vec<ChannelId> = (0..self.channels.len() as u32)
            .map(ChannelId)
            .filter(|c| self.channels[c.idx()].src.0 < s0)
            .collect();
        let k = outs.len() as u32;
        // Renumber hosts past the new stages.
        let shift = |n: NodeId| if n.0 >= self.switches { NodeId(n.0 + k) } else { n };
        for ch in &mut self.channels {
            ch.src = shift(ch.src);
            ch.dst = shift(ch.dst);
        }
        for h in &mut self.hosts {
            *h = shift(*h);
        }
        let host_nodes = self.nodes.split_off(self.switches as usize);
        let host_out = self.out_chan.split_off(self.switches as usize);
        let host_in = self.in_chan.split_off(self.switches as usize);
        let host_params = self.switch_params.split_off(self.switches as usize);
        let mut stage_params = self.switch_params[0];
        stage_params.router_delay = 0;
        for (j, &c) in outs.iter().enumerate() {
            let stage = NodeId(self.switches + j as u32);
            let name = format!(
                "{}:{}+",
                self.nodes[self.channels[c.idx()].src.idx()].name,
                self.channels[c.idx()].src_port
            );
            self.nodes.push(Node {
                kind: NodeKind::Stage,
                name,
                ports: 1,
            });
            self.switch_params.push(stage_params);
            // The original channel now leaves the stage; a new internal one feeds it.
            let link = self.channels[c.idx()].clone();
            let internal_id = ChannelId(self.channels.len() as u32);
            self.channels.push(Channel {
                src: link.src,
                src_port: link.src_port,
                dst: stage,
                dst_port: 0,
                params: LinkParams {
                    buffer: depth,
                    vcs: link.params.vcs,
                    ..internal
                },
                reverse: None,
            });
            self.out_chan[link.src.idx()][link.src_port as usize] = Some(internal_id);
            let ch = &mut self.channels[c.idx()];
            ch.src = stage;
            ch.src_port = 0;
            // The stage's output shares the original link's reverse pairing; its input
            // has none (internal).
            self.out_chan.push(vec![Some(c)]);
            self.in_chan.push(vec![Some(internal_id)]);
        }
        self.nodes.extend(host_nodes);
        self.out_chan.extend(host_out);
        self.in_chan.extend(host_in);
        self.switch_params.extend(host_params);
        self.switches += k;
        self
    }

    /// The host number of a node, if it is a host.
    pub fn host_of(&self, n: NodeId) -> Option<u32> {
        match self.nodes[n.idx()].kind {
            NodeKind::Host(h) => Some(h),
            NodeKind::Switch | NodeKind::Stage => None,
        }
    }

    /// The channel leaving host `h`.
    pub fn injection_channel(&self, h: u32) -> ChannelId {
        self.out_chan[self.hosts[h as usize].idx()][0].expect("built fabrics attach every host")
    }

    /// The channel arriving at host `h`.
    pub fn ejection_channel(&self, h: u32) -> ChannelId {
        self.in_chan[self.hosts[h as usize].idx()][0].expect("built fabrics attach every host")
    }

    /// The switch a host is attached to, and the switch's port.
    pub fn host_switch(&self, h: u32) -> (NodeId, u16) {
        let c = &self.channels[self.injection_channel(h).idx()];
        (c.dst, c.dst_port)
    }

    /// `"s3:1→s4:0"`, for messages.
    pub fn channel_name(&self, c: ChannelId) -> String {
        let ch = &self.channels[c.idx()];
        format!(
            "{}:{}→{}:{}",
            self.nodes[ch.src.idx()].name,
            ch.src_port,
            self.nodes[ch.dst.idx()].name,
            ch.dst_port
        )
    }

    /// Number of switch-to-switch hops between two hosts along shortest paths, ignoring
    /// routing (breadth-first over channels).
    pub fn distances_from(&self, n: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.nodes.len()];
        let mut queue = std::collections::VecDeque::new();
        dist[n.idx()] = 0;
        queue.push_back(n);
        while let Some(u) = queue.pop_front() {
            // Hosts do not forward.
            if u != n && !self.is_switch(u) {
                continue;
            }
            for c in self.out_chan[u.idx()].iter().flatten() {
                let v = self.channels[c.idx()].dst;
                if dist[v.idx()] == u32::MAX {
                    dist[v.idx()] = dist[u.idx()] + 1;
                    queue.push_back(v);
                }
            }
        }
        dist
    }
}

impl fmt::Display for Fabric {
    /// Every channel counted, as `reef run` counts them, then how many join two switches
    /// (output buffers are nodes of their own: named apart from the switches).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let links = self
            .channels
            .iter()
            .filter(|c| self.is_switch(c.src) && self.is_switch(c.dst))
            .count();
        let all = self.channels.len();
        let stages = self.switches - self.stage_base;
        if stages == 0 {
            write!(
                f,
                "{} switches, {} hosts, {all} channels ({links} switch-to-switch, {} to or from hosts)",
                self.switches,
                self.hosts.len(),
                all - links
            )
        } else {
            write!(
                f,
                "{} switches with {stages} output buffers, {} hosts, {all} channels ({links} \
                 between switches and buffers, {} to or from hosts)",
                self.stage_base,
                self.hosts.len(),
                all - links
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_checked() {
        let mut b = FabricBuilder::new(&[2, 2], 1);
        let p = LinkParams::default();
        assert!(matches!(
            b.link(NodeId(0), 2, NodeId(1), 0, p),
            Err(FabricError::NoSuchPort { port: 2, .. })
        ));
        b.link(NodeId(0), 0, NodeId(1), 0, p).unwrap();
        assert!(matches!(
            b.link(NodeId(0), 0, NodeId(1), 1, p),
            Err(FabricError::PortInUse { .. })
        ));
    }

    #[test]
    fn reverse_channels_pair_up() {
        let mut b = FabricBuilder::new(&[1, 1], 0);
        b.link(NodeId(0), 0, NodeId(1), 0, LinkParams::default()).unwrap();
        let f = b.build(SwitchParams::default(), Shape::Irregular).unwrap();
        assert_eq!(f.channels[0].reverse, Some(ChannelId(1)));
        assert_eq!(f.channels[1].reverse, Some(ChannelId(0)));
    }

    #[test]
    fn unattached_host_is_an_error() {
        let b = FabricBuilder::new(&[1], 1);
        assert!(matches!(
            b.build(SwitchParams::default(), Shape::Irregular),
            Err(FabricError::HostNotAttached(_))
        ));
    }
}

//! The TOML schema as written, before validation: every section and key a config may have.
//! Unknown keys are errors (`deny_unknown_fields`); quantities with units stay strings until
//! [`super::build`] converts them. `docs/config.md` documents every key.

use serde::Deserialize;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub name: Option<String>,
    #[serde(default)]
    pub sim: RawSim,
    pub topology: RawTopology,
    #[serde(default)]
    pub channel: RawChannel,
    pub host_channel: Option<RawChannel>,
    #[serde(default)]
    pub switch: RawSwitch,
    #[serde(default)]
    pub routing: RawRouting,
    #[serde(default)]
    pub traffic: RawTraffic,
    #[serde(default)]
    pub host: RawHost,
    pub nic: Option<RawNic>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSim {
    /// Frequency ("1 GHz") or period ("1 ns") of the clock that defines a cycle.
    pub clock: Option<String>,
    pub warmup: Option<String>,
    pub measure: Option<String>,
    pub drain_limit: Option<String>,
    pub drain: Option<DrainKind>,
    pub seed: Option<u64>,
    pub batches: Option<u32>,
    pub check: Option<bool>,
    pub watchdog: Option<String>,
    pub trains: Option<bool>,
    pub express: Option<bool>,
    /// `"booksim"`: BookSim2's sample periods and convergence test decide the warm-up and
    /// the window (the keys below, BookSim2's names); `"window"` (the default): `warmup`
    /// and `measure`.
    pub sampling: Option<SamplingKind>,
    pub sample_period: Option<String>,
    pub warmup_periods: Option<u32>,
    pub max_samples: Option<u32>,
    /// A time, or `"off"`.
    pub latency_thres: Option<String>,
    pub warmup_thres: Option<f64>,
    pub acc_warmup_thres: Option<f64>,
    pub stopping_thres: Option<f64>,
    pub acc_stopping_thres: Option<f64>,
    /// Independent runs, seeds `seed`, `seed + 1`, …: 1 to 1000 (default 1).
    pub runs: Option<u32>,
    /// Packet latency from creation (`true`, the default) or from the front of the source
    /// queue (`false`, BookSim2's `include_queuing = 0`).
    pub source_queueing: Option<bool>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SamplingKind {
    Window,
    Booksim,
    BooksimThroughput,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DrainKind {
    Measured,
    All,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TopoKind {
    Mesh,
    Torus,
    Ring,
    Clos,
    FatTree,
    Full,
    File,
    /// k-ary n-fly (butterfly), BookSim2's `fly` (`k`, `n`).
    Fly,
    /// BookSim2's k-ary n-tree, numbered as its `fattree` (`k`, `n`).
    BooksimFattree,
    /// A network in BookSim2's anynet file format (`file`).
    Anynet,
    /// BookSim2's concentrated mesh (`k`, `noc_latency`).
    Cmesh,
    /// BookSim2's on-chip flattened butterfly (`k`, `n`, `hosts_per_switch`,
    /// `routers_per_row`, `noc_latency`).
    Flatfly,
    /// BookSim2's dragonfly, `dragonflynew` (`hosts_per_switch`, `noc_latency`).
    Dragonfly,
    /// A Macramé network of STC104 switches and DS links (`network`, `nodes`).
    Macrame,
    /// An ATOLL network: NICs that are their own switches (`network`, `k`, `nodes`,
    /// `file`, `hosts_per_switch`, `failed`).
    Atoll,
}

/// `k = 8` (every dimension) or `k = [8, 4]`.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(untagged)]
pub enum Radix {
    One(u32),
    Many(Vec<u32>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    pub kind: TopoKind,
    pub k: Option<Radix>,
    /// Dimensions when `k` is a single number (default 2 for mesh and torus).
    pub n: Option<u32>,
    pub hosts_per_switch: Option<u32>,
    pub leaves: Option<u32>,
    pub hosts_per_leaf: Option<u32>,
    pub spines: Option<u32>,
    pub links_per_pair: Option<u32>,
    pub switches: Option<u32>,
    pub file: Option<String>,
    /// Macramé: clos | grid | torus.
    pub network: Option<String>,
    /// Macramé: number of traffic nodes; ATOLL: chips of a fully connected network.
    pub nodes: Option<u32>,
    /// ATOLL: links that failed, as pairs of chips.
    pub failed: Option<Vec<[u32; 2]>>,
    /// cmesh, flatfly: channels as long as BookSim2's `use_noc_latency` makes them;
    /// dragonfly: as long as BookSim2 makes them (10 cycles in a group, 100 between).
    pub noc_latency: Option<bool>,
    /// flatfly: routers to a row of the layout (BookSim2's `x`).
    pub routers_per_row: Option<u32>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FcKind {
    Credit,
    Tokens,
    None,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawChannel {
    pub flit_time: Option<String>,
    pub rate: Option<String>,
    pub flit_bits: Option<u32>,
    pub tail_time: Option<String>,
    pub tail_bits: Option<u32>,
    pub latency: Option<String>,
    pub vcs: Option<u32>,
    pub buffer: Option<u32>,
    pub flow_control: Option<FcKind>,
    pub credit_delay: Option<String>,
    /// Tokens: flits granted per token (default 8).
    pub token_grant: Option<u32>,
    /// Tokens: most flits granted and not yet received (default 56).
    pub token_max: Option<u32>,
    /// Tokens: time a token occupies the reverse channel (default: the tail time).
    pub token_time: Option<String>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ModeKind {
    Wormhole,
    CutThrough,
    StoreAndForward,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SelectionKind {
    FirstFree,
    RoundRobin,
    LeastOccupied,
    Random,
    RandomAny,
    TwoRandomLeastUsed,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ArbitrationKind {
    RoundRobin,
    OldestFirst,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum VcReleaseKind {
    Tail,
    TailCredit,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum VcChoiceKind {
    Lowest,
    RoundRobin,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum VcAllocatorKind {
    Greedy,
    Islip,
    SeparableOutputFirst,
    SeparableInputFirst,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SwAllocatorKind {
    Greedy,
    Islip,
    SeparableOutputFirst,
    SeparableInputFirst,
    Wavefront,
    RrWavefront,
    MaxSize,
    Loa,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSwitch {
    pub mode: Option<ModeKind>,
    pub router_delay: Option<String>,
    pub selection: Option<SelectionKind>,
    pub arbitration: Option<ArbitrationKind>,
    pub speedup: Option<u32>,
    pub vc_release: Option<VcReleaseKind>,
    /// Which free VC a head is given (every switch and host).
    pub vc_choice: Option<VcChoiceKind>,
    /// After a tail starts on an output VC, how long before another packet's head may.
    pub vc_reuse_delay: Option<String>,
    /// The least time a flit spends in a switch's input buffer, from landing to leaving.
    pub flit_delay: Option<String>,
    /// How many times a cycle a switch allocates its crossbar, into a queue per output.
    pub internal_speedup: Option<u32>,
    /// How many flits a cycle a switch output takes from the crossbar into its queue.
    pub output_speedup: Option<u32>,
    /// How a switch whose inputs share the crossbar allocates it.
    pub allocator: Option<SwAllocatorKind>,
    /// How a switch gives free output VCs to waiting heads.
    pub vc_allocator: Option<VcAllocatorKind>,
    /// Flits of FIFO after every switch output (0: none).
    pub output_buffer: Option<u32>,
    /// Time to move one flit through the crossbar into an output buffer.
    pub crossbar_time: Option<String>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum AlgoKind {
    Dor,
    Clos,
    FatTree,
    Direct,
    Updown,
    Minimal,
    Source,
    Mosaic,
    /// STC104 interval tables (Macramé networks).
    Interval,
    /// Destination tags on a fly (BookSim2's `dest_tag`).
    DestTag,
    /// BookSim2's shortest paths by link weight on an anynet (`min`).
    AnynetMin,
    /// x then y on BookSim2's cmesh, over its mesh channels (`dor_no_express`).
    CmeshDor,
    /// x then y on BookSim2's cmesh, with its express channels along the edges (`dor`).
    CmeshExpress,
    /// The lowest differing dimension first on BookSim2's flatfly (`ran_min`).
    FlatflyMin,
    /// Through a random intermediate router on BookSim2's flatfly (`valiant`): the lower
    /// half of the VCs to it, the upper half from it.
    FlatflyValiant,
    /// BookSim2's UGAL on its flatfly (`ugal`): minimal or through a random intermediate
    /// router of the minimal quadrant, by the credits used on the two outputs at the
    /// source router; the VCs in halves as for `flatfly-valiant`.
    FlatflyUgal,
    /// `flatfly-ugal` with each phase's VCs split `k` ways by a digit of the destination,
    /// and the injection VCs by its router's digit 0 (`ugal_pni`): `k` nodes a router.
    FlatflyUgalPni,
    /// x first or y first on BookSim2's flatfly, a coin per packet (`xyyx`): the VCs in
    /// halves by order.
    FlatflyXyYx,
    /// x first or y first on BookSim2's flatfly, by the credits used on the two next
    /// outputs at the first router, a coin on a tie (`adaptive_xyyx`).
    FlatflyAdaptiveXyYx,
    /// `flatfly-ugal` with both legs in a coin's order (`ugal_xyyx`): the VCs in quarters.
    FlatflyUgalXyYx,
    /// BookSim2's minimal routing on its dragonfly (`min`): VC 0, then VC 1 from the
    /// global hop on.
    DragonflyMin,
    /// BookSim2's UGAL on its dragonfly (`ugal`): minimal or through a random intermediate
    /// router, by the credits used on the two outputs at the source router; 3 VCs.
    DragonflyUgal,
    /// BookSim2's nearest common ancestor on its fat tree (`nca`).
    Nca,
    /// Through a random intermediate switch, dimension order each way (BookSim2's
    /// `valiant`): meshes and tori.
    Valiant,
    /// x then y or y then x, a coin per packet (BookSim2's `xy_yx`): meshes.
    XyYx,
    /// x then y or y then x, chosen at the first switch by the credits used on the two
    /// outputs, a coin on a tie (BookSim2's `adaptive_xy_yx`): meshes.
    AdaptiveXyYx,
    /// Minimal adaptive on VCs 1.., dimension order on VC 0 as the escape channel
    /// (Duato; BookSim2's `min_adapt` as meant): meshes of two VCs or more.
    MinAdapt,
    /// BookSim2's `min_adapt` as it runs: dimension order's path on any VC, kept on VC 0
    /// (the escape) once there (`routing::min_adapt`).
    BooksimMinAdapt,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PathsKind {
    Updown,
    Minimal,
    /// A placed set free of cyclic channel dependencies (`routing::placed`).
    DeadlockFree,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DatelineClassKind {
    OnCrossing,
    AtEntry,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TiesKind {
    Positive,
    Alternate,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    pub src: u32,
    pub dst: u32,
    pub ports: Vec<u16>,
}

#[derive(Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct RawRouting {
    pub algorithm: Option<AlgoKind>,
    pub adaptive: Option<bool>,
    pub dateline: Option<bool>,
    /// DOR on a torus: which VC class a packet that crosses the dateline travels in.
    pub dateline_class: Option<DatelineClassKind>,
    /// DOR on a torus: which way half way round goes.
    pub ties: Option<TiesKind>,
    pub root: Option<u32>,
    pub paths: Option<PathsKind>,
    /// Source routes travel in the packet, a flit per hop (ATOLL routing strings).
    pub in_packet: Option<bool>,
    #[serde(default)]
    pub route: Vec<RawRoute>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PatternKind {
    None,
    Uniform,
    Pairs,
    Permutation,
    Transpose,
    BitComplement,
    BitReverse,
    Shuffle,
    Tornado,
    Neighbour,
    Neighbor,
    HotSpot,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum InjectionKind {
    Bernoulli,
    Poisson,
    Periodic,
    OnOff,
    Backlogged,
    /// `batch` packets a host, one created a cycle from the start; the run ends when all
    /// are delivered (BookSim2's `sim_type = batch`).
    Batch,
}

/// `load = 0.2` (flits/cycle/host) or `load = "5 MB/s"`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum LoadValue {
    Flits(f64),
    Rate(String),
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TrafficKind {
    Synthetic,
    PingPong,
    Streaming,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawTraffic {
    /// Synthetic traffic (the default), or a message benchmark between two hosts.
    pub kind: Option<TrafficKind>,
    /// Ping-pong, streaming: the master and slave hosts.
    pub pair: Option<[u32; 2]>,
    /// Ping-pong, streaming: message sizes [bytes].
    pub message_sizes: Option<Vec<u64>>,
    /// Ping-pong, streaming: messages (round trips) per size.
    pub messages: Option<u32>,
    pub pattern: Option<PatternKind>,
    pub include_self: Option<bool>,
    pub pairs: Option<Vec<[u32; 2]>>,
    pub hot: Option<Vec<u32>>,
    pub hot_fraction: Option<f64>,
    pub injection: Option<InjectionKind>,
    /// Packets a host sends with `injection = "batch"`.
    pub batch: Option<u64>,
    /// A batch: at most this many of a host's packets in flight (0: no limit).
    pub max_outstanding: Option<u32>,
    pub load: Option<LoadValue>,
    pub on: Option<String>,
    pub off: Option<String>,
    pub packet_size: Option<u32>,
    pub sizes: Option<Vec<(u32, f64)>>,
    pub flit_bytes: Option<u32>,
}

/// The host interface of message benchmarks (`nic::hostif`).
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawNic {
    pub mtu: Option<u32>,
    pub framing: Option<u32>,
    pub send_overhead: Option<String>,
    pub pio_max: Option<u32>,
    pub pio_rate: Option<String>,
    pub dma_latency: Option<String>,
    pub dma_rate: Option<String>,
    pub rx_rate: Option<String>,
    pub recv_overhead: Option<String>,
    pub noise: Option<RawNoise>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawNoise {
    pub tick: Option<String>,
    pub tick_time: Option<[String; 2]>,
    pub other_rate: Option<f64>,
    pub other_time: Option<[String; 2]>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    pub send_overhead: Option<String>,
    pub send_per_byte: Option<String>,
    pub recv_overhead: Option<String>,
    pub recv_per_byte: Option<String>,
    pub credit_return: Option<String>,
}

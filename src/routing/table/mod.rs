//! Per-switch routing tables: sorted, non-overlapping destination ranges, each mapped to an
//! output set (ports × VC range). This is interval labelling when each range maps to one
//! port, and grouped adaptive routing when a range maps to a group of ports. An optional
//! input class (a label on the input channel, e.g. up*/down*'s "arrived going down") selects
//! one of several tables per switch.
//!
//! The tables of the regular topologies are built in `generators` (re-exported here).

use super::{At, Header, RouteError, Want};
use std::collections::HashMap;

mod generators;
pub use generators::{anynet_min, clos, cmesh_dor, dest_tag, fat_tree, flatfly_min, full, nca};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// First destination host of the range.
    pub lo: u32,
    /// Last destination host of the range (inclusive).
    pub hi: u32,
    /// Index into the table's output sets.
    pub set: u32,
}

#[derive(Clone, Debug)]
pub struct Table {
    name: &'static str,
    classes: u8,
    /// Start of each (switch, class) table in `entries`; one more than tables.
    offsets: Vec<u32>,
    entries: Vec<Entry>,
    sets: Vec<Want>,
    chan_class: Vec<u8>,
    /// Destinations (hosts, or header values) a table covers.
    hosts: u32,
    /// Per (switch, class) table and destination, its output set + 1 (0: no route), where
    /// that takes at most [`DENSE_MAX`] entries (else empty, and a step searches the
    /// ranges): one read a step, where a table whose ranges interleave (a tree spreading
    /// destinations over its up-links) took a binary search over thousands of them.
    dense: Vec<u16>,
}

/// The most (switch, class, destination) entries a table keeps as a dense array (2 bytes
/// each: 32 MB; `memory::PER_TABLE_ENTRY` counts them).
pub const DENSE_MAX: usize = 1 << 24;

/// `w`, its VC range [`Want::KEEP_VC`] made the VC the packet came in on.
#[inline(always)]
fn keep_vc(w: Want, at: At) -> Want {
    if w.vc_lo == Want::KEEP_VC {
        Want {
            vc_lo: at.in_vc,
            vc_hi: at.in_vc,
            ..w
        }
    } else {
        w
    }
}

impl Table {
    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let t = at.switch as usize * self.classes as usize + at.in_class.min(self.classes - 1) as usize;
        if !self.dense.is_empty() {
            let e = if h.dst < self.hosts {
                self.dense[t * self.hosts as usize + h.dst as usize]
            } else {
                0
            };
            return match e {
                0 => Err(RouteError::NoRoute {
                    switch: at.switch,
                    dst: h.dst,
                }),
                e => Ok(keep_vc(self.sets[e as usize - 1], at)),
            };
        }
        let (a, b) = (self.offsets[t] as usize, self.offsets[t + 1] as usize);
        let es = &self.entries[a..b];
        let i = es.partition_point(|e| e.lo <= h.dst);
        match i.checked_sub(1).map(|i| es[i]) {
            Some(e) if e.hi >= h.dst => Ok(keep_vc(self.sets[e.set as usize], at)),
            _ => Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            }),
        }
    }

    pub fn channel_class(&self, c: usize) -> u8 {
        self.chan_class.get(c).copied().unwrap_or(0)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Every entry names one port: the route of a packet is fixed by its destination (and
    /// the input's class).
    pub fn deterministic(&self) -> bool {
        self.sets.iter().all(|w| w.ports.len() == 1)
    }

    /// The tables come from a generator whose routes cannot form a cycle of channel
    /// dependencies, whatever the fabric it was given: up, then down, in the trees and the
    /// up*/down* tables; one stage after another in a fly; dimension by dimension, in one
    /// direction per dimension, on BookSim2's cmesh and flatfly; one hop between switches
    /// on the fully connected network; on BookSim2's dragonfly, a local hop in one VC, then
    /// the global hop and a local one in the other. (Shortest paths over any graph, `minimal` and
    /// `anynet-min`, can form one.)
    pub fn deadlock_free_by_construction(&self) -> bool {
        matches!(
            self.name,
            "clos-deterministic"
                | "clos-adaptive"
                | "fat-tree-deterministic"
                | "fat-tree-adaptive"
                | "nca"
                | "direct"
                | "dest-tag"
                | "cmesh-dor"
                | "cmesh-express"
                | "flatfly-min"
                | "dragonfly-min"
                | "updown"
                | "updown-adaptive"
        )
    }

    /// The ranges of one switch's table for one input class: `(lo, hi, want)` (a VC range
    /// of [`Want::KEEP_VC`] as stored: the input's VC).
    pub fn ranges(&self, switch: u32, class: u8) -> impl Iterator<Item = (u32, u32, Want)> + '_ {
        let t = switch as usize * self.classes as usize + class as usize;
        self.entries[self.offsets[t] as usize..self.offsets[t + 1] as usize]
            .iter()
            .map(|e| (e.lo, e.hi, self.sets[e.set as usize]))
    }

    pub fn classes(&self) -> u8 {
        self.classes
    }

    /// Total number of ranges over all switches.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Interval labelling on header values: each switch has sorted, non-overlapping ranges of
/// the current header symbol, each mapped to an output set — the STC104's routing table
/// (`../shared/systems/ieee1355.md`). A packet's header is given per destination
/// (`dst_header`), e.g. its address byte, or an address byte per level of a hierarchy when
/// links delete headers.
///
/// A switch may also own a range of header values (its own label): a header in it is
/// deleted there and the packet is routed on the next one (two-phase universal routing, or
/// the top of a hierarchy). A header symbol is `width` flits long (1- or 2-byte headers).
#[derive(Clone, Debug)]
pub struct HeaderTable {
    name: &'static str,
    table: Table,
    /// Headers by destination, or by (source · hosts + destination) when `per_pair`.
    headers: Vec<Vec<u16>>,
    per_pair: Option<u32>,
    /// Per switch, the header values it owns (empty: none).
    own: Vec<(u16, u16)>,
    width: u8,
}

impl HeaderTable {
    /// `table` holds ranges of header values (built with [`TableBuilder`] over `keys`
    /// values, one input class), `dst_header[d]` the header a packet to host `d` carries.
    pub fn new(name: &'static str, table: Table, dst_header: Vec<Vec<u16>>) -> HeaderTable {
        HeaderTable {
            name,
            table,
            headers: dst_header,
            per_pair: None,
            own: Vec::new(),
            width: 1,
        }
    }

    /// Gives switch `s` the header values `own[s].0..=own[s].1` (none where `lo > hi`).
    pub fn with_own(mut self, own: Vec<(u16, u16)>) -> HeaderTable {
        self.own = own;
        self
    }

    /// Header symbols of `width` flits each (2 for the STC104's 2-byte headers).
    pub fn with_width(mut self, width: u8) -> HeaderTable {
        self.width = width.max(1);
        self
    }

    /// Flits per header symbol.
    pub fn width(&self) -> u8 {
        self.width
    }

    /// The header values switch `s` owns, if any.
    pub fn own(&self, s: u32) -> Option<(u16, u16)> {
        self.own.get(s as usize).copied().filter(|r| r.0 <= r.1)
    }

    #[inline]
    fn owns(&self, s: u32, key: u16) -> bool {
        self.own
            .get(s as usize)
            .is_some_and(|&(lo, hi)| lo <= key && key <= hi)
    }

    /// A header the switch owns is deleted as the packet leaves it.
    #[inline]
    pub fn header_op(&self, at: At, h: Header) -> super::HeaderOp {
        match h.sym.first() {
            Some(&key) if self.owns(at.switch, key) => super::HeaderOp {
                advance: 1,
                strip: self.width,
                set: None,
            },
            _ => super::HeaderOp::default(),
        }
    }

    /// As [`HeaderTable::new`], with a header for every (source, destination):
    /// `headers[src · hosts + dst]`.
    pub fn with_pairs(name: &'static str, table: Table, hosts: u32, headers: Vec<Vec<u16>>) -> HeaderTable {
        HeaderTable {
            name,
            table,
            headers,
            per_pair: Some(hosts),
            own: Vec::new(),
            width: 1,
        }
    }

    #[inline]
    pub fn route(&self, at: At, h: Header) -> Result<Want, RouteError> {
        let Some(&first) = h.sym.first() else {
            return Err(RouteError::NoRoute {
                switch: at.switch,
                dst: h.dst,
            });
        };
        // A header this switch owns is deleted here; the next one decides.
        let key = if self.owns(at.switch, first) {
            *h.sym.get(1).ok_or(RouteError::NoHeaderRoute {
                switch: at.switch,
                key: first,
            })?
        } else {
            first
        };
        self.table
            .route(at, Header::dst(key as u32))
            .map_err(|_| RouteError::NoHeaderRoute {
                switch: at.switch,
                key,
            })
    }

    /// The header of a packet from host `src` to host `dst`.
    pub fn fill(&self, src: u32, dst: u32, out: &mut Vec<u16>) -> Result<(), RouteError> {
        let k = match self.per_pair {
            Some(n) => src as usize * n as usize + dst as usize,
            None => dst as usize,
        };
        let h = self
            .headers
            .get(k)
            .ok_or(RouteError::NoRoute { switch: 0, dst })?;
        out.extend_from_slice(h);
        Ok(())
    }

    pub fn max_header(&self) -> usize {
        self.headers.iter().map(|h| h.len()).max().unwrap_or(0)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The underlying table (ranges of header values per switch).
    pub fn table(&self) -> &Table {
        &self.table
    }
}

/// Collects a full destination → output-set map per switch and class, then compresses it
/// into ranges.
pub struct TableBuilder {
    hosts: u32,
    classes: u8,
    dense: Vec<Vec<Option<u32>>>,
    sets: Vec<Want>,
    interned: HashMap<Want, u32>,
    chan_class: Vec<u8>,
}

impl TableBuilder {
    pub fn new(switches: u32, hosts: u32, classes: u8) -> TableBuilder {
        TableBuilder {
            hosts,
            classes,
            dense: vec![vec![None; hosts as usize]; switches as usize * classes as usize],
            sets: Vec::new(),
            interned: HashMap::new(),
            chan_class: Vec::new(),
        }
    }

    pub fn set(&mut self, switch: u32, class: u8, dst: u32, want: Want) {
        let id = *self.interned.entry(want).or_insert_with(|| {
            self.sets.push(want);
            self.sets.len() as u32 - 1
        });
        self.dense[switch as usize * self.classes as usize + class as usize][dst as usize] = Some(id);
    }

    pub fn set_channel_classes(&mut self, classes: Vec<u8>) {
        self.chan_class = classes;
    }

    pub fn build(self, name: &'static str) -> Table {
        let mut offsets = vec![0u32];
        let mut entries = Vec::new();
        let keep_dense =
            self.dense.len() * self.hosts as usize <= DENSE_MAX && self.sets.len() < u16::MAX as usize;
        let mut dense = Vec::new();
        if keep_dense {
            dense.reserve_exact(self.dense.len() * self.hosts as usize);
        }
        // (Each builder row is freed as it is read.)
        for t in self.dense {
            if keep_dense {
                dense.extend(t.iter().map(|e| e.map_or(0, |set| set as u16 + 1)));
            }
            let mut d = 0;
            while d < self.hosts as usize {
                if let Some(set) = t[d] {
                    let lo = d;
                    while d + 1 < self.hosts as usize && t[d + 1] == Some(set) {
                        d += 1;
                    }
                    entries.push(Entry {
                        lo: lo as u32,
                        hi: d as u32,
                        set,
                    });
                }
                d += 1;
            }
            offsets.push(entries.len() as u32);
        }
        Table {
            name,
            classes: self.classes,
            offsets,
            entries,
            sets: self.sets,
            chan_class: self.chan_class,
            hosts: self.hosts,
            dense,
        }
    }
}

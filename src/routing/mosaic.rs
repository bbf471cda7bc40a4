//! Mosaic routing (the Caltech Mosaic C router; ATOMIC, Cohen, Finn, Felderman and DeSchon,
//! USC/ISI 1992; `../shared/systems/atomic.md`): the packet carries signed offset bytes, a ΔX
//! byte then a ΔY byte, −127…+127. A router reads the leading byte; its sign picks East/West
//! (as ΔX) or North/South (as ΔY), and its magnitude is decremented as the packet leaves. A
//! byte read as zero is stripped: a zero ΔX hands over to the ΔY byte at the same node, a zero
//! ΔY sends the packet into the node's processor. X hops therefore all come before Y hops
//! (deadlock-free on a mesh, Dally & Seitz), and `(0,0)` is the loopback to the sender.
//!
//! Which role a byte plays is decided by the channel the packet came in on, as in the chip: a
//! packet from the processor or an East/West input reads its leading byte as ΔX, a packet
//! from a North/South input as ΔY. A cable that leaves a Y output and enters an X input (a
//! non-consistent connection) therefore turns the rest of a ΔY count into a ΔX count — the
//! Y-to-X turn plain Mosaic routing lacks.
//!
//! Ports follow the mesh builder: 0 East (+X), 1 West (−X), 2 North (+Y), 3 South (−Y),
//! 4 the node's processor (and any further ports, treated as processor-like X inputs).
//! Header symbols are the bytes as two's complement in the low 8 bits.

use super::{At, Header, HeaderOp, RouteError, Want};
use crate::fabric::{Fabric, Shape};

pub const EAST: u16 = 0;
pub const WEST: u16 = 1;
pub const NORTH: u16 = 2;
pub const SOUTH: u16 = 3;
/// The node's own processor.
pub const PROC: u16 = 4;

/// A signed offset byte as a header symbol.
#[inline]
pub fn enc(b: i8) -> u16 {
    b as u8 as u16
}

/// A header symbol as a signed offset byte.
#[inline]
pub fn dec(s: u16) -> i8 {
    s as u8 as i8
}

/// Whether a packet coming in on `in_port` reads its leading byte as ΔX.
#[inline]
pub fn x_input(in_port: u16) -> bool {
    !(in_port == NORTH || in_port == SOUTH)
}

#[inline]
fn toward_zero(b: i8) -> u16 {
    enc(b - b.signum())
}

/// One router step for a packet that came in on `in_port` with header bytes `sym`: the
/// output port and what happens to the header as it leaves. `None` if the header ends
/// before the router can decide.
#[inline]
pub fn step(in_port: u16, sym: &[u16]) -> Option<(u16, HeaderOp)> {
    let b0 = dec(*sym.first()?);
    if x_input(in_port) {
        if b0 != 0 {
            let p = if b0 > 0 { EAST } else { WEST };
            return Some((
                p,
                HeaderOp {
                    advance: 0,
                    strip: 0,
                    set: Some(toward_zero(b0)),
                },
            ));
        }
        let b1 = dec(*sym.get(1)?);
        if b1 != 0 {
            let p = if b1 > 0 { NORTH } else { SOUTH };
            return Some((
                p,
                HeaderOp {
                    advance: 1,
                    strip: 1,
                    set: Some(toward_zero(b1)),
                },
            ));
        }
        Some((
            PROC,
            HeaderOp {
                advance: 2,
                strip: 2,
                set: None,
            },
        ))
    } else if b0 != 0 {
        let p = if b0 > 0 { NORTH } else { SOUTH };
        Some((
            p,
            HeaderOp {
                advance: 0,
                strip: 0,
                set: Some(toward_zero(b0)),
            },
        ))
    } else {
        Some((
            PROC,
            HeaderOp {
                advance: 1,
                strip: 1,
                set: None,
            },
        ))
    }
}

/// Where packets' headers come from.
#[derive(Clone, Debug)]
enum Headers {
    /// A 2-D mesh of nodes with one processor each (host `x + kx·y` on port 4): one pair
    /// (Δx, Δy) per packet.
    Mesh { kx: u32 },
    /// Given headers per (source, destination) host; other pairs have no route.
    Table(Vec<((u32, u32), Vec<u16>)>),
}

/// Mosaic routing on a fabric whose switches are Mosaic nodes.
#[derive(Clone, Debug)]
pub struct Mosaic {
    headers: Headers,
    max_len: usize,
}

impl Mosaic {
    /// Single-pair routes between the processors of a 2-D mesh (`hosts_per_switch = 1`,
    /// no wrap, at most 128 nodes a side). `None` for any other fabric.
    pub fn mesh(fab: &Fabric) -> Option<Mosaic> {
        match &fab.shape {
            Shape::Cube {
                k,
                wrap: false,
                conc: 1,
            } if k.len() == 2 && k[0] <= 128 && k[1] <= 128 => Some(Mosaic {
                headers: Headers::Mesh { kx: k[0] },
                max_len: 2,
            }),
            _ => None,
        }
    }

    /// Routes given as header bytes per (source host, destination host).
    pub fn with_headers(mut headers: Vec<((u32, u32), Vec<i8>)>) -> Mosaic {
        headers.sort_by_key(|h| h.0);
        headers.dedup_by_key(|h| h.0);
        let max_len = headers.iter().map(|h| h.1.len()).max().unwrap_or(0);
        Mosaic {
            headers: Headers::Table(
                headers
                    .into_iter()
                    .map(|(k, v)| (k, v.into_iter().map(enc).collect()))
                    .collect(),
            ),
            max_len,
        }
    }

    /// Whether packets from `src` to `dst` have a route.
    pub fn has(&self, src: u32, dst: u32) -> bool {
        match &self.headers {
            Headers::Mesh { .. } => true,
            Headers::Table(t) => t.binary_search_by_key(&(src, dst), |e| e.0).is_ok(),
        }
    }

    /// Writes the header of a packet from `src` to `dst` into `out` (cleared first).
    pub fn fill(&self, src: u32, dst: u32, out: &mut Vec<u16>) -> Result<(), RouteError> {
        out.clear();
        match &self.headers {
            Headers::Mesh { kx } => {
                let (x1, y1) = ((src % kx) as i32, (src / kx) as i32);
                let (x2, y2) = ((dst % kx) as i32, (dst / kx) as i32);
                out.push(enc((x2 - x1) as i8));
                out.push(enc((y2 - y1) as i8));
                Ok(())
            }
            Headers::Table(t) => match t.binary_search_by_key(&(src, dst), |e| e.0) {
                Ok(i) => {
                    out.extend_from_slice(&t[i].1);
                    Ok(())
                }
                Err(_) => Err(RouteError::NoRoute {
                    switch: u32::MAX,
                    dst,
                }),
            },
        }
    }

    pub fn max_len(&self) -> usize {
        self.max_len
    }

    #[inline]
    pub fn route(&self, fab: &Fabric, at: At, h: Header) -> Result<Want, RouteError> {
        let (port, _) = step(at.in_port, h.sym).ok_or(RouteError::RouteEnded {
            switch: at.switch,
            dst: h.dst,
        })?;
        Want::out_port(fab, at.switch, port)
    }

    #[inline]
    pub fn header_op(&self, at: At, h: Header) -> HeaderOp {
        step(at.in_port, h.sym).map_or(HeaderOp::default(), |s| s.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(in_port: u16, bytes: &[i8]) -> (Vec<u16>, usize) {
        // Follows a packet through routers on a consistent mesh: a hop East arrives on the
        // next node's West port, and so on.
        let mut sym: Vec<u16> = bytes.iter().map(|&b| enc(b)).collect();
        let mut ports = Vec::new();
        let mut inp = in_port;
        loop {
            let (p, op) = step(inp, &sym).unwrap();
            ports.push(p);
            sym.drain(..op.advance as usize);
            if let Some(x) = op.set {
                sym[0] = x;
            }
            if p == PROC {
                return (ports, sym.len());
            }
            inp = p ^ 1;
        }
    }

    #[test]
    fn x_before_y_and_zero_bytes_stripped() {
        assert_eq!(run(PROC, &[2, -1]), (vec![EAST, EAST, SOUTH, PROC], 0));
        assert_eq!(run(PROC, &[0, 2, 5, 5]), (vec![NORTH, NORTH, PROC], 2));
        // Loopback: straight back into the processor, two bytes stripped.
        assert_eq!(run(PROC, &[0, 0, 1]), (vec![PROC], 1));
        // From a North/South input the leading byte is ΔY.
        assert_eq!(run(SOUTH, &[1, 7]), (vec![NORTH, PROC], 1));
    }

    #[test]
    fn bytes_round_trip() {
        for b in -127i8..=127 {
            assert_eq!(dec(enc(b)), b);
        }
    }
}

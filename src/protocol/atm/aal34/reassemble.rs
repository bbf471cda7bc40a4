//! The AAL3/4 reassembler of the Penn interface's receive side (`shared/systems/atm.md`): the
//! cell manager checks HEC and CRC-10 and extracts circuit, MID and length; two CAMs hold up
//! to 256 virtual circuits and 256 datagrams (MIDs) in reassembly at once; the host can flush
//! a circuit or a datagram. The CS-PDU checks (tags, Length, BASize) are I.363.3's.
//!
//! The Penn cell manager ignores the 4-bit sequence number; [`ReassemblerConfig::check_sn`]
//! chooses between that ([`ReassemblerConfig::PENN`]) and I.363.3's check, which catches a lost
//! or misordered cell at once instead of at the end of the frame.

use thiserror::Error;

use super::cs::{CS_HEADER_BYTES, CsError, CsPdu, CsRepr, cs_pdu_len};
use super::sar::{LI_ABORT, SN_MODULUS, SarError, SarPdu, SarRepr, SegmentType};
use crate::protocol::atm::cam::Cam;
use crate::protocol::atm::cell::{CellError, VirtualCircuit, receive_user_cell};

/// Table sizes and checks of a reassembler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblerConfig {
    /// Circuits that may have a frame in reassembly at once (Penn: 256).
    pub max_circuits: usize,
    /// Frames (circuit, MID) that may be in reassembly at once (Penn: 256).
    pub max_mids: usize,
    /// Whether to check that sequence numbers run on by one within a frame.
    pub check_sn: bool,
}

impl ReassemblerConfig {
    /// The Penn hardware: 256 circuits, 256 MIDs, sequence numbers ignored.
    pub const PENN: ReassemblerConfig = ReassemblerConfig {
        max_circuits: 256,
        max_mids: 256,
        check_sn: false,
    };
}

impl Default for ReassemblerConfig {
    /// Penn's table sizes with I.363.3's sequence-number check.
    fn default() -> Self {
        ReassemblerConfig {
            check_sn: true,
            ..Self::PENN
        }
    }
}

/// A frame delivered whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The circuit it arrived on.
    pub circuit: VirtualCircuit,
    /// Its multiplexing identifier.
    pub mid: u16,
    /// The CS-PDU payload, without header, pad and trailer.
    pub data: Vec<u8>,
}

/// A reassembly cut short by a BOM or SSM on the same (circuit, MID): its EOM never came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutShort {
    /// The circuit.
    pub circuit: VirtualCircuit,
    /// The MID.
    pub mid: u16,
    /// CS-PDU bytes that had been collected and are now discarded [bytes].
    pub bytes: usize,
}

/// Why a cell was discarded, or a frame with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReassemblyError {
    /// The cell itself was bad (length, HEC) or not user data; it is discarded.
    #[error(transparent)]
    Cell(#[from] CellError),
    /// The SAR-PDU failed its CRC-10 or carried an illegal LI; the cell is discarded. Its MID
    /// cannot be trusted, so no reassembly is touched.
    #[error("on VPI {}/VCI {}: {error}", circuit.vpi, circuit.vci)]
    Sar {
        /// The circuit.
        circuit: VirtualCircuit,
        /// What was wrong.
        error: SarError,
    },
    /// A BOM on a new circuit found every circuit slot taken; the cell is discarded.
    #[error("circuit table full: BOM on VPI {}/VCI {} discarded", circuit.vpi, circuit.vci)]
    CircuitTableFull {
        /// The circuit refused.
        circuit: VirtualCircuit,
    },
    /// A BOM found every reassembly (MID) slot taken; the cell is discarded.
    #[error("MID table full: BOM for MID {mid} on VPI {}/VCI {} discarded", circuit.vpi, circuit.vci)]
    MidTableFull {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID refused.
        mid: u16,
    },
    /// A COM arrived with no reassembly in progress (its BOM was lost); it is discarded.
    #[error("COM without BOM for MID {mid} on VPI {}/VCI {}", circuit.vpi, circuit.vci)]
    UnexpectedCom {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID.
        mid: u16,
    },
    /// An EOM arrived with no reassembly in progress (its BOM was lost); it is discarded.
    #[error("EOM without BOM for MID {mid} on VPI {}/VCI {}", circuit.vpi, circuit.vci)]
    UnexpectedEom {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID.
        mid: u16,
    },
    /// The sequence number skipped or went back: a cell was lost or misordered. The frame is
    /// discarded with this cell.
    #[error("MID {mid} on VPI {}/VCI {}: SN {received}, expected {expected}", circuit.vpi, circuit.vci)]
    SequenceGap {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID.
        mid: u16,
        /// The SN due.
        expected: u8,
        /// The SN received.
        received: u8,
    },
    /// An EOM with LI 63: the sender aborted the frame, which is discarded.
    #[error("MID {mid} on VPI {}/VCI {} aborted by the sender", circuit.vpi, circuit.vci)]
    Aborted {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID.
        mid: u16,
    },
    /// More data arrived than the BASize announced in the BOM allows; the frame is discarded.
    #[error("MID {mid} on VPI {}/VCI {} overran BASize {basize}", circuit.vpi, circuit.vci)]
    Oversize {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID.
        mid: u16,
        /// The announced buffer allocation size [bytes].
        basize: u16,
    },
    /// The CS-PDU failed its checks at the end of the frame (tags, Length, BASize, CPI); the
    /// frame is discarded.
    #[error("MID {mid} on VPI {}/VCI {}: {error}", circuit.vpi, circuit.vci)]
    Cs {
        /// The circuit.
        circuit: VirtualCircuit,
        /// The MID.
        mid: u16,
        /// What was wrong.
        error: CsError,
    },
}

/// What one cell did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a delivery may hold a frame or report a loss"]
pub struct Delivery {
    /// A reassembly this cell ended without its EOM (the cell was a BOM or SSM on a MID
    /// already in reassembly); that partial frame is gone.
    pub cut_short: Option<CutShort>,
    /// This cell's own fate: absorbed (`Ok(None)`), completing a frame, or discarded.
    pub outcome: Result<Option<Frame>, ReassemblyError>,
}

impl Delivery {
    fn outcome(outcome: Result<Option<Frame>, ReassemblyError>) -> Self {
        Delivery {
            cut_short: None,
            outcome,
        }
    }

    /// The frame this cell completed, if any.
    pub fn into_frame(self) -> Option<Frame> {
        self.outcome.ok().flatten()
    }
}

#[derive(Debug)]
struct Context {
    next_sn: u8,
    basize: u16,
    data: Vec<u8>,
}

/// Reassembles AAL3/4 frames from cells of many circuits and MIDs, interleaved.
#[derive(Debug)]
pub struct Reassembler {
    config: ReassemblerConfig,
    /// Reassemblies in progress per circuit.
    circuits: Cam<VirtualCircuit, usize>,
    contexts: Cam<(VirtualCircuit, u16), Context>,
}

impl Default for Reassembler {
    fn default() -> Self {
        Reassembler::new(ReassemblerConfig::default())
    }
}

impl Reassembler {
    /// An empty reassembler.
    pub fn new(config: ReassemblerConfig) -> Self {
        Reassembler {
            config,
            circuits: Cam::new(config.max_circuits),
            contexts: Cam::new(config.max_mids),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> ReassemblerConfig {
        self.config
    }

    /// Frames in reassembly now.
    pub fn in_progress(&self) -> usize {
        self.contexts.len()
    }

    /// The (circuit, MID) pairs in reassembly now, in order.
    pub fn active(&self) -> impl Iterator<Item = (VirtualCircuit, u16)> + '_ {
        self.contexts.keys()
    }

    /// Takes one cell from the line (53 bytes): HEC, then the SAR-PDU. Idle and unassigned
    /// cells are absorbed silently.
    pub fn push_cell(&mut self, cell: &[u8]) -> Delivery {
        match receive_user_cell(cell) {
            Err(e) => Delivery::outcome(Err(e.into())),
            Ok(None) => Delivery::outcome(Ok(None)),
            Ok(Some((repr, payload))) => self.push_sar(repr.circuit, payload),
        }
    }

    /// Takes one SAR-PDU (48 bytes) that arrived on `circuit`.
    pub fn push_sar(&mut self, circuit: VirtualCircuit, sar: &[u8]) -> Delivery {
        let parsed = SarPdu::new_checked(sar).and_then(|pdu| Ok((SarRepr::parse(&pdu)?, pdu)));
        let (repr, pdu) = match parsed {
            Ok(p) => p,
            Err(error) => return Delivery::outcome(Err(ReassemblyError::Sar { circuit, error })),
        };
        let mid = repr.mid;
        let key = (circuit, mid);
        let payload = &pdu.payload()[..repr.used()];
        match repr.segment_type {
            SegmentType::Ssm => Delivery {
                cut_short: self.drop_context(key),
                outcome: deliver(circuit, mid, payload.to_vec()),
            },
            SegmentType::Bom => {
                let cut_short = self.drop_context(key);
                let outcome = self.open(key, repr.sn, payload).map(|()| None);
                Delivery { cut_short, outcome }
            }
            SegmentType::Com | SegmentType::Eom => {
                Delivery::outcome(self.continue_frame(key, &repr, payload))
            }
        }
    }

    fn open(&mut self, key: (VirtualCircuit, u16), sn: u8, payload: &[u8]) -> Result<(), ReassemblyError> {
        let (circuit, mid) = key;
        if self.contexts.is_full() {
            return Err(ReassemblyError::MidTableFull { circuit, mid });
        }
        match self.circuits.get_mut(circuit) {
            Some(count) => *count += 1,
            None => self
                .circuits
                .insert(circuit, 1)
                .map_err(|_| ReassemblyError::CircuitTableFull { circuit })?,
        }
        // A BOM always carries 44 bytes, so the CS header is there.
        let basize = u16::from_be_bytes([payload[2], payload[3]]);
        let mut data = Vec::with_capacity(cs_pdu_len(usize::from(basize)));
        data.extend_from_slice(payload);
        let context = Context {
            next_sn: (sn + 1) % SN_MODULUS,
            basize,
            data,
        };
        // The MID table had room (checked above) and the key was just dropped.
        self.contexts
            .insert(key, context)
            .map_err(|_| ReassemblyError::MidTableFull { circuit, mid })
    }

    fn continue_frame(
        &mut self,
        key: (VirtualCircuit, u16),
        repr: &SarRepr,
        payload: &[u8],
    ) -> Result<Option<Frame>, ReassemblyError> {
        let (circuit, mid) = key;
        let eom = repr.segment_type == SegmentType::Eom;
        let check_sn = self.config.check_sn;
        let Some(context) = self.contexts.get_mut(key) else {
            return Err(if eom {
                ReassemblyError::UnexpectedEom { circuit, mid }
            } else {
                ReassemblyError::UnexpectedCom { circuit, mid }
            });
        };
        let error = if check_sn && repr.sn != context.next_sn {
            Some(ReassemblyError::SequenceGap {
                circuit,
                mid,
                expected: context.next_sn,
                received: repr.sn,
            })
        } else if eom && repr.li == LI_ABORT {
            Some(ReassemblyError::Aborted { circuit, mid })
        } else if context.data.len() + payload.len() > cs_pdu_len(usize::from(context.basize)) {
            Some(ReassemblyError::Oversize {
                circuit,
                mid,
                basize: context.basize,
            })
        } else {
            None
        };
        if let Some(error) = error {
            self.drop_context(key);
            return Err(error);
        }
        context.next_sn = (repr.sn + 1) % SN_MODULUS;
        context.data.extend_from_slice(payload);
        if !eom {
            return Ok(None);
        }
        let data = self.take_context(key).map(|c| c.data).unwrap_or_default();
        deliver(circuit, mid, data)
    }

    fn take_context(&mut self, key: (VirtualCircuit, u16)) -> Option<Context> {
        let context = self.contexts.remove(key)?;
        if let Some(count) = self.circuits.get_mut(key.0) {
            *count -= 1;
            if *count == 0 {
                self.circuits.remove(key.0);
            }
        }
        Some(context)
    }

    fn drop_context(&mut self, key: (VirtualCircuit, u16)) -> Option<CutShort> {
        self.take_context(key).map(|c| CutShort {
            circuit: key.0,
            mid: key.1,
            bytes: c.data.len(),
        })
    }

    /// Discards every reassembly on `circuit`; returns how many there were.
    pub fn flush_circuit(&mut self, circuit: VirtualCircuit) -> usize {
        self.circuits.remove(circuit);
        self.contexts.retain(|&(c, _)| c != circuit)
    }

    /// Discards the reassembly of (`circuit`, `mid`); returns whether there was one.
    pub fn flush_mid(&mut self, circuit: VirtualCircuit, mid: u16) -> bool {
        self.drop_context((circuit, mid)).is_some()
    }
}

/// Checks a complete CS-PDU and strips it down to its payload.
fn deliver(circuit: VirtualCircuit, mid: u16, mut data: Vec<u8>) -> Result<Option<Frame>, ReassemblyError> {
    let repr = CsPdu::new_checked(&data[..])
        .and_then(|pdu| CsRepr::parse(&pdu))
        .map_err(|error| ReassemblyError::Cs { circuit, mid, error })?;
    data.truncate(CS_HEADER_BYTES + usize::from(repr.length));
    data.drain(..CS_HEADER_BYTES);
    Ok(Some(Frame { circuit, mid, data }))
}

//! The AAL5 reassembler: cell payloads collected per circuit until a cell with AUU = 1, then
//! the CPCS-PDU checked (CRC-32, Length, CPI, abort). Circuits in reassembly at once are
//! bounded like the Penn interface's circuit CAM (`shared/systems/atm.md`: 256).

use thiserror::Error;

use super::cpcs::{CpcsError, CpcsPdu, CpcsRepr, MAX_PDU_BYTES};
use crate::protocol::atm::cam::Cam;
use crate::protocol::atm::cell::{CellError, CellRepr, PayloadType, VirtualCircuit, receive_user_cell};

/// Table size of a reassembler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblerConfig {
    /// Circuits that may have a frame in reassembly at once (Penn: 256).
    pub max_circuits: usize,
}

impl Default for ReassemblerConfig {
    fn default() -> Self {
        ReassemblerConfig { max_circuits: 256 }
    }
}

/// A frame delivered whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The circuit it arrived on.
    pub circuit: VirtualCircuit,
    /// The CPCS user-to-user byte.
    pub uu: u8,
    /// Whether any of its cells carried the congestion (EFCI) bit.
    pub congestion: bool,
    /// The payload, without pad and trailer.
    pub data: Vec<u8>,
}

/// Why a cell was discarded, or a frame with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ReassemblyError {
    /// The cell itself was bad (length, HEC) or not user data; it is discarded.
    #[error(transparent)]
    Cell(#[from] CellError),
    /// The first cell of a frame on a new circuit found every circuit slot taken; the cell
    /// is discarded (and the rest of its frame will fail too).
    #[error("circuit table full: cell on VPI {}/VCI {} discarded", circuit.vpi, circuit.vci)]
    CircuitTableFull {
        /// The circuit refused.
        circuit: VirtualCircuit,
    },
    /// A cell without the end-of-frame mark would fill the largest CPCS-PDU (1,366 cells),
    /// whose last cell must carry the mark: an end was lost. What was collected is discarded.
    #[error("VPI {}/VCI {}: no end of frame after {MAX_PDU_BYTES} bytes", circuit.vpi, circuit.vci)]
    Oversize {
        /// The circuit.
        circuit: VirtualCircuit,
    },
    /// The CPCS-PDU failed its checks; the frame is discarded.
    #[error("VPI {}/VCI {}: {error}", circuit.vpi, circuit.vci)]
    Cpcs {
        /// The circuit.
        circuit: VirtualCircuit,
        /// What was wrong.
        error: CpcsError,
    },
}

#[derive(Debug, Default)]
struct Context {
    congestion: bool,
    data: Vec<u8>,
}

/// Reassembles AAL5 frames from cells of many circuits, interleaved.
#[derive(Debug)]
pub struct Reassembler {
    contexts: Cam<VirtualCircuit, Context>,
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
            contexts: Cam::new(config.max_circuits),
        }
    }

    /// Frames in reassembly now.
    pub fn in_progress(&self) -> usize {
        self.contexts.len()
    }

    /// The circuits with a frame in reassembly now, in order.
    pub fn active(&self) -> impl Iterator<Item = VirtualCircuit> + '_ {
        self.contexts.keys()
    }

    /// Takes one cell from the line (53 bytes). Idle and unassigned cells are absorbed.
    pub fn push_cell(&mut self, cell: &[u8]) -> Result<Option<Frame>, ReassemblyError> {
        match receive_user_cell(cell)? {
            None => Ok(None),
            Some((header, payload)) => self.push_payload(&header, payload),
        }
    }

    /// Takes the 48-byte payload of a user cell whose header is `header`.
    pub fn push_payload(
        &mut self,
        header: &CellRepr,
        payload: &[u8],
    ) -> Result<Option<Frame>, ReassemblyError> {
        let circuit = header.circuit;
        let PayloadType::UserData { congestion, last } = header.payload_type else {
            return Err(CellError::NotUserData {
                circuit,
                payload_type: header.payload_type,
            }
            .into());
        };
        let mut context = match self.contexts.get_mut(circuit) {
            Some(context) if !last => {
                if context.data.len() + payload.len() >= MAX_PDU_BYTES {
                    self.contexts.remove(circuit);
                    return Err(ReassemblyError::Oversize { circuit });
                }
                context.congestion |= congestion;
                context.data.extend_from_slice(payload);
                return Ok(None);
            }
            Some(_) => self.contexts.remove(circuit).unwrap_or_default(),
            None if !last => {
                let context = Context {
                    congestion,
                    data: payload.to_vec(),
                };
                self.contexts
                    .insert(circuit, context)
                    .map_err(|_| ReassemblyError::CircuitTableFull { circuit })?;
                return Ok(None);
            }
            // A one-cell frame needs no slot.
            None => Context::default(),
        };
        context.congestion |= congestion;
        context.data.extend_from_slice(payload);
        deliver(circuit, context)
    }

    /// Discards the frame in reassembly on `circuit`; returns whether there was one.
    pub fn flush_circuit(&mut self, circuit: VirtualCircuit) -> bool {
        self.contexts.remove(circuit).is_some()
    }
}

fn deliver(circuit: VirtualCircuit, context: Context) -> Result<Option<Frame>, ReassemblyError> {
    let Context { congestion, mut data } = context;
    let repr = CpcsPdu::new_checked(&data[..])
        .and_then(|pdu| CpcsRepr::parse(&pdu))
        .map_err(|error| ReassemblyError::Cpcs { circuit, error })?;
    data.truncate(usize::from(repr.length));
    Ok(Some(Frame {
        circuit,
        uu: repr.uu,
        congestion,
        data,
    }))
}

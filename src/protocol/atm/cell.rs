//! The 53-byte ATM cell with its UNI header (ITU-T I.361) and header error control (ITU-T
//! I.432.1): field widths, the HEC polynomial and coset, and the test vectors come from
//! `shared/systems/atm.md`; the idle cell's payload byte 0x6A from I.432.1.
//!
//! The Penn interface uses the HEC for detection only: a cell whose HEC does not match is
//! discarded, never corrected, so [`CellRepr::parse`] rejects it.

use thiserror::Error;

use super::crc::{HEC_COSET, crc8};

/// Bytes in a cell.
pub const CELL_BYTES: usize = 53;
/// Bytes in the header, HEC included.
pub const HEADER_BYTES: usize = 5;
/// Bytes of payload.
pub const PAYLOAD_BYTES: usize = 48;
/// Every payload byte of an idle cell (I.432.1).
pub const IDLE_PAYLOAD_BYTE: u8 = 0x6A;
/// The four header bytes before the HEC of an idle cell: all zero but CLP.
pub const IDLE_HEADER: [u8; 4] = [0x00, 0x00, 0x00, 0x01];

/// A whole idle cell, as the transmission convergence sublayer inserts it when it has no
/// assigned cell to send.
pub const IDLE_CELL: [u8; CELL_BYTES] = {
    let mut cell = [IDLE_PAYLOAD_BYTE; CELL_BYTES];
    cell[0] = IDLE_HEADER[0];
    cell[1] = IDLE_HEADER[1];
    cell[2] = IDLE_HEADER[2];
    cell[3] = IDLE_HEADER[3];
    cell[4] = 0x52;
    cell
};

/// The HEC of the first four header bytes: CRC-8 (x⁸+x²+x+1, init 0, MSB first) XOR 0x55.
pub fn hec(header: &[u8; 4]) -> u8 {
    crc8(header) ^ HEC_COSET
}

/// A virtual circuit as the UNI header names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct VirtualCircuit {
    /// Virtual path identifier (8 bits at the UNI).
    pub vpi: u8,
    /// Virtual channel identifier (16 bits).
    pub vci: u16,
}

impl VirtualCircuit {
    /// A circuit from its VPI and VCI.
    pub const fn new(vpi: u8, vci: u16) -> Self {
        VirtualCircuit { vpi, vci }
    }

    /// VPI 0 / VCI 0 is never a user circuit: idle (I.432.1) and unassigned (I.361) cells.
    pub const fn is_unassigned(self) -> bool {
        self.vpi == 0 && self.vci == 0
    }
}

/// The 3-bit payload type field (I.361).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadType {
    /// `0xy`: user data. `congestion` is the EFCI bit x; `last` the ATM-user-to-ATM-user bit y,
    /// which AAL5 sets in the last cell of a frame.
    UserData {
        /// Explicit forward congestion indication.
        congestion: bool,
        /// ATM-user-to-ATM-user indication (AAL5: end of frame).
        last: bool,
    },
    /// `100`: OAM F5 segment cell.
    OamSegment,
    /// `101`: OAM F5 end-to-end cell.
    OamEndToEnd,
    /// `110`: resource management cell.
    ResourceManagement,
    /// `111`: reserved.
    Reserved,
}

impl PayloadType {
    /// Decodes the low 3 bits of `bits`; higher bits are ignored.
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b111 {
            0b100 => PayloadType::OamSegment,
            0b101 => PayloadType::OamEndToEnd,
            0b110 => PayloadType::ResourceManagement,
            0b111 => PayloadType::Reserved,
            b => PayloadType::UserData {
                congestion: b & 0b010 != 0,
                last: b & 0b001 != 0,
            },
        }
    }

    /// The 3-bit code.
    pub const fn bits(self) -> u8 {
        match self {
            PayloadType::UserData { congestion, last } => ((congestion as u8) << 1) | last as u8,
            PayloadType::OamSegment => 0b100,
            PayloadType::OamEndToEnd => 0b101,
            PayloadType::ResourceManagement => 0b110,
            PayloadType::Reserved => 0b111,
        }
    }
}

/// Why a cell was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CellError {
    /// The buffer holds fewer than 53 bytes.
    #[error("cell truncated: {len} bytes, need {CELL_BYTES}")]
    Truncated {
        /// Bytes present [bytes].
        len: usize,
    },
    /// The HEC does not match the header: the cell is discarded (detection only).
    #[error("HEC mismatch: header gives {computed:#04x}, cell carries {received:#04x}")]
    HecMismatch {
        /// HEC computed over the four header bytes.
        computed: u8,
        /// HEC carried in byte 5.
        received: u8,
    },
    /// A representation to emit has a GFC that does not fit in 4 bits.
    #[error("GFC {0} does not fit in 4 bits")]
    GfcRange(u8),
    /// A valid cell whose payload type is not user data (OAM, RM, reserved): an AAL does not
    /// take it.
    #[error("cell on VPI {}/VCI {} is not user data: {payload_type:?}", circuit.vpi, circuit.vci)]
    NotUserData {
        /// The circuit the cell arrived on.
        circuit: VirtualCircuit,
        /// Its payload type.
        payload_type: PayloadType,
    },
}

/// A read/write view of a cell in a byte buffer.
///
/// [`Cell::new_checked`] ensures the buffer holds at least 53 bytes, so that no accessor
/// method will panic if called; bytes past the 53rd are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Cell<T> {
    /// Wraps `buffer` after checking that it is long enough for a cell.
    pub fn new_checked(buffer: T) -> Result<Self, CellError> {
        let len = buffer.as_ref().len();
        if len < CELL_BYTES {
            return Err(CellError::Truncated { len });
        }
        Ok(Cell { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    // new_checked guarantees at least CELL_BYTES, so indexing below this bound cannot fail.
    fn bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[..CELL_BYTES]
    }

    /// Generic flow control (4 bits).
    pub fn gfc(&self) -> u8 {
        self.bytes()[0] >> 4
    }

    /// Virtual path identifier (8 bits).
    pub fn vpi(&self) -> u8 {
        let b = self.bytes();
        (b[0] << 4) | (b[1] >> 4)
    }

    /// Virtual channel identifier (16 bits).
    pub fn vci(&self) -> u16 {
        let b = self.bytes();
        (u16::from(b[1] & 0x0F) << 12) | (u16::from(b[2]) << 4) | u16::from(b[3] >> 4)
    }

    /// VPI and VCI together.
    pub fn circuit(&self) -> VirtualCircuit {
        VirtualCircuit::new(self.vpi(), self.vci())
    }

    /// Payload type (3 bits).
    pub fn payload_type(&self) -> PayloadType {
        PayloadType::from_bits(self.bytes()[3] >> 1)
    }

    /// Cell loss priority: `true` means the cell may be dropped first.
    pub fn clp(&self) -> bool {
        self.bytes()[3] & 1 != 0
    }

    /// The HEC byte as carried.
    pub fn hec(&self) -> u8 {
        self.bytes()[4]
    }

    /// The four header bytes the HEC covers.
    pub fn header(&self) -> [u8; 4] {
        let b = self.bytes();
        [b[0], b[1], b[2], b[3]]
    }

    /// Whether the carried HEC matches the header.
    pub fn hec_ok(&self) -> bool {
        hec(&self.header()) == self.hec()
    }

    /// The 48 payload bytes.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[HEADER_BYTES..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Cell<T> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[..CELL_BYTES]
    }

    /// Sets the GFC from the low 4 bits of `gfc`.
    pub fn set_gfc(&mut self, gfc: u8) {
        let b = self.bytes_mut();
        b[0] = (gfc << 4) | (b[0] & 0x0F);
    }

    /// Sets the VPI.
    pub fn set_vpi(&mut self, vpi: u8) {
        let b = self.bytes_mut();
        b[0] = (b[0] & 0xF0) | (vpi >> 4);
        b[1] = (vpi << 4) | (b[1] & 0x0F);
    }

    /// Sets the VCI.
    pub fn set_vci(&mut self, vci: u16) {
        let b = self.bytes_mut();
        b[1] = (b[1] & 0xF0) | (vci >> 12) as u8;
        b[2] = (vci >> 4) as u8;
        b[3] = ((vci as u8) << 4) | (b[3] & 0x0F);
    }

    /// Sets the payload type.
    pub fn set_payload_type(&mut self, payload_type: PayloadType) {
        let b = self.bytes_mut();
        b[3] = (b[3] & 0xF1) | (payload_type.bits() << 1);
    }

    /// Sets the cell loss priority.
    pub fn set_clp(&mut self, clp: bool) {
        let b = self.bytes_mut();
        b[3] = (b[3] & 0xFE) | u8::from(clp);
    }

    /// Computes the HEC over the header as it now stands and stores it.
    pub fn fill_hec(&mut self) {
        let value = hec(&self.header());
        self.bytes_mut()[4] = value;
    }

    /// The 48 payload bytes, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bytes_mut()[HEADER_BYTES..]
    }
}

/// A validated cell header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CellRepr {
    /// Generic flow control (4 bits; 0 unless a GFC protocol is run).
    pub gfc: u8,
    /// The circuit.
    pub circuit: VirtualCircuit,
    /// Payload type.
    pub payload_type: PayloadType,
    /// Cell loss priority.
    pub clp: bool,
}

impl CellRepr {
    /// A user-data header on `circuit` with GFC 0, no congestion, AUU 0 and CLP 0.
    pub const fn user(circuit: VirtualCircuit) -> Self {
        CellRepr {
            gfc: 0,
            circuit,
            payload_type: PayloadType::UserData {
                congestion: false,
                last: false,
            },
            clp: false,
        }
    }

    /// Reads the header of `cell`, rejecting it if the HEC does not match.
    pub fn parse<T: AsRef<[u8]>>(cell: &Cell<T>) -> Result<Self, CellError> {
        let computed = hec(&cell.header());
        if computed != cell.hec() {
            return Err(CellError::HecMismatch {
                computed,
                received: cell.hec(),
            });
        }
        Ok(CellRepr {
            gfc: cell.gfc(),
            circuit: cell.circuit(),
            payload_type: cell.payload_type(),
            clp: cell.clp(),
        })
    }

    /// Writes the header, HEC included, into `cell`; the payload is left as it is.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, cell: &mut Cell<T>) -> Result<(), CellError> {
        let header = self.header_bytes()?;
        cell.bytes_mut()[..HEADER_BYTES].copy_from_slice(&header);
        Ok(())
    }

    /// The five header bytes, HEC included.
    pub fn header_bytes(&self) -> Result<[u8; HEADER_BYTES], CellError> {
        if self.gfc > 0x0F {
            return Err(CellError::GfcRange(self.gfc));
        }
        let VirtualCircuit { vpi, vci } = self.circuit;
        let head = [
            (self.gfc << 4) | (vpi >> 4),
            (vpi << 4) | (vci >> 12) as u8,
            (vci >> 4) as u8,
            ((vci as u8) << 4) | (self.payload_type.bits() << 1) | u8::from(self.clp),
        ];
        Ok([head[0], head[1], head[2], head[3], hec(&head)])
    }

    /// Whether this is the header of an idle cell.
    pub fn is_idle(&self) -> bool {
        self.header_bytes().is_ok_and(|h| h[..4] == IDLE_HEADER)
    }
}

/// What a receiver makes of one cell from the line before any AAL sees it.
///
/// Returns `Ok(None)` for idle and unassigned cells (VPI 0, VCI 0), which carry nothing for
/// anyone; `Ok(Some(..))` for a user-data cell with its header and payload; otherwise the
/// reason the cell is discarded.
pub fn receive_user_cell(bytes: &[u8]) -> Result<Option<(CellRepr, &[u8])>, CellError> {
    let cell = Cell::new_checked(bytes)?;
    let repr = CellRepr::parse(&cell)?;
    if repr.circuit.is_unassigned() {
        return Ok(None);
    }
    match repr.payload_type {
        PayloadType::UserData { .. } => Ok(Some((repr, &bytes[HEADER_BYTES..CELL_BYTES]))),
        payload_type => Err(CellError::NotUserData {
            circuit: repr.circuit,
            payload_type,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user cell on VPI 0x12, VCI 0x3456, PT 001 (AUU), CLP 1, payload 0..48.
    static USER_CELL_HEADER: [u8; 5] = [0x01, 0x23, 0x45, 0x63, 0x00];

    #[test]
    fn hec_vectors() {
        assert_eq!(hec(&[0x00, 0x00, 0x00, 0x00]), 0x55);
        assert_eq!(hec(&[0x00, 0x00, 0x00, 0x01]), 0x52);
        assert_eq!(hec(&[0x01, 0x23, 0x45, 0x67]), 0x95);
    }

    #[test]
    fn idle_cell_is_valid_and_skipped() {
        let cell = Cell::new_checked(&IDLE_CELL[..]).unwrap();
        assert!(cell.hec_ok());
        let repr = CellRepr::parse(&cell).unwrap();
        assert!(repr.is_idle());
        assert!(repr.clp);
        assert_eq!(receive_user_cell(&IDLE_CELL), Ok(None));
    }

    #[test]
    fn parse_and_emit_round_trip() {
        let mut bytes = [0u8; CELL_BYTES];
        bytes[..4].copy_from_slice(&USER_CELL_HEADER[..4]);
        bytes[4] = hec(&[0x01, 0x23, 0x45, 0x63]);
        for (i, b) in bytes[HEADER_BYTES..].iter_mut().enumerate() {
            *b = i as u8;
        }
        let cell = Cell::new_checked(&bytes[..]).unwrap();
        let repr = CellRepr::parse(&cell).unwrap();
        assert_eq!(repr.gfc, 0);
        assert_eq!(repr.circuit, VirtualCircuit::new(0x12, 0x3456));
        assert_eq!(
            repr.payload_type,
            PayloadType::UserData {
                congestion: false,
                last: true
            }
        );
        assert!(repr.clp);
        assert_eq!(cell.payload()[47], 47);

        let mut out = [0u8; CELL_BYTES];
        let mut view = Cell::new_checked(&mut out[..]).unwrap();
        repr.emit(&mut view).unwrap();
        view.payload_mut().copy_from_slice(&bytes[HEADER_BYTES..]);
        assert_eq!(out, bytes);
    }

    #[test]
    fn setters_agree_with_repr() {
        let repr = CellRepr {
            gfc: 0xA,
            circuit: VirtualCircuit::new(0xBC, 0xDEF1),
            payload_type: PayloadType::OamEndToEnd,
            clp: true,
        };
        let mut bytes = [0u8; CELL_BYTES];
        let mut cell = Cell::new_checked(&mut bytes[..]).unwrap();
        cell.set_gfc(repr.gfc);
        cell.set_vpi(repr.circuit.vpi);
        cell.set_vci(repr.circuit.vci);
        cell.set_payload_type(repr.payload_type);
        cell.set_clp(repr.clp);
        cell.fill_hec();
        assert_eq!(bytes[..HEADER_BYTES], repr.header_bytes().unwrap());
    }

    #[test]
    fn payload_type_codes_round_trip() {
        for bits in 0..8 {
            assert_eq!(PayloadType::from_bits(bits).bits(), bits);
        }
    }

    #[test]
    fn rejections() {
        assert_eq!(
            Cell::new_checked(&[0u8; 52][..]).unwrap_err(),
            CellError::Truncated { len: 52 }
        );
        let mut bad = IDLE_CELL;
        bad[4] ^= 1;
        assert_eq!(
            receive_user_cell(&bad),
            Err(CellError::HecMismatch {
                computed: 0x52,
                received: 0x53
            })
        );
        let repr = CellRepr {
            gfc: 16,
            ..CellRepr::user(VirtualCircuit::new(1, 1))
        };
        assert_eq!(repr.header_bytes(), Err(CellError::GfcRange(16)));
        let oam = CellRepr {
            payload_type: PayloadType::OamSegment,
            ..CellRepr::user(VirtualCircuit::new(1, 1))
        };
        let mut cell = [0u8; CELL_BYTES];
        cell[..HEADER_BYTES].copy_from_slice(&oam.header_bytes().unwrap());
        assert!(matches!(
            receive_user_cell(&cell),
            Err(CellError::NotUserData { .. })
        ));
    }

    #[test]
    fn every_single_header_bit_error_is_caught_by_hec() {
        let repr = CellRepr::user(VirtualCircuit::new(7, 1234));
        let mut cell = [0u8; CELL_BYTES];
        cell[..HEADER_BYTES].copy_from_slice(&repr.header_bytes().unwrap());
        for bit in 0..HEADER_BYTES * 8 {
            let mut hit = cell;
            hit[bit / 8] ^= 0x80 >> (bit % 8);
            assert!(!Cell::new_checked(&hit[..]).unwrap().hec_ok(), "bit {bit}");
        }
    }
}

//! The AAL3/4 SAR-PDU (ITU-T I.363.3): 48 bytes = ST 2 bits, SN 4, MID 10, 44 bytes of
//! payload, LI 6, CRC-10 10. Layout, codes and the test vector from `shared/systems/atm.md`;
//! the length-indicator rules per segment type from I.363.3.

use thiserror::Error;

use crate::protocol::atm::crc::{crc10, crc10_update, crc10_update_bits};

/// Bytes in a SAR-PDU (one cell payload).
pub const SAR_PDU_BYTES: usize = 48;
/// Bytes of CS-PDU carried per SAR-PDU.
pub const SAR_PAYLOAD_BYTES: usize = 44;
/// Length indicator of an EOM that aborts the CS-PDU in progress.
pub const LI_ABORT: u8 = 63;
/// Largest multiplexing identifier (10 bits).
pub const MID_MAX: u16 = 1023;
/// Sequence numbers count modulo this.
pub const SN_MODULUS: u8 = 16;

/// The segment type: where this SAR-PDU sits in its CS-PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegmentType {
    /// `10`: beginning of message.
    Bom,
    /// `00`: continuation of message.
    Com,
    /// `01`: end of message.
    Eom,
    /// `11`: single-segment message.
    Ssm,
}

impl SegmentType {
    /// Decodes the low 2 bits.
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b10 => SegmentType::Bom,
            0b00 => SegmentType::Com,
            0b01 => SegmentType::Eom,
            _ => SegmentType::Ssm,
        }
    }

    /// The 2-bit code.
    pub const fn bits(self) -> u8 {
        match self {
            SegmentType::Bom => 0b10,
            SegmentType::Com => 0b00,
            SegmentType::Eom => 0b01,
            SegmentType::Ssm => 0b11,
        }
    }

    /// Whether `li` is a legal length indicator for this segment type (I.363.3): 44 in a BOM
    /// or COM, 4..=44 or 63 (abort) in an EOM, 8..=44 in an SSM (a CS-PDU has a 4-byte header
    /// and a 4-byte trailer).
    pub const fn li_allowed(self, li: u8) -> bool {
        match self {
            SegmentType::Bom | SegmentType::Com => li == SAR_PAYLOAD_BYTES as u8,
            SegmentType::Eom => (li >= 4 && li <= SAR_PAYLOAD_BYTES as u8) || li == LI_ABORT,
            SegmentType::Ssm => li >= 8 && li <= SAR_PAYLOAD_BYTES as u8,
        }
    }
}

/// Why a SAR-PDU was rejected or cannot be emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SarError {
    /// The buffer holds fewer than 48 bytes.
    #[error("SAR-PDU truncated: {len} bytes, need {SAR_PDU_BYTES}")]
    Truncated {
        /// Bytes present [bytes].
        len: usize,
    },
    /// The CRC-10 over the whole PDU is not zero: some bit of the PDU is wrong.
    #[error("CRC-10 mismatch: PDU gives {computed:#05x}, field holds {received:#05x}")]
    Crc {
        /// CRC-10 computed over the first 374 bits.
        computed: u16,
        /// CRC-10 carried in the last 10 bits.
        received: u16,
    },
    /// The length indicator is not legal for the segment type.
    #[error("length indicator {li} is not allowed in a {segment_type:?}")]
    LengthIndicator {
        /// Segment type of the PDU.
        segment_type: SegmentType,
        /// Length indicator carried [bytes].
        li: u8,
    },
    /// A representation to emit has a sequence number of 16 or more.
    #[error("sequence number {0} does not fit in 4 bits")]
    SnRange(u8),
    /// A representation to emit has a MID above 1023.
    #[error("MID {0} does not fit in 10 bits")]
    MidRange(u16),
}

/// CRC-10 of a SAR-PDU's first 374 bits: everything but the CRC field.
fn crc_of(pdu: &[u8]) -> u16 {
    let head = crc10_update(0, &pdu[..SAR_PDU_BYTES - 2]);
    crc10_update_bits(head, u16::from(pdu[SAR_PDU_BYTES - 2] >> 2), 6)
}

/// A read/write view of a SAR-PDU in a byte buffer.
///
/// [`SarPdu::new_checked`] ensures the buffer holds at least 48 bytes, so that no accessor
/// method will panic if called; bytes past the 48th are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SarPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SarPdu<T> {
    /// Wraps `buffer` after checking that it is long enough.
    pub fn new_checked(buffer: T) -> Result<Self, SarError> {
        let len = buffer.as_ref().len();
        if len < SAR_PDU_BYTES {
            return Err(SarError::Truncated { len });
        }
        Ok(SarPdu { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    // new_checked guarantees at least SAR_PDU_BYTES.
    fn bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[..SAR_PDU_BYTES]
    }

    /// Segment type.
    pub fn segment_type(&self) -> SegmentType {
        SegmentType::from_bits(self.bytes()[0] >> 6)
    }

    /// Sequence number (4 bits).
    pub fn sn(&self) -> u8 {
        (self.bytes()[0] >> 2) & 0x0F
    }

    /// Multiplexing identifier (10 bits).
    pub fn mid(&self) -> u16 {
        let b = self.bytes();
        (u16::from(b[0] & 0x03) << 8) | u16::from(b[1])
    }

    /// The 44 payload bytes, used or not.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[2..2 + SAR_PAYLOAD_BYTES]
    }

    /// Length indicator: payload bytes used (6 bits) [bytes].
    pub fn li(&self) -> u8 {
        self.bytes()[46] >> 2
    }

    /// The CRC-10 field as carried.
    pub fn crc(&self) -> u16 {
        let b = self.bytes();
        (u16::from(b[46] & 0x03) << 8) | u16::from(b[47])
    }

    /// The CRC-10 the PDU should carry.
    pub fn computed_crc(&self) -> u16 {
        crc_of(self.bytes())
    }

    /// Whether the whole PDU, CRC field included, divides by the generator.
    pub fn crc_ok(&self) -> bool {
        crc10(self.bytes()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SarPdu<T> {
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[..SAR_PDU_BYTES]
    }

    /// The 44 payload bytes, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bytes_mut()[2..2 + SAR_PAYLOAD_BYTES]
    }

    /// Computes the CRC-10 over the PDU as it now stands and stores it.
    pub fn fill_crc(&mut self) {
        let crc = crc_of(self.bytes());
        let b = self.bytes_mut();
        b[46] = (b[46] & 0xFC) | (crc >> 8) as u8;
        b[47] = crc as u8;
    }
}

/// A validated SAR-PDU header and trailer (the payload stays in the buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SarRepr {
    /// Segment type.
    pub segment_type: SegmentType,
    /// Sequence number, 0..=15.
    pub sn: u8,
    /// Multiplexing identifier, 0..=1023.
    pub mid: u16,
    /// Length indicator [bytes]; [`LI_ABORT`] in an aborting EOM.
    pub li: u8,
}

impl SarRepr {
    /// Reads a SAR-PDU, rejecting it if its CRC-10 fails or its LI is illegal for its type.
    pub fn parse<T: AsRef<[u8]>>(pdu: &SarPdu<T>) -> Result<Self, SarError> {
        if !pdu.crc_ok() {
            return Err(SarError::Crc {
                computed: pdu.computed_crc(),
                received: pdu.crc(),
            });
        }
        let repr = SarRepr {
            segment_type: pdu.segment_type(),
            sn: pdu.sn(),
            mid: pdu.mid(),
            li: pdu.li(),
        };
        if !repr.segment_type.li_allowed(repr.li) {
            return Err(SarError::LengthIndicator {
                segment_type: repr.segment_type,
                li: repr.li,
            });
        }
        Ok(repr)
    }

    /// The bytes of payload this PDU contributes to its CS-PDU (0 for an abort) [bytes].
    pub fn used(&self) -> usize {
        if self.li == LI_ABORT {
            0
        } else {
            usize::from(self.li).min(SAR_PAYLOAD_BYTES)
        }
    }

    /// Writes header, trailer and CRC-10 into `pdu`. The CRC covers the payload, so write the
    /// payload first.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, pdu: &mut SarPdu<T>) -> Result<(), SarError> {
        if self.sn >= SN_MODULUS {
            return Err(SarError::SnRange(self.sn));
        }
        if self.mid > MID_MAX {
            return Err(SarError::MidRange(self.mid));
        }
        if !self.segment_type.li_allowed(self.li) {
            return Err(SarError::LengthIndicator {
                segment_type: self.segment_type,
                li: self.li,
            });
        }
        self.write_into(pdu.bytes_mut());
        Ok(())
    }

    /// Writes the fields and the CRC-10 into the first 48 bytes of `pdu`, which the caller
    /// guarantees; fields are masked to their widths, so validate first.
    pub(super) fn write_into(&self, pdu: &mut [u8]) {
        pdu[0] = (self.segment_type.bits() << 6) | ((self.sn & 0x0F) << 2) | ((self.mid >> 8) as u8 & 0x03);
        pdu[1] = self.mid as u8;
        pdu[46] = self.li << 2;
        let crc = crc_of(pdu);
        pdu[46] |= (crc >> 8) as u8;
        pdu[47] = crc as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BOM, SN 0, MID 0, 44 zero bytes, LI 44: `shared/systems/atm.md`.
    static BOM_ZERO: [u8; SAR_PDU_BYTES] = {
        let mut pdu = [0u8; SAR_PDU_BYTES];
        pdu[0] = 0x80;
        pdu[46] = 0xB0;
        pdu[47] = 0x09;
        pdu
    };

    #[test]
    fn spec_vector_parses_and_re_emits() {
        let pdu = SarPdu::new_checked(&BOM_ZERO[..]).unwrap();
        assert!(pdu.crc_ok());
        assert_eq!(pdu.crc(), 0x009);
        assert_eq!(crc10(&BOM_ZERO), 0);
        let repr = SarRepr::parse(&pdu).unwrap();
        assert_eq!(
            repr,
            SarRepr {
                segment_type: SegmentType::Bom,
                sn: 0,
                mid: 0,
                li: 44
            }
        );
        let mut out = [0u8; SAR_PDU_BYTES];
        repr.emit(&mut SarPdu::new_checked(&mut out[..]).unwrap())
            .unwrap();
        assert_eq!(out, BOM_ZERO);
    }

    #[test]
    fn fields_round_trip() {
        let repr = SarRepr {
            segment_type: SegmentType::Eom,
            sn: 13,
            mid: 0x2A5,
            li: 20,
        };
        let mut out = [0u8; SAR_PDU_BYTES];
        let mut pdu = SarPdu::new_checked(&mut out[..]).unwrap();
        pdu.payload_mut().fill(0xC3);
        repr.emit(&mut pdu).unwrap();
        assert_eq!(SarRepr::parse(&pdu), Ok(repr));
        assert_eq!(crc10(&out), 0);
    }

    #[test]
    fn every_single_bit_error_is_caught_by_crc10() {
        for bit in 0..SAR_PDU_BYTES * 8 {
            let mut hit = BOM_ZERO;
            hit[bit / 8] ^= 0x80 >> (bit % 8);
            let pdu = SarPdu::new_checked(&hit[..]).unwrap();
            assert!(
                matches!(SarRepr::parse(&pdu), Err(SarError::Crc { .. })),
                "bit {bit}"
            );
        }
    }

    #[test]
    fn illegal_fields_are_refused() {
        let mut out = [0u8; SAR_PDU_BYTES];
        let mut pdu = SarPdu::new_checked(&mut out[..]).unwrap();
        let good = SarRepr {
            segment_type: SegmentType::Ssm,
            sn: 0,
            mid: 0,
            li: 8,
        };
        assert_eq!(
            SarRepr { sn: 16, ..good }.emit(&mut pdu),
            Err(SarError::SnRange(16))
        );
        assert_eq!(
            SarRepr { mid: 1024, ..good }.emit(&mut pdu),
            Err(SarError::MidRange(1024))
        );
        assert!(SarRepr { li: 63, ..good }.emit(&mut pdu).is_err());
        assert!(SarRepr { li: 4, ..good }.emit(&mut pdu).is_err());
        assert!(
            SarRepr {
                segment_type: SegmentType::Com,
                li: 40,
                ..good
            }
            .emit(&mut pdu)
            .is_err()
        );
        assert!(
            SarRepr {
                segment_type: SegmentType::Eom,
                li: 63,
                ..good
            }
            .emit(&mut pdu)
            .is_ok()
        );
        assert_eq!(
            SarPdu::new_checked(&[0u8; 47][..]).unwrap_err(),
            SarError::Truncated { len: 47 }
        );
        // A PDU with a good CRC but an LI of 50.
        let mut raw = [0u8; SAR_PDU_BYTES];
        raw[46] = 50 << 2;
        let mut pdu = SarPdu::new_checked(&mut raw[..]).unwrap();
        pdu.fill_crc();
        assert_eq!(
            SarRepr::parse(&pdu),
            Err(SarError::LengthIndicator {
                segment_type: SegmentType::Com,
                li: 50
            })
        );
    }
}

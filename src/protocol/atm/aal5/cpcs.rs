//! The AAL5 CPCS-PDU (ITU-T I.363.5): payload (1..=65,535 bytes), 0–47 bytes of pad, and the
//! trailer CPCS-UU 1 byte, CPI 1 (zero), Length 2, CRC-32 4, so that the whole is a multiple
//! of 48 bytes. The CRC-32 (polynomial 0x04C11DB7, init all ones, MSB first, complemented)
//! covers everything before it. A Length of zero is the abort indication.

use thiserror::Error;

use crate::protocol::atm::cell::PAYLOAD_BYTES;
use crate::protocol::atm::crc::crc32_aal5;

/// Bytes of trailer.
pub const TRAILER_BYTES: usize = 8;
/// Largest payload the Length field can describe [bytes].
pub const MAX_PAYLOAD: usize = 65_535;
/// Largest CPCS-PDU [bytes]: 1,366 cells.
pub const MAX_PDU_BYTES: usize = cpcs_pdu_len(MAX_PAYLOAD);

/// Pad bytes after a payload of `payload_len` bytes [bytes].
pub const fn padding(payload_len: usize) -> usize {
    (PAYLOAD_BYTES - (payload_len + TRAILER_BYTES) % PAYLOAD_BYTES) % PAYLOAD_BYTES
}

/// Bytes in the CPCS-PDU that carries `payload_len` bytes.
pub const fn cpcs_pdu_len(payload_len: usize) -> usize {
    payload_len + padding(payload_len) + TRAILER_BYTES
}

/// Cells needed to carry a frame of `frame_len` bytes.
pub const fn cell_count(frame_len: usize) -> usize {
    cpcs_pdu_len(frame_len) / PAYLOAD_BYTES
}

/// Why a reassembled CPCS-PDU was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CpcsError {
    /// Shorter than the trailer.
    #[error("CPCS-PDU truncated: {len} bytes, need at least 8")]
    Truncated {
        /// Bytes present [bytes].
        len: usize,
    },
    /// Not a whole number of cell payloads.
    #[error("CPCS-PDU of {len} bytes is not a multiple of 48")]
    Unaligned {
        /// Bytes present [bytes].
        len: usize,
    },
    /// The CRC-32 does not match: bits were damaged, or cells lost or joined.
    #[error("CRC-32 mismatch: PDU gives {computed:#010x}, trailer holds {received:#010x}")]
    Crc {
        /// CRC-32 computed over all but the last 4 bytes.
        computed: u32,
        /// CRC-32 carried in the trailer.
        received: u32,
    },
    /// Length zero: the sender aborted the frame.
    #[error("frame aborted by the sender (Length 0)")]
    Aborted,
    /// The common part indicator is not zero.
    #[error("CPI {0} is not defined")]
    Cpi(u8),
    /// The Length field does not fit the PDU with 0–47 bytes of pad.
    #[error("Length field says {length} bytes, but the CPCS-PDU has {pdu_len} bytes")]
    LengthMismatch {
        /// Payload length from the trailer [bytes].
        length: u16,
        /// Bytes in the PDU received [bytes].
        pdu_len: usize,
    },
}

/// A read view of a whole CPCS-PDU in a byte buffer.
///
/// [`CpcsPdu::new_checked`] ensures the trailer is present, so that no accessor method will
/// panic if called; the buffer's length is the PDU's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpcsPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CpcsPdu<T> {
    /// Wraps `buffer` after checking that it can hold the trailer.
    pub fn new_checked(buffer: T) -> Result<Self, CpcsError> {
        let len = buffer.as_ref().len();
        if len < TRAILER_BYTES {
            return Err(CpcsError::Truncated { len });
        }
        Ok(CpcsPdu { buffer })
    }

    fn trailer(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[b.len() - TRAILER_BYTES..]
    }

    /// CPCS user-to-user byte, passed through to the receiving user.
    pub fn uu(&self) -> u8 {
        self.trailer()[0]
    }

    /// Common part indicator.
    pub fn cpi(&self) -> u8 {
        self.trailer()[1]
    }

    /// Payload length [bytes].
    pub fn length(&self) -> u16 {
        let t = self.trailer();
        u16::from_be_bytes([t[2], t[3]])
    }

    /// The CRC-32 as carried.
    pub fn crc(&self) -> u32 {
        let t = self.trailer();
        u32::from_be_bytes([t[4], t[5], t[6], t[7]])
    }

    /// The CRC-32 the PDU should carry.
    pub fn computed_crc(&self) -> u32 {
        let b = self.buffer.as_ref();
        crc32_aal5(&b[..b.len() - 4])
    }

    /// The payload as the Length field describes it, cut short if the PDU is too short.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[..usize::from(self.length()).min(b.len() - TRAILER_BYTES)]
    }
}

/// A validated CPCS-PDU trailer (CPI is always zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpcsRepr {
    /// CPCS user-to-user byte.
    pub uu: u8,
    /// Payload length [bytes], 1..=65,535.
    pub length: u16,
}

impl CpcsRepr {
    /// Checks a whole received CPCS-PDU: size, CRC-32, abort, CPI, Length.
    pub fn parse<T: AsRef<[u8]>>(pdu: &CpcsPdu<T>) -> Result<Self, CpcsError> {
        let pdu_len = pdu.buffer.as_ref().len();
        if pdu_len % PAYLOAD_BYTES != 0 {
            return Err(CpcsError::Unaligned { len: pdu_len });
        }
        let computed = pdu.computed_crc();
        if computed != pdu.crc() {
            return Err(CpcsError::Crc {
                computed,
                received: pdu.crc(),
            });
        }
        let length = pdu.length();
        if length == 0 {
            return Err(CpcsError::Aborted);
        }
        if pdu.cpi() != 0 {
            return Err(CpcsError::Cpi(pdu.cpi()));
        }
        if cpcs_pdu_len(usize::from(length)) != pdu_len {
            return Err(CpcsError::LengthMismatch { length, pdu_len });
        }
        Ok(CpcsRepr { uu: pdu.uu(), length })
    }

    /// The first four trailer bytes (UU, CPI, Length); the CRC-32 follows them.
    pub fn trailer_head(&self) -> [u8; 4] {
        let [hi, lo] = self.length.to_be_bytes();
        [self.uu, 0, hi, lo]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "123456789" with UU 0x5A: 9 bytes, 31 bytes of pad, trailer. The CRC-32 was computed
    /// independently, bit at a time (a Python script over the same 44 bytes), and pinned.
    fn vector() -> [u8; 48] {
        let mut pdu = [0u8; 48];
        pdu[..9].copy_from_slice(b"123456789");
        pdu[40..44].copy_from_slice(&[0x5A, 0x00, 0x00, 0x09]);
        pdu[44..].copy_from_slice(&VECTOR_CRC.to_be_bytes());
        pdu
    }
    const VECTOR_CRC: u32 = 0x984E_7C01;

    #[test]
    fn vector_parses() {
        let pdu = vector();
        let view = CpcsPdu::new_checked(&pdu[..]).unwrap();
        assert_eq!(view.computed_crc(), VECTOR_CRC);
        assert_eq!(CpcsRepr::parse(&view), Ok(CpcsRepr { uu: 0x5A, length: 9 }));
        assert_eq!(view.payload(), b"123456789");
        assert_eq!(CpcsRepr { uu: 0x5A, length: 9 }.trailer_head(), pdu[40..44]);
    }

    #[test]
    fn sizes() {
        assert_eq!(cpcs_pdu_len(1), 48);
        assert_eq!(cpcs_pdu_len(40), 48);
        assert_eq!(cpcs_pdu_len(41), 96);
        assert_eq!(MAX_PDU_BYTES, 65_568);
        assert_eq!(cell_count(MAX_PAYLOAD), 1_366);
    }

    #[test]
    fn rejections() {
        let check = |bytes: &[u8]| CpcsRepr::parse(&CpcsPdu::new_checked(bytes)?);
        let pdu = vector();
        assert_eq!(check(&pdu[..7]), Err(CpcsError::Truncated { len: 7 }));
        assert_eq!(check(&pdu[..47]), Err(CpcsError::Unaligned { len: 47 }));
        let mut bad = pdu;
        bad[3] ^= 0x10;
        assert!(matches!(check(&bad), Err(CpcsError::Crc { .. })));
        let refresh = |mut p: [u8; 48]| {
            let crc = crc32_aal5(&p[..44]);
            p[44..].copy_from_slice(&crc.to_be_bytes());
            p
        };
        let mut bad = pdu;
        bad[42..44].copy_from_slice(&[0, 0]);
        assert_eq!(check(&refresh(bad)), Err(CpcsError::Aborted));
        let mut bad = pdu;
        bad[41] = 1;
        assert_eq!(check(&refresh(bad)), Err(CpcsError::Cpi(1)));
        let mut bad = pdu;
        bad[43] = 41;
        assert_eq!(
            check(&refresh(bad)),
            Err(CpcsError::LengthMismatch {
                length: 41,
                pdu_len: 48
            })
        );
    }
}

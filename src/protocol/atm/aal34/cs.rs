//! The AAL3/4 common-part CS-PDU (ITU-T I.363.3): header CPI 1 byte, Btag 1, BASize 2;
//! payload; 0–3 bytes of pad to a multiple of 4; trailer AL 1, Etag 1 (= Btag), Length 2.
//! Layout from `shared/systems/atm.md`; the meaning of CPI 0 (counts in bytes) and of AL
//! (alignment only, zero) from I.363.3.

use thiserror::Error;

/// Bytes of CS-PDU header.
pub const CS_HEADER_BYTES: usize = 4;
/// Bytes of CS-PDU trailer.
pub const CS_TRAILER_BYTES: usize = 4;
/// Largest payload the 16-bit Length field can describe [bytes].
pub const CS_MAX_PAYLOAD: usize = 65_535;
/// The only common part indicator defined: BASize and Length count bytes.
pub const CPI_BYTES: u8 = 0;

/// Pad bytes after a payload of `payload_len` bytes [bytes].
pub const fn padding(payload_len: usize) -> usize {
    (4 - payload_len % 4) % 4
}

/// Bytes in the CS-PDU that carries `payload_len` bytes.
pub const fn cs_pdu_len(payload_len: usize) -> usize {
    CS_HEADER_BYTES + payload_len + padding(payload_len) + CS_TRAILER_BYTES
}

/// Why a reassembled CS-PDU was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CsError {
    /// Shorter than header and trailer together.
    #[error("CS-PDU truncated: {len} bytes, need at least 8")]
    Truncated {
        /// Bytes present [bytes].
        len: usize,
    },
    /// Not a whole number of 32-bit words: the segments did not add up.
    #[error("CS-PDU of {len} bytes is not a multiple of 4")]
    Unaligned {
        /// Bytes present [bytes].
        len: usize,
    },
    /// The common part indicator is not 0 (the only value defined).
    #[error("CPI {0} is not defined")]
    Cpi(u8),
    /// Beginning and end tags differ: the head and tail of two different CS-PDUs were joined.
    #[error("Btag {btag} and Etag {etag} differ")]
    TagMismatch {
        /// Tag in the header.
        btag: u8,
        /// Tag in the trailer.
        etag: u8,
    },
    /// The Length field does not account for the bytes received: segments were lost or gained.
    #[error("Length field says {length} bytes of payload, but the CS-PDU has {pdu_len} bytes")]
    LengthMismatch {
        /// Payload length from the trailer [bytes].
        length: u16,
        /// Bytes in the CS-PDU received [bytes].
        pdu_len: usize,
    },
    /// BASize, the buffer the sender announced, is smaller than the payload delivered.
    #[error("BASize {basize} is smaller than the payload length {length}")]
    BasizeTooSmall {
        /// Buffer allocation size from the header [bytes].
        basize: u16,
        /// Payload length from the trailer [bytes].
        length: u16,
    },
}

/// A read view of a whole CS-PDU (header, payload, pad, trailer) in a byte buffer.
///
/// [`CsPdu::new_checked`] ensures at least header and trailer are present, so that no
/// accessor method will panic if called; the buffer's length is the PDU's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CsPdu<T> {
    /// Wraps `buffer` after checking that it can hold header and trailer.
    pub fn new_checked(buffer: T) -> Result<Self, CsError> {
        let len = buffer.as_ref().len();
        if len < CS_HEADER_BYTES + CS_TRAILER_BYTES {
            return Err(CsError::Truncated { len });
        }
        Ok(CsPdu { buffer })
    }

    fn trailer(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        &b[b.len() - CS_TRAILER_BYTES..]
    }

    /// Common part indicator.
    pub fn cpi(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    /// Beginning tag.
    pub fn btag(&self) -> u8 {
        self.buffer.as_ref()[1]
    }

    /// Buffer allocation size [bytes when CPI = 0].
    pub fn basize(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[2], b[3]])
    }

    /// Alignment byte (zero; carries nothing).
    pub fn al(&self) -> u8 {
        self.trailer()[0]
    }

    /// End tag.
    pub fn etag(&self) -> u8 {
        self.trailer()[1]
    }

    /// Payload length [bytes when CPI = 0].
    pub fn length(&self) -> u16 {
        let t = self.trailer();
        u16::from_be_bytes([t[2], t[3]])
    }

    /// The payload as the Length field describes it, cut short if the PDU is too short.
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (CS_HEADER_BYTES + usize::from(self.length())).min(b.len() - CS_TRAILER_BYTES);
        &b[CS_HEADER_BYTES..end]
    }
}

/// A validated CS-PDU header and trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CsRepr {
    /// Beginning and end tag (the same value).
    pub tag: u8,
    /// Buffer allocation size [bytes]; a sender in message mode sets it to the length.
    pub basize: u16,
    /// Payload length [bytes].
    pub length: u16,
}

impl CsRepr {
    /// The header and trailer of a message-mode CS-PDU carrying `length` bytes.
    pub const fn message(tag: u8, length: u16) -> Self {
        CsRepr {
            tag,
            basize: length,
            length,
        }
    }

    /// Checks a whole received CS-PDU: size, CPI, tags, Length against size, BASize.
    pub fn parse<T: AsRef<[u8]>>(pdu: &CsPdu<T>) -> Result<Self, CsError> {
        let pdu_len = pdu.buffer.as_ref().len();
        if pdu_len % 4 != 0 {
            return Err(CsError::Unaligned { len: pdu_len });
        }
        if pdu.cpi() != CPI_BYTES {
            return Err(CsError::Cpi(pdu.cpi()));
        }
        if pdu.btag() != pdu.etag() {
            return Err(CsError::TagMismatch {
                btag: pdu.btag(),
                etag: pdu.etag(),
            });
        }
        let length = pdu.length();
        if cs_pdu_len(usize::from(length)) != pdu_len {
            return Err(CsError::LengthMismatch { length, pdu_len });
        }
        if pdu.basize() < length {
            return Err(CsError::BasizeTooSmall {
                basize: pdu.basize(),
                length,
            });
        }
        Ok(CsRepr {
            tag: pdu.btag(),
            basize: pdu.basize(),
            length,
        })
    }

    /// The four header bytes.
    pub fn header(&self) -> [u8; CS_HEADER_BYTES] {
        let [hi, lo] = self.basize.to_be_bytes();
        [CPI_BYTES, self.tag, hi, lo]
    }

    /// The four trailer bytes.
    pub fn trailer(&self) -> [u8; CS_TRAILER_BYTES] {
        let [hi, lo] = self.length.to_be_bytes();
        [0, self.tag, hi, lo]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "ABCDE" with tag 7: header, payload, 3 pad bytes, trailer.
    static FIVE: [u8; 16] = [
        0x00, 0x07, 0x00, 0x05, b'A', b'B', b'C', b'D', b'E', 0, 0, 0, 0x00, 0x07, 0x00, 0x05,
    ];

    #[test]
    fn vector_parses_and_re_emits() {
        let pdu = CsPdu::new_checked(&FIVE[..]).unwrap();
        let repr = CsRepr::parse(&pdu).unwrap();
        assert_eq!(repr, CsRepr::message(7, 5));
        assert_eq!(pdu.payload(), b"ABCDE");
        assert_eq!(pdu.al(), 0);
        assert_eq!(repr.header(), FIVE[..4]);
        assert_eq!(repr.trailer(), FIVE[12..]);
    }

    #[test]
    fn sizes() {
        assert_eq!(cs_pdu_len(0), 8);
        assert_eq!(cs_pdu_len(1), 12);
        assert_eq!(cs_pdu_len(4), 12);
        assert_eq!(cs_pdu_len(CS_MAX_PAYLOAD), 65_544);
    }

    #[test]
    fn rejections() {
        let check = |bytes: &[u8]| CsRepr::parse(&CsPdu::new_checked(bytes)?);
        assert_eq!(check(&FIVE[..7]), Err(CsError::Truncated { len: 7 }));
        assert_eq!(check(&FIVE[..13]), Err(CsError::Unaligned { len: 13 }));
        let mut bad = FIVE;
        bad[0] = 1;
        assert_eq!(check(&bad), Err(CsError::Cpi(1)));
        let mut bad = FIVE;
        bad[13] = 8;
        assert_eq!(check(&bad), Err(CsError::TagMismatch { btag: 7, etag: 8 }));
        let mut bad = FIVE;
        bad[15] = 9;
        assert_eq!(
            check(&bad),
            Err(CsError::LengthMismatch {
                length: 9,
                pdu_len: 16
            })
        );
        let mut bad = FIVE;
        bad[3] = 4;
        assert_eq!(check(&bad), Err(CsError::BasizeTooSmall { basize: 4, length: 5 }));
        // An absurd Length never makes the payload accessor read past the trailer.
        let mut bad = FIVE;
        bad[14] = 0xFF;
        assert_eq!(CsPdu::new_checked(&bad[..]).unwrap().payload().len(), 8);
    }
}

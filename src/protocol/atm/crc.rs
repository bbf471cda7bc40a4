//! The three CRCs of the ATM formats: the header error control's CRC-8 (ITU-T I.432.1), the
//! AAL3/4 SAR-PDU's CRC-10 (ITU-T I.363.3) and the AAL5 CPCS-PDU's CRC-32 (ITU-T I.363.5).
//!
//! Parameters from `shared/systems/atm.md` and the recommendations; check values from the
//! catalogue of parametrised CRCs (CRC-8/I-432-1 = 0xA1, CRC-10/ATM = 0x199,
//! CRC-32/BZIP2 = 0xFC891918 over ASCII "123456789"). All three are MSB first (not reflected),
//! which is how the bits leave on the line. Tables are built at compile time.

/// CRC-8 generator x⁸+x²+x+1 without its x⁸ term.
pub const CRC8_POLY: u8 = 0x07;
/// XOR applied to the header CRC-8 to give the HEC (I.432.1 coset, "01010101").
pub const HEC_COSET: u8 = 0x55;
/// CRC-10 generator x¹⁰+x⁹+x⁵+x⁴+x+1 without its x¹⁰ term.
pub const CRC10_POLY: u16 = 0x233;
/// CRC-32 generator of AAL5 (and Ethernet) without its x³² term.
pub const CRC32_POLY: u32 = 0x04C1_1DB7;

const CRC10_MASK: u16 = 0x3FF;

/// The byte-at-a-time table of an MSB-first CRC of `width` bits (8 to 32): entry `i` is the
/// register after shifting byte `i` through a zero register.
const fn msb_first_table(poly: u32, width: u32) -> [u32; 256] {
    let top = 1u32 << (width - 1);
    let mask = if width == 32 {
        u32::MAX
    } else {
        (1u32 << width) - 1
    };
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        // The byte enters at the top of the register.
        let mut reg = (i as u32) << (width - 8);
        let mut bit = 0;
        while bit < 8 {
            reg = if reg & top != 0 {
                (reg << 1) ^ poly
            } else {
                reg << 1
            };
            reg &= mask;
            bit += 1;
        }
        table[i] = reg;
        i += 1;
    }
    table
}

static CRC8_TABLE: [u32; 256] = msb_first_table(CRC8_POLY as u32, 8);
static CRC10_TABLE: [u32; 256] = msb_first_table(CRC10_POLY as u32, 10);
static CRC32_TABLE: [u32; 256] = msb_first_table(CRC32_POLY, 32);

/// Feeds `data` into a CRC-8 register (poly 0x07, MSB first) and returns the new register.
pub fn crc8_update(mut crc: u8, data: &[u8]) -> u8 {
    for &byte in data {
        crc = CRC8_TABLE[usize::from(crc ^ byte)] as u8;
    }
    crc
}

/// Plain CRC-8 (poly 0x07, init 0, no final XOR) of `data`; the HEC adds [`HEC_COSET`].
pub fn crc8(data: &[u8]) -> u8 {
    crc8_update(0, data)
}

/// Feeds whole bytes into a CRC-10 register (low 10 bits of `crc`) and returns it.
pub fn crc10_update(mut crc: u16, data: &[u8]) -> u16 {
    crc &= CRC10_MASK;
    for &byte in data {
        let index = usize::from(((crc >> 2) as u8) ^ byte);
        crc = ((crc << 8) ^ CRC10_TABLE[index] as u16) & CRC10_MASK;
    }
    crc
}

/// Feeds the low `count` bits of `bits` (at most 16), most significant first, into a CRC-10
/// register. The SAR-PDU's CRC covers 374 bits, which is not a whole number of bytes.
pub fn crc10_update_bits(mut crc: u16, bits: u16, count: u32) -> u16 {
    crc &= CRC10_MASK;
    for i in (0..count.min(16)).rev() {
        let bit = (bits >> i) & 1;
        let top = (crc >> 9) & 1;
        crc = (crc << 1) & CRC10_MASK;
        if top ^ bit != 0 {
            crc ^= CRC10_POLY;
        }
    }
    crc
}

/// CRC-10/ATM (poly 0x233, init 0, no final XOR) of `data`.
pub fn crc10(data: &[u8]) -> u16 {
    crc10_update(0, data)
}

/// Feeds `data` into a raw CRC-32 register (poly 0x04C11DB7, MSB first, no complement).
/// AAL5 starts the register at `0xFFFF_FFFF` and complements the result: see [`crc32_aal5`].
pub fn crc32_update(mut crc: u32, data: &[u8]) -> u32 {
    for &byte in data {
        let index = usize::from(((crc >> 24) as u8) ^ byte);
        crc = (crc << 8) ^ CRC32_TABLE[index];
    }
    crc
}

/// The AAL5 CRC-32 (CRC-32/BZIP2: init 0xFFFFFFFF, MSB first, final complement) of `data`.
pub fn crc32_aal5(data: &[u8]) -> u32 {
    !crc32_update(!0, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    static CHECK: &[u8] = b"123456789";

    /// Bit-at-a-time CRC, the definition the tables must agree with.
    fn reference(data: &[u8], poly: u32, width: u32) -> u32 {
        let mask = if width == 32 { u32::MAX } else { (1 << width) - 1 };
        let mut reg = 0u32;
        for &byte in data {
            for i in (0..8).rev() {
                let top = (reg >> (width - 1)) & 1;
                reg = (reg << 1) & mask;
                if top ^ u32::from((byte >> i) & 1) != 0 {
                    reg ^= poly;
                }
            }
        }
        reg
    }

    #[test]
    fn catalogue_check_values() {
        assert_eq!(crc8(CHECK), 0xF4);
        assert_eq!(crc8(CHECK) ^ HEC_COSET, 0xA1);
        assert_eq!(crc10(CHECK), 0x199);
        assert_eq!(crc32_aal5(CHECK), 0xFC89_1918);
    }

    #[test]
    fn tables_match_bitwise_definition() {
        let data: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in [0, 1, 2, 7, 53, 512] {
            let d = &data[..len];
            assert_eq!(u32::from(crc8(d)), reference(d, 0x07, 8));
            assert_eq!(u32::from(crc10(d)), reference(d, 0x233, 10));
            assert_eq!(crc32_update(0, d), reference(d, CRC32_POLY, 32));
        }
    }

    #[test]
    fn crc10_bits_agree_with_bytes() {
        let by_byte = crc10_update(0, &[0xA5, 0x3C]);
        let by_bits = crc10_update_bits(crc10_update_bits(0, 0xA5, 8), 0x3C, 8);
        assert_eq!(by_byte, by_bits);
    }

    #[test]
    fn crc10_of_message_with_its_crc_is_zero() {
        let crc = crc10(CHECK);
        let mut bits = crc10_update(0, CHECK);
        bits = crc10_update_bits(bits, crc, 10);
        assert_eq!(bits, 0);
    }

    #[test]
    fn crc32_streaming_matches_one_shot() {
        let (a, b) = CHECK.split_at(4);
        assert_eq!(!crc32_update(crc32_update(!0, a), b), 0xFC89_1918);
    }
}

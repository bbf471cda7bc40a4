//! IEEE 1355 DS-link characters (100 MBaud data-strobe links of the STC104 and the Macramé
//! testbed, `shared/systems/ieee1355.md`; SpaceWire ECSS-E-ST-50-12C inherited them).
//!
//! A data character is 10 bits: parity, flag 0, 8 data bits least significant first. A
//! control character is 4 bits: parity, flag 1, two code bits: FCT `00`, EOP `01`, EEP `10`,
//! ESC `11`, listed, like every bit sequence here, in the order they go on the wire. NULL is
//! ESC then FCT. Parity is odd and spans two characters: the parity bit of a character covers
//! the data or control bits of the previous character, its own parity bit and its own flag.
//!
//! The first character of a stream (after link reset) has no previous character: its parity
//! covers its own parity bit and flag only. Real links send NULLs whenever they have nothing
//! else; [`Encoder::finish`] ends a stream with one so that the last character before it is
//! covered by a parity bit too.
//!
//! Every bit of a stream falls in exactly one parity span, and a span is checked as soon as
//! the flag that closes it arrives, before that flag's meaning (data or control) is used. So
//! one flipped bit is always reported: as a parity error at the next character, or sooner as
//! an escape error when the damaged character follows an ESC (an FCT made EOP, EEP or ESC).
//! The code bits of a stream's very last character have no next character; a closing NULL's
//! FCT follows an ESC, so a flip there is an escape error too. The tests flip every bit of
//! many streams to show it.

use thiserror::Error;

/// Bits in a data character.
pub const DATA_CHAR_BITS: u32 = 10;
/// Bits in a control character.
pub const CONTROL_CHAR_BITS: u32 = 4;

/// A character on a DS link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Char {
    /// A data byte.
    Data(u8),
    /// Flow-control token: the receiver grants the sender 8 more N-chars.
    Fct,
    /// Normal end of packet.
    Eop,
    /// Error end of packet.
    Eep,
    /// Escape; only ESC FCT (NULL) is defined.
    Esc,
}

/// NULL: what a link sends when it has nothing else to send.
pub const NULL: [Char; 2] = [Char::Esc, Char::Fct];

impl Char {
    /// Bits this character takes on the wire: 10 for data, 4 for control. At 100 MBaud a bit
    /// takes 10 ns.
    pub const fn bits(self) -> u32 {
        match self {
            Char::Data(_) => DATA_CHAR_BITS,
            _ => CONTROL_CHAR_BITS,
        }
    }

    /// Whether flow control counts this character (data, EOP, EEP: the N-chars).
    pub const fn is_nchar(self) -> bool {
        matches!(self, Char::Data(_) | Char::Eop | Char::Eep)
    }

    /// The flag bit: 0 for data, 1 for control.
    const fn flag(self) -> bool {
        !matches!(self, Char::Data(_))
    }

    /// Data or code bits in wire order, in the low bits of the result, the first to send
    /// lowest, and how many.
    const fn payload_bits(self) -> (u16, u32) {
        match self {
            // LSB first: bit i of the byte is the i-th bit sent.
            Char::Data(b) => (b as u16, 8),
            Char::Fct => (0b00, 2),
            Char::Eop => (0b10, 2),
            Char::Eep => (0b01, 2),
            Char::Esc => (0b11, 2),
        }
    }

    /// The control character whose two code bits, first sent then second, are `first`,
    /// `second`.
    const fn control(first: bool, second: bool) -> Self {
        match (first, second) {
            (false, false) => Char::Fct,
            (false, true) => Char::Eop,
            (true, false) => Char::Eep,
            (true, true) => Char::Esc,
        }
    }
}

/// How a packet ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketEnd {
    /// EOP: the packet is complete.
    Eop,
    /// EEP: the packet was cut short by an error upstream.
    Eep,
}

impl PacketEnd {
    /// The character that ends the packet.
    pub const fn char(self) -> Char {
        match self {
            PacketEnd::Eop => Char::Eop,
            PacketEnd::Eep => Char::Eep,
        }
    }
}

/// The characters of a packet: header bytes (the destination address), payload bytes, and
/// the end marker.
pub fn encode_packet<'a>(
    header: &'a [u8],
    payload: &'a [u8],
    end: PacketEnd,
) -> impl Iterator<Item = Char> + 'a {
    header
        .iter()
        .chain(payload)
        .map(|&b| Char::Data(b))
        .chain(std::iter::once(end.char()))
}

/// A sequence of bits, packed 64 to a word, first bit in the lowest bit of the first word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BitStream {
    words: Vec<u64>,
    len: usize,
}

impl BitStream {
    /// An empty stream.
    pub fn new() -> Self {
        BitStream::default()
    }

    /// Every bit of `bytes`, each byte least significant bit first (a fuzzer's input).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut s = BitStream::new();
        for &b in bytes {
            s.push_bits(u64::from(b), 8);
        }
        s
    }

    /// Bits in the stream.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the stream has no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one bit.
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        if bit && let Some(w) = self.words.last_mut() {
            *w |= 1 << (self.len % 64);
        }
        self.len += 1;
    }

    /// Appends the low `count` bits of `bits`, lowest first.
    pub fn push_bits(&mut self, bits: u64, count: u32) {
        for i in 0..count.min(64) {
            self.push((bits >> i) & 1 != 0);
        }
    }

    /// Bit `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<bool> {
        if index >= self.len {
            return None;
        }
        Some((self.words[index / 64] >> (index % 64)) & 1 != 0)
    }

    /// Inverts bit `index`; returns whether there was such a bit.
    pub fn flip(&mut self, index: usize) -> bool {
        if index >= self.len {
            return false;
        }
        self.words[index / 64] ^= 1 << (index % 64);
        true
    }

    /// The bits in order.
    pub fn iter(&self) -> impl Iterator<Item = bool> + '_ {
        (0..self.len).map(|i| (self.words[i / 64] >> (i % 64)) & 1 != 0)
    }
}

/// Turns characters into bits, keeping the parity that runs from one character to the next.
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    out: BitStream,
    /// Whether the previous character's data/code bits hold an odd number of ones.
    prev_odd: bool,
}

impl Encoder {
    /// An encoder at link reset: no previous character.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Appends one character.
    pub fn push(&mut self, c: Char) {
        let flag = c.flag();
        // Odd parity over previous bits, this parity bit and this flag.
        let parity = !(self.prev_odd ^ flag);
        self.out.push(parity);
        self.out.push(flag);
        let (bits, count) = c.payload_bits();
        self.out.push_bits(u64::from(bits), count);
        self.prev_odd = bits.count_ones() % 2 == 1;
    }

    /// Appends a NULL (ESC FCT).
    pub fn push_null(&mut self) {
        NULL.into_iter().for_each(|c| self.push(c));
    }

    /// Appends a packet: header, payload, end marker.
    pub fn push_packet(&mut self, header: &[u8], payload: &[u8], end: PacketEnd) {
        encode_packet(header, payload, end).for_each(|c| self.push(c));
    }

    /// The bits so far.
    pub fn bits(&self) -> &BitStream {
        &self.out
    }

    /// Closes the stream with a NULL, as an idle link would, and returns it.
    pub fn finish(mut self) -> BitStream {
        self.push_null();
        self.out
    }
}

/// What the decoder makes of the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// A data byte of the packet in progress.
    Data(u8),
    /// The packet in progress ended normally.
    Eop,
    /// The packet in progress ended with an error end.
    Eep,
    /// A flow-control token (not part of a NULL).
    Fct,
    /// A NULL.
    Null,
}

/// Why a stream is bad. Bit positions count from 0 at the first bit the decoder saw since
/// it was made or reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
pub enum DecodeError {
    /// Odd parity failed at the character whose parity bit is at `bit`: the bad bit is that
    /// parity bit, the flag after it, or one of the previous character's data/code bits.
    #[error("parity error at bit {bit}")]
    Parity {
        /// Position of the failing parity bit.
        bit: u64,
    },
    /// ESC followed by something other than FCT; `bit` is where that character starts.
    #[error("escape error at bit {bit}: ESC followed by {next:?}")]
    Escape {
        /// Position of the character after the ESC.
        bit: u64,
        /// What followed the ESC.
        next: Char,
    },
    /// The stream ended inside a character that starts at `bit`.
    #[error("stream ends inside the character at bit {bit}")]
    TruncatedChar {
        /// Position of the unfinished character's parity bit.
        bit: u64,
    },
    /// The stream ended right after an ESC.
    #[error("stream ends after an ESC at bit {bit}")]
    TruncatedEscape {
        /// Position of the ESC.
        bit: u64,
    },
    /// The stream ended with data characters after the last EOP/EEP: the packet in
    /// progress has no end marker. (A DS link has no start-of-packet mark, so a lost EOP
    /// between two packets would join them; one bit error cannot do that unnoticed, since it
    /// changes an EOP only into an FCT or ESC and parity catches it at the next character.)
    #[error("stream ends at bit {bit} inside a packet of {bytes} bytes without EOP/EEP")]
    MissingEop {
        /// Position where the stream ended.
        bit: u64,
        /// Data characters of the unfinished packet.
        bytes: usize,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Stage {
    /// Next bit is a parity bit.
    #[default]
    Parity,
    /// Next bit is the flag; holds the parity bit.
    Flag(bool),
    /// Collecting data/code bits: value so far, bits so far, bits wanted.
    Body(u16, u32, u32),
}

/// Decodes a DS-link bit stream, one bit or one character at a time.
///
/// After an error the decoder stays failed, as a real link disconnects and restarts: every
/// later call returns the same error until [`Decoder::reset`].
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    /// Bits consumed.
    position: u64,
    /// Where the current character started.
    char_start: u64,
    stage: Stage,
    prev_odd: bool,
    /// Position of an ESC waiting for its FCT.
    escape: Option<u64>,
    /// Data characters since the last EOP/EEP.
    packet_bytes: usize,
    failed: Option<DecodeError>,
}

impl Decoder {
    /// A decoder at link reset.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Back to link reset: the next bit is the parity bit of a first character.
    pub fn reset(&mut self) {
        *self = Decoder::default();
    }

    /// Bits consumed since reset.
    pub fn position(&self) -> u64 {
        self.position
    }

    fn fail(&mut self, error: DecodeError) -> Result<Option<Event>, DecodeError> {
        self.failed = Some(error);
        Err(error)
    }

    /// Takes the next bit from the line.
    pub fn push_bit(&mut self, bit: bool) -> Result<Option<Event>, DecodeError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        let at = self.position;
        self.position += 1;
        match self.stage {
            Stage::Parity => {
                self.char_start = at;
                self.stage = Stage::Flag(bit);
                Ok(None)
            }
            Stage::Flag(parity) => {
                if !(self.prev_odd ^ parity ^ bit) {
                    return self.fail(DecodeError::Parity { bit: self.char_start });
                }
                self.stage = Stage::Body(0, 0, if bit { 2 } else { 8 });
                Ok(None)
            }
            Stage::Body(value, got, want) => {
                let value = value | (u16::from(bit) << got);
                if got + 1 < want {
                    self.stage = Stage::Body(value, got + 1, want);
                    return Ok(None);
                }
                self.stage = Stage::Parity;
                self.prev_odd = value.count_ones() % 2 == 1;
                let c = if want == 8 {
                    Char::Data(value as u8)
                } else {
                    Char::control(value & 1 != 0, value & 2 != 0)
                };
                self.take_char(c, self.char_start)
            }
        }
    }

    /// Takes a whole character (parity already checked, or not modelled). Bit positions
    /// advance by the character's length. A character pushed while [`Decoder::push_bit`] is
    /// half-way through one cuts that one short: a [`DecodeError::TruncatedChar`].
    pub fn push_char(&mut self, c: Char) -> Result<Option<Event>, DecodeError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        if self.stage != Stage::Parity {
            return self.fail(DecodeError::TruncatedChar { bit: self.char_start });
        }
        // The next bit-level character's parity covers this character's bits.
        self.prev_odd = c.payload_bits().0.count_ones() % 2 == 1;
        let start = self.position;
        self.position += u64::from(c.bits());
        self.take_char(c, start)
    }

    fn take_char(&mut self, c: Char, start: u64) -> Result<Option<Event>, DecodeError> {
        if self.escape.take().is_some() {
            return match c {
                Char::Fct => Ok(Some(Event::Null)),
                next => self.fail(DecodeError::Escape { bit: start, next }),
            };
        }
        Ok(match c {
            Char::Esc => {
                self.escape = Some(start);
                None
            }
            Char::Fct => Some(Event::Fct),
            Char::Data(b) => {
                self.packet_bytes += 1;
                Some(Event::Data(b))
            }
            Char::Eop => {
                self.packet_bytes = 0;
                Some(Event::Eop)
            }
            Char::Eep => {
                self.packet_bytes = 0;
                Some(Event::Eep)
            }
        })
    }

    /// Declares the end of the stream: it must end between characters, not after an ESC,
    /// and not inside a packet.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        if self.stage != Stage::Parity {
            return Err(DecodeError::TruncatedChar { bit: self.char_start });
        }
        if let Some(bit) = self.escape {
            return Err(DecodeError::TruncatedEscape { bit });
        }
        if self.packet_bytes > 0 {
            return Err(DecodeError::MissingEop {
                bit: self.position,
                bytes: self.packet_bytes,
            });
        }
        Ok(())
    }
}

/// A packet as received: its bytes (header and payload; the link cannot tell them apart) and
/// how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Header and payload bytes.
    pub data: Vec<u8>,
    /// EOP or EEP.
    pub end: PacketEnd,
}

/// Everything a finished stream carried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    /// Packets in order.
    pub packets: Vec<Packet>,
    /// Flow-control tokens, NULLs not counted.
    pub fcts: usize,
    /// NULLs.
    pub nulls: usize,
}

impl Decoded {
    fn take(&mut self, event: Event, partial: &mut Vec<u8>) {
        let mut end = |end| {
            self.packets.push(Packet {
                data: std::mem::take(partial),
                end,
            })
        };
        match event {
            Event::Data(b) => partial.push(b),
            Event::Eop => end(PacketEnd::Eop),
            Event::Eep => end(PacketEnd::Eep),
            Event::Fct => self.fcts += 1,
            Event::Null => self.nulls += 1,
        }
    }
}

/// Decodes a whole bit stream, which must end cleanly (see [`Decoder::finish`]).
pub fn decode(bits: &BitStream) -> Result<Decoded, DecodeError> {
    let mut decoder = Decoder::new();
    let mut out = Decoded::default();
    let mut partial = Vec::new();
    for bit in bits.iter() {
        if let Some(event) = decoder.push_bit(bit)? {
            out.take(event, &mut partial);
        }
    }
    decoder.finish()?;
    Ok(out)
}

/// Decodes a whole character stream, which must end cleanly.
pub fn decode_chars(chars: impl IntoIterator<Item = Char>) -> Result<Decoded, DecodeError> {
    let mut decoder = Decoder::new();
    let mut out = Decoded::default();
    let mut partial = Vec::new();
    for c in chars {
        if let Some(event) = decoder.push_char(c)? {
            out.take(event, &mut partial);
        }
    }
    decoder.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Packet "A" (one data byte 0x41) with EOP, then the closing NULL, from link reset, in
    /// wire order. Worked by hand: P=1 F=0 1000 0010 | P=0 F=1 01 | P=1 F=1 11 | P=0 F=1 00.
    static PACKET_A_BITS: [u8; 22] = [
        1, 0, 1, 0, 0, 0, 0, 0, 1, 0, // Data 0x41, LSB first
        0, 1, 0, 1, // EOP
        1, 1, 1, 1, // ESC
        0, 1, 0, 0, // FCT
    ];

    fn stream(bits: &[u8]) -> BitStream {
        let mut s = BitStream::new();
        bits.iter().for_each(|&b| s.push(b != 0));
        s
    }

    #[test]
    fn vector_encodes_and_decodes() {
        let mut enc = Encoder::new();
        enc.push_packet(&[], b"A", PacketEnd::Eop);
        let bits = enc.finish();
        assert_eq!(bits, stream(&PACKET_A_BITS));
        let decoded = decode(&bits).unwrap();
        assert_eq!(
            decoded.packets,
            [Packet {
                data: b"A".to_vec(),
                end: PacketEnd::Eop
            }]
        );
        assert_eq!((decoded.fcts, decoded.nulls), (0, 1));
    }

    #[test]
    fn character_lengths() {
        assert_eq!(Char::Data(0).bits(), 10);
        for c in [Char::Fct, Char::Eop, Char::Eep, Char::Esc] {
            assert_eq!(c.bits(), 4);
        }
        assert!(Char::Eop.is_nchar() && Char::Data(1).is_nchar() && !Char::Fct.is_nchar());
        let chars: Vec<_> = encode_packet(&[7], &[1, 2], PacketEnd::Eep).collect();
        assert_eq!(chars, [Char::Data(7), Char::Data(1), Char::Data(2), Char::Eep]);
        // One-way ceiling of `shared/systems/ieee1355.md`: 64 B + 1 header byte + EOP.
        let bits: u32 = encode_packet(&[0], &[0; 64], PacketEnd::Eop)
            .map(Char::bits)
            .sum();
        assert_eq!(bits, 10 * 65 + 4);
    }

    #[test]
    fn errors_are_reported_where_they_happen() {
        let escape_then = |c| decode_chars([Char::Esc, c]);
        assert_eq!(
            escape_then(Char::Eop),
            Err(DecodeError::Escape {
                bit: 4,
                next: Char::Eop
            })
        );
        assert!(matches!(escape_then(Char::Esc), Err(DecodeError::Escape { .. })));
        assert!(matches!(
            escape_then(Char::Data(3)),
            Err(DecodeError::Escape { .. })
        ));
        assert_eq!(
            decode_chars([Char::Fct, Char::Esc]),
            Err(DecodeError::TruncatedEscape { bit: 4 })
        );
        assert_eq!(
            decode_chars([Char::Data(1), Char::Data(2)]),
            Err(DecodeError::MissingEop { bit: 20, bytes: 2 })
        );
        assert_eq!(
            decode(&stream(&PACKET_A_BITS[..21])),
            Err(DecodeError::TruncatedChar { bit: 18 })
        );
        let mut bad = stream(&PACKET_A_BITS);
        bad.flip(3);
        assert_eq!(decode(&bad), Err(DecodeError::Parity { bit: 10 }));
    }

    #[test]
    fn a_failed_decoder_stays_failed_until_reset() {
        let mut d = Decoder::new();
        assert_eq!(d.push_bit(false), Ok(None));
        let error = DecodeError::Parity { bit: 0 };
        assert_eq!(d.push_bit(false), Err(error));
        assert_eq!(d.push_bit(true), Err(error));
        assert_eq!(d.push_char(Char::Fct), Err(error));
        assert_eq!(d.finish(), Err(error));
        d.reset();
        assert_eq!(d.push_char(Char::Fct), Ok(Some(Event::Fct)));
        assert_eq!(d.position(), 4);
        assert_eq!(d.push_bit(true), Ok(None));
        assert_eq!(d.push_char(Char::Fct), Err(DecodeError::TruncatedChar { bit: 4 }));
    }

    #[test]
    fn characters_and_bits_mix_between_characters() {
        // The EOP as a character, then the closing NULL bit by bit: parity carries over.
        let mut d = Decoder::new();
        assert_eq!(d.push_char(Char::Data(0x41)), Ok(Some(Event::Data(0x41))));
        assert_eq!(d.push_char(Char::Eop), Ok(Some(Event::Eop)));
        let events: Vec<_> = PACKET_A_BITS[14..].iter().map(|&b| d.push_bit(b != 0)).collect();
        assert_eq!(events.last(), Some(&Ok(Some(Event::Null))));
        assert!(events.iter().all(Result::is_ok));
        assert_eq!(d.finish(), Ok(()));
    }

    #[test]
    fn bitstream_basics() {
        let mut s = BitStream::from_bytes(&[0b0000_0101, 0xFF]);
        assert_eq!(s.len(), 16);
        assert_eq!(s.get(0), Some(true));
        assert_eq!(s.get(1), Some(false));
        assert_eq!(s.get(16), None);
        assert!(s.flip(1));
        assert!(!s.flip(16));
        assert_eq!(s.iter().filter(|&b| b).count(), 11);
        assert!(BitStream::new().is_empty());
    }

    /// What a sender puts on a link: packets with FCTs and NULLs between any two characters.
    #[derive(Debug, Clone)]
    enum Item {
        Packet(Vec<u8>, Vec<u8>, PacketEnd),
        Fct,
        Null,
    }

    fn items() -> impl Strategy<Value = Vec<Item>> {
        let end = prop_oneof![Just(PacketEnd::Eop), Just(PacketEnd::Eep)];
        let packet = (
            prop::collection::vec(any::<u8>(), 0..3),
            prop::collection::vec(any::<u8>(), 0..40),
            end,
        )
            .prop_map(|(h, p, e)| Item::Packet(h, p, e));
        prop::collection::vec(
            prop_oneof![4 => packet, 1 => Just(Item::Fct), 1 => Just(Item::Null)],
            0..12,
        )
    }

    /// Encodes `items`, inserting an FCT or NULL inside packets where `inserts` says.
    fn encode_items(items: &[Item], inserts: &[u8]) -> (BitStream, Decoded) {
        let mut enc = Encoder::new();
        let mut expected = Decoded::default();
        let mut inserts = inserts.iter().cycle();
        for item in items {
            match item {
                Item::Packet(h, p, end) => {
                    for c in encode_packet(h, p, *end) {
                        match inserts.next().copied().unwrap_or(0) % 8 {
                            0 => {
                                enc.push(Char::Fct);
                                expected.fcts += 1;
                            }
                            1 => {
                                enc.push_null();
                                expected.nulls += 1;
                            }
                            _ => {}
                        }
                        enc.push(c);
                    }
                    expected.packets.push(Packet {
                        data: [&h[..], &p[..]].concat(),
                        end: *end,
                    });
                }
                Item::Fct => {
                    enc.push(Char::Fct);
                    expected.fcts += 1;
                }
                Item::Null => {
                    enc.push_null();
                    expected.nulls += 1;
                }
            }
        }
        expected.nulls += 1;
        (enc.finish(), expected)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn decode_inverts_encode(items in items(), inserts in prop::collection::vec(any::<u8>(), 1..16)) {
            let (bits, expected) = encode_items(&items, &inserts);
            prop_assert_eq!(decode(&bits), Ok(expected));
        }

        /// Flip each bit of the stream in turn: every flip is reported, as a parity error or
        /// an escape error, and in the closing FCT's code bits (which no parity covers) as an
        /// escape error.
        #[test]
        fn every_single_bit_flip_is_detected(items in items(), inserts in prop::collection::vec(any::<u8>(), 1..16)) {
            let (bits, _) = encode_items(&items, &inserts);
            // The closing FCT's code bits are the last two.
            let code_bits_of_last = bits.len() - 2;
            for i in 0..bits.len() {
                let mut hit = bits.clone();
                hit.flip(i);
                match decode(&hit) {
                    Err(DecodeError::Parity { .. }) => prop_assert!(i < code_bits_of_last),
                    Err(DecodeError::Escape { .. }) => {}
                    other => prop_assert!(false, "flip {} of {}: {:?}", i, bits.len(), other),
                }
            }
        }

        #[test]
        fn arbitrary_bits_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&BitStream::from_bytes(&bytes));
        }
    }
}

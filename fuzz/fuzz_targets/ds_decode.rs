//! The DS-link decoder fed arbitrary bits and arbitrary characters: it never panics; and the
//! input as a packet, encoded and decoded, comes back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reef::protocol::ds::{BitStream, Char, Decoder, Encoder, PacketEnd, decode, decode_chars};

fuzz_target!(|data: &[u8]| {
    let bits = BitStream::from_bytes(data);
    let _ = decode(&bits);
    let mut d = Decoder::new();
    for bit in bits.iter() {
        if d.push_bit(bit).is_err() {
            d.reset();
        }
    }
    let _ = d.finish();

    let chars = data.iter().map(|&b| match b % 8 {
        0 => Char::Fct,
        1 => Char::Eop,
        2 => Char::Eep,
        3 => Char::Esc,
        _ => Char::Data(b),
    });
    let _ = decode_chars(chars);

    let split = usize::from(data.first().copied().unwrap_or(0) % 3).min(data.len());
    let (header, payload) = data.split_at(split);
    let mut enc = Encoder::new();
    enc.push(Char::Fct);
    enc.push_packet(header, payload, PacketEnd::Eep);
    let decoded = decode(&enc.finish()).expect("a clean stream decodes");
    assert_eq!(decoded.packets.len(), 1);
    assert_eq!(decoded.packets[0].data, data);
    assert_eq!((decoded.fcts, decoded.nulls), (1, 1));
});

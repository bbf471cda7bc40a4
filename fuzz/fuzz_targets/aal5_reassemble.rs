//! An AAL5 reassembler fed cells built from arbitrary bytes. A control byte per cell
//! chooses the circuit and the end-of-frame bit, and whether the harness fixes the trailer's
//! CRC-32 over what it has sent on that circuit since its last end (so that Length, CPI and
//! abort checks are reached, not only the CRC). Also: the input segmented as one frame must
//! reassemble to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reef::protocol::atm::aal5::{Reassembler, ReassemblerConfig, Segmenter};
use reef::protocol::atm::cell::{CELL_BYTES, CellRepr, HEADER_BYTES, PayloadType, VirtualCircuit};
use reef::protocol::atm::crc::crc32_aal5;

fuzz_target!(|data: &[u8]| {
    let mut r = Reassembler::new(ReassemblerConfig { max_circuits: 2 });
    let mut sent: [Vec<u8>; 4] = Default::default();
    for chunk in data.chunks(1 + 48) {
        let (&ctrl, body) = chunk.split_first().unwrap_or((&0, &[]));
        let k = usize::from(ctrl & 3);
        let vc = VirtualCircuit::new(0, 32 + k as u16);
        if ctrl & 0x80 != 0 {
            let _ = r.push_cell(body);
            r.flush_circuit(vc);
            sent[k].clear();
            continue;
        }
        let last = ctrl & 4 != 0;
        let header = CellRepr {
            payload_type: PayloadType::UserData {
                congestion: ctrl & 8 != 0,
                last,
            },
            ..CellRepr::user(vc)
        };
        let mut cell = [0u8; CELL_BYTES];
        cell[..HEADER_BYTES].copy_from_slice(&header.header_bytes().expect("GFC 0"));
        cell[HEADER_BYTES..HEADER_BYTES + body.len()].copy_from_slice(body);
        if last && ctrl & 0x40 == 0 {
            let mut pdu = std::mem::take(&mut sent[k]);
            pdu.extend_from_slice(&cell[HEADER_BYTES..CELL_BYTES - 4]);
            let crc = crc32_aal5(&pdu);
            cell[CELL_BYTES - 4..].copy_from_slice(&crc.to_be_bytes());
        } else if last {
            sent[k].clear();
        } else {
            sent[k].extend_from_slice(&cell[HEADER_BYTES..]);
        }
        if let Ok(Some(frame)) = r.push_cell(&cell) {
            assert!(!frame.data.is_empty() && frame.data.len() <= 65_535);
        }
        assert!(r.in_progress() <= 2);
    }

    if !data.is_empty() && data.len() <= 65_535 {
        let vc = VirtualCircuit::new(2, 2);
        let mut r = Reassembler::default();
        let mut frames = Vec::new();
        for cell in Segmenter::new(vc)
            .expect("GFC 0")
            .segment(data, data[0])
            .expect("fits")
        {
            frames.extend(r.push_cell(&cell).expect("a clean cell is accepted"));
        }
        assert_eq!(frames.len(), 1);
        assert_eq!((frames[0].uu, &frames[0].data[..]), (data[0], data));
    }
});

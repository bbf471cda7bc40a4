//! An AAL3/4 reassembler fed cells built from arbitrary bytes. Raw bytes almost never pass
//! the HEC and CRC-10, so most cells are made valid on purpose (a control byte chooses the
//! circuit, narrows the MID, and whether to fix the CRC) to reach the deep states: tables
//! full, sequence gaps, tag and length mismatches, flushes. Also: the input segmented as one
//! frame must reassemble to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reef::protocol::atm::aal34::{Reassembler, ReassemblerConfig, SarPdu, Segmenter};
use reef::protocol::atm::cell::{CELL_BYTES, CellRepr, HEADER_BYTES, VirtualCircuit};

const CONFIG: ReassemblerConfig = ReassemblerConfig {
    max_circuits: 3,
    max_mids: 4,
    check_sn: true,
};

fuzz_target!(|data: &[u8]| {
    let mut r = Reassembler::new(ReassemblerConfig {
        check_sn: data.first().is_some_and(|b| b & 1 == 0),
        ..CONFIG
    });
    for chunk in data.chunks(1 + 48) {
        let (&ctrl, sar) = chunk.split_first().unwrap_or((&0, &[]));
        let vc = VirtualCircuit::new(0, 32 + u16::from(ctrl & 3));
        if ctrl & 0x80 != 0 {
            // Raw bytes straight to the line, and a flush now and then.
            let _ = r.push_cell(sar);
            if ctrl & 0x40 != 0 {
                r.flush_circuit(vc);
            } else {
                r.flush_mid(vc, u16::from(ctrl >> 2 & 3));
            }
            continue;
        }
        let mut cell = [0u8; CELL_BYTES];
        cell[..HEADER_BYTES].copy_from_slice(&CellRepr::user(vc).header_bytes().expect("GFC 0"));
        cell[HEADER_BYTES..HEADER_BYTES + sar.len()].copy_from_slice(sar);
        let mut pdu = SarPdu::new_checked(&mut cell[HEADER_BYTES..]).expect("48 bytes");
        if ctrl & 0x20 != 0 {
            // MID 0..=3, so that frames collide on a MID.
            let b = pdu.into_inner();
            b[0] &= 0xFC;
            b[1] &= 0x03;
            pdu = SarPdu::new_checked(b).expect("48 bytes");
        }
        if ctrl & 0x40 == 0 {
            pdu.fill_crc();
        }
        let delivery = r.push_cell(&cell);
        if let Ok(Some(frame)) = delivery.outcome {
            assert!(frame.data.len() <= 65_535);
        }
        assert!(r.in_progress() <= CONFIG.max_mids);
        let mut circuits: Vec<_> = r.active().map(|(vc, _)| vc).collect();
        circuits.dedup();
        assert!(circuits.len() <= CONFIG.max_circuits);
    }

    if data.len() <= 65_535 {
        let vc = VirtualCircuit::new(1, 1);
        let mid = u16::from(data.first().copied().unwrap_or(0)) * 4;
        let mut seg = Segmenter::new(vc, mid).expect("MID < 1024");
        let mut r = Reassembler::default();
        let mut frames = Vec::new();
        for cell in seg.segment(data).expect("fits") {
            let d = r.push_cell(&cell);
            assert!(d.cut_short.is_none());
            frames.extend(d.outcome.expect("a clean cell is accepted"));
        }
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].data, data);
    }
});

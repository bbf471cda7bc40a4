//! Segmenter and reassembler together: round trips, interleavings, and every kind of damage
//! the reassembler must notice.

use proptest::prelude::*;

use super::*;
use crate::protocol::atm::cell::{CELL_BYTES, CellError, HEADER_BYTES, IDLE_CELL, VirtualCircuit};
use crate::protocol::atm::crc::crc10;

const VC: VirtualCircuit = VirtualCircuit::new(3, 100);

fn frame(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn cells_of(seg: &mut Segmenter, data: &[u8]) -> Vec<[u8; CELL_BYTES]> {
    seg.segment(data).unwrap().collect()
}

/// Pushes cells; returns frames and errors (cut-short reassemblies count as errors here).
fn run(r: &mut Reassembler, cells: &[[u8; CELL_BYTES]]) -> (Vec<Frame>, Vec<String>) {
    let mut frames = Vec::new();
    let mut errors = Vec::new();
    for cell in cells {
        let d = r.push_cell(cell);
        if let Some(c) = d.cut_short {
            errors.push(format!("cut short {c:?}"));
        }
        match d.outcome {
            Ok(Some(f)) => frames.push(f),
            Ok(None) => {}
            Err(e) => errors.push(format!("{e:?}")),
        }
    }
    (frames, errors)
}

fn round_trip(len: usize) {
    let data = frame(len, 7);
    let mut seg = Segmenter::new(VC, 9).unwrap();
    let cells = cells_of(&mut seg, &data);
    assert_eq!(cells.len(), cell_count(len));
    let mut r = Reassembler::default();
    let (frames, errors) = run(&mut r, &cells);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        frames,
        [Frame {
            circuit: VC,
            mid: 9,
            data
        }]
    );
    assert_eq!(r.in_progress(), 0);
}

#[test]
fn round_trip_edges() {
    for len in [0, 1, 3, 4, 35, 36, 37, 80, 81, 1000, 65_535] {
        round_trip(len);
    }
}

#[test]
fn every_cell_passes_hec_and_crc10() {
    let mut seg = Segmenter::new(VC, 1).unwrap();
    for cell in seg.segment(&frame(500, 1)).unwrap() {
        assert!(
            crate::protocol::atm::cell::Cell::new_checked(&cell[..])
                .unwrap()
                .hec_ok()
        );
        assert_eq!(crc10(&cell[HEADER_BYTES..]), 0);
    }
}

/// Every single-bit error in a cell is caught: by the HEC in the header (the cell is
/// discarded), by the CRC-10 in the payload. All 53 × 8 positions, for each segment type.
#[test]
fn every_single_bit_error_in_a_cell_is_detected() {
    let mut seg = Segmenter::new(VC, 77).unwrap();
    let mut cells = cells_of(&mut seg, &frame(100, 3));
    cells.extend(cells_of(&mut seg, &frame(10, 4)));
    for (n, cell) in cells.iter().enumerate() {
        for bit in 0..CELL_BYTES * 8 {
            let mut hit = *cell;
            hit[bit / 8] ^= 0x80 >> (bit % 8);
            let mut r = Reassembler::default();
            let d = r.push_cell(&hit);
            match d.outcome {
                Err(ReassemblyError::Cell(CellError::HecMismatch { .. })) => assert!(bit < 40),
                Err(ReassemblyError::Sar {
                    error: SarError::Crc { .. },
                    ..
                }) => assert!(bit >= 40),
                other => panic!("cell {n} bit {bit}: {other:?}"),
            }
            assert_eq!(r.in_progress(), 0);
        }
    }
}

#[test]
fn idle_cells_are_ignored_between_cells() {
    let data = frame(200, 5);
    let mut seg = Segmenter::new(VC, 2).unwrap();
    let mut cells = Vec::new();
    for c in cells_of(&mut seg, &data) {
        cells.push(IDLE_CELL);
        cells.push(c);
    }
    let (frames, errors) = run(&mut Reassembler::default(), &cells);
    assert!(errors.is_empty());
    assert_eq!(frames[0].data, data);
}

#[test]
fn lost_cells_are_detected() {
    let data = frame(100, 9);
    let next = frame(100, 10);
    for config in [ReassemblerConfig::default(), ReassemblerConfig::PENN] {
        for lost in 0..3 {
            let mut seg = Segmenter::new(VC, 4).unwrap();
            let mut cells = cells_of(&mut seg, &data);
            cells.remove(lost);
            cells.extend(cells_of(&mut seg, &next));
            let mut r = Reassembler::new(config);
            let (frames, errors) = run(&mut r, &cells);
            // The damaged frame never appears; the next one does.
            assert_eq!(frames.len(), 1, "lost {lost} {config:?}");
            assert_eq!(frames[0].data, next);
            assert!(!errors.is_empty());
        }
    }
}

#[test]
fn lost_com_with_sn_check_is_a_sequence_gap() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let mut cells = cells_of(&mut seg, &frame(200, 1));
    cells.remove(2);
    let (frames, errors) = run(&mut Reassembler::default(), &cells);
    assert!(frames.is_empty());
    assert!(errors[0].starts_with("SequenceGap"), "{errors:?}");
    // The EOM that follows the gap finds no reassembly left.
    assert!(errors[1].starts_with("UnexpectedEom"), "{errors:?}");
}

#[test]
fn lost_com_without_sn_check_is_a_length_mismatch() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let mut cells = cells_of(&mut seg, &frame(200, 1));
    cells.remove(2);
    let (_, errors) = run(&mut Reassembler::new(ReassemblerConfig::PENN), &cells);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("LengthMismatch"), "{errors:?}");
}

#[test]
fn misordered_cells_are_detected() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let mut cells = cells_of(&mut seg, &frame(300, 1));
    cells.swap(2, 3);
    let (frames, errors) = run(&mut Reassembler::default(), &cells);
    assert!(frames.is_empty());
    assert!(errors[0].starts_with("SequenceGap"));
}

/// Losing the COM and EOM of one frame and the BOM of the next joins the head of one CS-PDU to
/// the tail of another of the same length; without sequence numbers only the tags tell.
#[test]
fn joined_frames_are_caught_by_the_tags() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let mut cells = cells_of(&mut seg, &frame(100, 1));
    cells.truncate(1);
    let second = cells_of(&mut seg, &frame(100, 2));
    cells.extend_from_slice(&second[1..]);
    let (frames, errors) = run(&mut Reassembler::new(ReassemblerConfig::PENN), &cells);
    assert!(frames.is_empty());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("TagMismatch { btag: 0, etag: 1 }"),
        "{errors:?}"
    );
}

fn sar_cell(repr: SarRepr, payload: &[u8]) -> [u8; CELL_BYTES] {
    let mut cell = [0u8; CELL_BYTES];
    cell[..HEADER_BYTES].copy_from_slice(
        &crate::protocol::atm::cell::CellRepr::user(VC)
            .header_bytes()
            .unwrap(),
    );
    let mut pdu = SarPdu::new_checked(&mut cell[HEADER_BYTES..]).unwrap();
    pdu.payload_mut()[..payload.len()].copy_from_slice(payload);
    repr.emit(&mut pdu).unwrap();
    cell
}

#[test]
fn abort_discards_the_frame() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let mut cells = cells_of(&mut seg, &frame(100, 1));
    let eom = SarRepr {
        segment_type: SegmentType::Eom,
        sn: 2,
        mid: 4,
        li: sar::LI_ABORT,
    };
    cells[2] = sar_cell(eom, &[]);
    let mut r = Reassembler::default();
    let (frames, errors) = run(&mut r, &cells);
    assert!(frames.is_empty());
    assert_eq!(
        errors,
        [format!("{:?}", ReassemblyError::Aborted { circuit: VC, mid: 4 })]
    );
    assert_eq!(r.in_progress(), 0);
}

#[test]
fn overrunning_basize_is_caught_early() {
    // A BOM announcing 40 bytes, then COMs without end.
    let mut bom = [0u8; 44];
    bom[3] = 40;
    let mut cells = vec![sar_cell(
        SarRepr {
            segment_type: SegmentType::Bom,
            sn: 0,
            mid: 1,
            li: 44,
        },
        &bom,
    )];
    for sn in 1..4 {
        cells.push(sar_cell(
            SarRepr {
                segment_type: SegmentType::Com,
                sn,
                mid: 1,
                li: 44,
            },
            &[0; 44],
        ));
    }
    let mut r = Reassembler::default();
    let (_, errors) = run(&mut r, &cells);
    assert!(errors[0].starts_with("Oversize"), "{errors:?}");
    assert_eq!(r.in_progress(), 0);
}

#[test]
fn a_new_bom_cuts_short_the_frame_in_progress() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let first = cells_of(&mut seg, &frame(100, 1));
    let second_data = frame(100, 2);
    let second = cells_of(&mut seg, &second_data);
    let mut r = Reassembler::default();
    assert_eq!(r.push_cell(&first[0]).outcome, Ok(None));
    let d = r.push_cell(&second[0]);
    assert_eq!(
        d.cut_short,
        Some(CutShort {
            circuit: VC,
            mid: 4,
            bytes: 44
        })
    );
    assert_eq!(d.outcome, Ok(None));
    let (frames, errors) = run(&mut r, &second[1..]);
    assert!(errors.is_empty());
    assert_eq!(frames[0].data, second_data);
}

#[test]
fn an_ssm_cuts_short_and_still_delivers() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let long = cells_of(&mut seg, &frame(100, 1));
    let short = cells_of(&mut seg, b"hi");
    let mut r = Reassembler::default();
    let _ = r.push_cell(&long[0]);
    let d = r.push_cell(&short[0]);
    assert!(d.cut_short.is_some());
    assert_eq!(d.into_frame().unwrap().data, b"hi");
}

#[test]
fn capacity_is_enforced_and_flush_frees_it() {
    let config = ReassemblerConfig {
        max_circuits: 2,
        max_mids: 3,
        check_sn: true,
    };
    let mut r = Reassembler::new(config);
    let bom = |vci: u16, mid: u16| {
        let mut seg = Segmenter::new(VirtualCircuit::new(0, vci), mid).unwrap();
        seg.segment(&[0; 100]).unwrap().next().unwrap()
    };
    assert_eq!(r.push_cell(&bom(1, 1)).outcome, Ok(None));
    assert_eq!(r.push_cell(&bom(1, 2)).outcome, Ok(None));
    assert_eq!(r.push_cell(&bom(2, 1)).outcome, Ok(None));
    let vc3 = VirtualCircuit::new(0, 3);
    assert_eq!(
        r.push_cell(&bom(3, 1)).outcome,
        Err(ReassemblyError::MidTableFull { circuit: vc3, mid: 1 })
    );
    assert!(r.flush_mid(VirtualCircuit::new(0, 1), 2));
    assert!(!r.flush_mid(VirtualCircuit::new(0, 1), 2));
    assert_eq!(
        r.push_cell(&bom(3, 1)).outcome,
        Err(ReassemblyError::CircuitTableFull { circuit: vc3 })
    );
    assert_eq!(r.flush_circuit(VirtualCircuit::new(0, 1)), 1);
    assert_eq!(r.push_cell(&bom(3, 1)).outcome, Ok(None));
    let active: Vec<_> = r.active().collect();
    assert_eq!(active, [(VirtualCircuit::new(0, 2), 1), (vc3, 1)]);
}

#[test]
fn penn_tables_hold_256_mids() {
    let mut r = Reassembler::new(ReassemblerConfig::PENN);
    for mid in 0..257u16 {
        let mut seg = Segmenter::new(VC, mid).unwrap();
        let d = r.push_cell(&seg.segment(&[0; 100]).unwrap().next().unwrap());
        if mid < 256 {
            assert_eq!(d.outcome, Ok(None));
        } else {
            assert_eq!(d.outcome, Err(ReassemblyError::MidTableFull { circuit: VC, mid }));
        }
    }
    assert_eq!(r.in_progress(), 256);
}

#[test]
fn stray_com_and_eom_are_reported() {
    let mut seg = Segmenter::new(VC, 4).unwrap();
    let cells = cells_of(&mut seg, &frame(100, 1));
    let (_, errors) = run(&mut Reassembler::default(), &cells[1..]);
    assert!(errors[0].starts_with("UnexpectedCom"));
    assert!(errors[1].starts_with("UnexpectedEom"));
}

fn frame_len() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..=100, 0usize..=2_000, 0usize..=65_535]
}

/// Streams of frames, one per (circuit, MID), and a schedule that interleaves their cells.
fn streams() -> impl Strategy<Value = (Vec<Vec<Vec<u8>>>, Vec<usize>)> {
    let stream = prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..4);
    (
        prop::collection::vec(stream, 1..6),
        prop::collection::vec(any::<usize>(), 0..200),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn reassemble_inverts_segment(len in frame_len(), seed: u8, mid in 0u16..=1023) {
        let data = frame(len, seed);
        let mut seg = Segmenter::new(VC, mid).unwrap();
        let cells = cells_of(&mut seg, &data);
        let (frames, errors) = run(&mut Reassembler::default(), &cells);
        prop_assert!(errors.is_empty());
        prop_assert_eq!(frames, vec![Frame { circuit: VC, mid, data }]);
    }

    #[test]
    fn interleaved_circuits_and_mids_reassemble((streams, schedule) in streams()) {
        // Stream k runs on circuit k % 2 and MID k: several MIDs on one circuit and several
        // circuits at once.
        let keys: Vec<_> = (0..streams.len())
            .map(|k| (VirtualCircuit::new(0, 32 + (k % 2) as u16), k as u16))
            .collect();
        let queues: Vec<std::collections::VecDeque<[u8; CELL_BYTES]>> = streams
            .iter()
            .zip(&keys)
            .map(|(frames, &(vc, mid))| {
                let mut seg = Segmenter::new(vc, mid).unwrap();
                frames.iter().flat_map(|f| cells_of(&mut seg, f)).collect()
            })
            .collect();
        let order = crate::protocol::atm::interleave(queues, schedule);
        let (frames, errors) = run(&mut Reassembler::default(), &order);
        prop_assert!(errors.is_empty());
        for (frames_k, &(vc, mid)) in streams.iter().zip(&keys) {
            let got: Vec<_> = frames
                .iter()
                .filter(|f| f.circuit == vc && f.mid == mid)
                .map(|f| f.data.clone())
                .collect();
            prop_assert_eq!(&got, frames_k);
        }
    }

    #[test]
    fn arbitrary_cells_never_panic(cells in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..60), 0..40)) {
        let mut r = Reassembler::new(ReassemblerConfig { max_circuits: 2, max_mids: 2, check_sn: false });
        for cell in &cells {
            let _ = r.push_cell(cell);
            let _ = r.push_sar(VC, cell);
        }
    }
}

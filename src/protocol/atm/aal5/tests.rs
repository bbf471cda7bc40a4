//! Segmenter and reassembler together: round trips, interleavings, damage and loss.

use proptest::prelude::*;

use super::*;
use crate::protocol::atm::cell::{CELL_BYTES, CellError, CellRepr, PayloadType, VirtualCircuit};

const VC: VirtualCircuit = VirtualCircuit::new(1, 42);

fn frame(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(17).wrapping_add(seed))
        .collect()
}

fn cells_of(vc: VirtualCircuit, data: &[u8], uu: u8) -> Vec<[u8; CELL_BYTES]> {
    Segmenter::new(vc).unwrap().segment(data, uu).unwrap().collect()
}

fn run(r: &mut Reassembler, cells: &[[u8; CELL_BYTES]]) -> (Vec<Frame>, Vec<ReassemblyError>) {
    let mut frames = Vec::new();
    let mut errors = Vec::new();
    for cell in cells {
        match r.push_cell(cell) {
            Ok(Some(f)) => frames.push(f),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    (frames, errors)
}

/// "123456789" in one cell on VPI 1 / VCI 42, UU 0x5A: every byte pinned.
#[test]
fn hand_built_frame() {
    let cells = cells_of(VC, b"123456789", 0x5A);
    assert_eq!(cells.len(), 1);
    let c = &cells[0];
    // VPI 1, VCI 42, PT 001 (last cell), CLP 0.
    assert_eq!(c[..4], [0x00, 0x10, 0x02, 0xA2]);
    assert_eq!(&c[5..14], b"123456789");
    assert!(c[14..45].iter().all(|&b| b == 0));
    assert_eq!(c[45..], [0x5A, 0x00, 0x00, 0x09, 0x98, 0x4E, 0x7C, 0x01]);
    let f = Reassembler::default().push_cell(c).unwrap().unwrap();
    assert_eq!(
        (f.circuit, f.uu, f.congestion, &f.data[..]),
        (VC, 0x5A, false, &b"123456789"[..])
    );
}

#[test]
fn round_trip_edges() {
    for len in [1, 39, 40, 41, 88, 89, 1500, 65_535] {
        let data = frame(len, 3);
        let cells = cells_of(VC, &data, 7);
        assert_eq!(cells.len(), cell_count(len));
        let (frames, errors) = run(&mut Reassembler::default(), &cells);
        assert!(errors.is_empty(), "{len}: {errors:?}");
        assert_eq!(frames[0].data, data);
    }
}

#[test]
fn refusals() {
    let seg = Segmenter::new(VC).unwrap();
    assert_eq!(seg.segment(&[], 0).unwrap_err(), SegmentError::EmptyFrame);
    assert_eq!(
        seg.segment(&vec![0; 65_536], 0).unwrap_err(),
        SegmentError::FrameTooLong { len: 65_536 }
    );
}

/// Every single-bit error in any cell of a frame: a header bit is caught by the HEC (the
/// cell is discarded and the frame fails), a payload bit by the CRC-32.
#[test]
fn every_single_bit_error_loses_the_frame_never_delivers_it() {
    let data = frame(60, 1);
    let cells = cells_of(VC, &data, 0);
    for n in 0..cells.len() {
        for bit in 0..CELL_BYTES * 8 {
            let mut hit = cells.clone();
            hit[n][bit / 8] ^= 0x80 >> (bit % 8);
            let mut r = Reassembler::default();
            let (frames, errors) = run(&mut r, &hit);
            assert!(frames.is_empty(), "cell {n} bit {bit}");
            let first = errors.first().copied();
            if bit < 40 {
                assert!(matches!(
                    first,
                    Some(ReassemblyError::Cell(CellError::HecMismatch { .. }))
                ));
            } else {
                assert!(matches!(
                    first,
                    Some(ReassemblyError::Cpcs {
                        error: CpcsError::Crc { .. },
                        ..
                    })
                ));
            }
        }
    }
}

#[test]
fn a_lost_cell_loses_its_frame_and_a_lost_end_the_next_one_too() {
    let frames: Vec<Vec<u8>> = (0..3).map(|k| frame(100, k)).collect();
    let cells_per_frame = cell_count(100);
    for lost in 0..cells_per_frame {
        let mut cells: Vec<_> = frames.iter().flat_map(|f| cells_of(VC, f, 0)).collect();
        cells.remove(cells_per_frame + lost);
        let (got, errors) = run(&mut Reassembler::default(), &cells);
        assert_eq!(errors.len(), 1);
        let data: Vec<_> = got.into_iter().map(|f| f.data).collect();
        if lost + 1 == cells_per_frame {
            // Without its end mark the second frame runs into the third.
            assert_eq!(data, [frames[0].clone()]);
        } else {
            assert_eq!(data, [frames[0].clone(), frames[2].clone()]);
        }
    }
}

#[test]
fn abort_is_reported() {
    // A one-cell PDU with Length 0 and a good CRC.
    let mut cell = cells_of(VC, b"x", 0)[0];
    cell[5 + 42..5 + 44].copy_from_slice(&[0, 0]);
    let crc = crate::protocol::atm::crc::crc32_aal5(&cell[5..5 + 44]);
    cell[5 + 44..].copy_from_slice(&crc.to_be_bytes());
    assert_eq!(
        Reassembler::default().push_cell(&cell),
        Err(ReassemblyError::Cpcs {
            circuit: VC,
            error: CpcsError::Aborted
        })
    );
}

#[test]
fn endless_frame_is_cut_off() {
    let middle = cells_of(VC, &[0; 100], 0)[0];
    let mut r = Reassembler::default();
    let mut outcome = Ok(None);
    let mut n = 0;
    while outcome == Ok(None) {
        outcome = r.push_cell(&middle);
        n += 1;
    }
    assert_eq!(outcome, Err(ReassemblyError::Oversize { circuit: VC }));
    assert_eq!(n, 1_366);
    assert_eq!(r.in_progress(), 0);
}

#[test]
fn capacity_and_flush() {
    let mut r = Reassembler::new(ReassemblerConfig { max_circuits: 2 });
    let first = |vci| cells_of(VirtualCircuit::new(0, vci), &[0; 100], 0)[0];
    assert_eq!(r.push_cell(&first(40)), Ok(None));
    assert_eq!(r.push_cell(&first(41)), Ok(None));
    assert_eq!(
        r.push_cell(&first(42)),
        Err(ReassemblyError::CircuitTableFull {
            circuit: VirtualCircuit::new(0, 42)
        })
    );
    // A one-cell frame needs no slot.
    assert!(
        r.push_cell(&cells_of(VirtualCircuit::new(0, 43), b"ok", 0)[0])
            .unwrap()
            .is_some()
    );
    assert!(r.flush_circuit(VirtualCircuit::new(0, 40)));
    assert!(!r.flush_circuit(VirtualCircuit::new(0, 40)));
    assert_eq!(r.push_cell(&first(42)), Ok(None));
    assert_eq!(
        r.active().collect::<Vec<_>>(),
        [VirtualCircuit::new(0, 41), VirtualCircuit::new(0, 42)]
    );
}

#[test]
fn congestion_mark_is_passed_up_and_oam_refused() {
    let mut cells = cells_of(VC, &[9; 100], 0);
    let mut r = Reassembler::default();
    let marked = CellRepr {
        payload_type: PayloadType::UserData {
            congestion: true,
            last: false,
        },
        ..CellRepr::user(VC)
    };
    cells[0][..5].copy_from_slice(&marked.header_bytes().unwrap());
    let (frames, _) = run(&mut r, &cells);
    assert!(frames[0].congestion);
    let oam = CellRepr {
        payload_type: PayloadType::OamEndToEnd,
        ..CellRepr::user(VC)
    };
    assert!(matches!(
        r.push_payload(&oam, &[0; 48]),
        Err(ReassemblyError::Cell(CellError::NotUserData { .. }))
    ));
}

fn frame_len() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..=100, 1usize..=2_000, 1usize..=65_535]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn reassemble_inverts_segment(len in frame_len(), seed: u8, uu: u8) {
        let data = frame(len, seed);
        let (frames, errors) = run(&mut Reassembler::default(), &cells_of(VC, &data, uu));
        prop_assert!(errors.is_empty());
        prop_assert_eq!(frames.len(), 1);
        prop_assert_eq!(frames[0].uu, uu);
        prop_assert_eq!(&frames[0].data, &data);
    }

    #[test]
    fn interleaved_circuits_reassemble(
        streams in prop::collection::vec(prop::collection::vec(prop::collection::vec(any::<u8>(), 1..300), 1..4), 1..6),
        schedule in prop::collection::vec(any::<usize>(), 0..200),
    ) {
        let vcs: Vec<_> = (0..streams.len()).map(|k| VirtualCircuit::new(k as u8, 32 + k as u16)).collect();
        let queues: Vec<std::collections::VecDeque<_>> = streams
            .iter()
            .zip(&vcs)
            .map(|(frames, &vc)| frames.iter().flat_map(|f| cells_of(vc, f, 0)).collect())
            .collect();
        let order = crate::protocol::atm::interleave(queues, schedule);
        let (frames, errors) = run(&mut Reassembler::default(), &order);
        prop_assert!(errors.is_empty());
        for (stream, &vc) in streams.iter().zip(&vcs) {
            let got: Vec<_> = frames.iter().filter(|f| f.circuit == vc).map(|f| f.data.clone()).collect();
            prop_assert_eq!(&got, stream);
        }
    }

    #[test]
    fn arbitrary_cells_never_panic(cells in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..60), 0..40)) {
        let mut r = Reassembler::new(ReassemblerConfig { max_circuits: 2 });
        for cell in &cells {
            let _ = r.push_cell(cell);
        }
    }
}

//! Arbitrary bytes as a cell, a SAR-PDU, a CS-PDU and a CPCS-PDU: parsing never panics, and
//! whatever parses re-emits to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reef::protocol::atm::aal5::{CpcsPdu, CpcsRepr};
use reef::protocol::atm::aal34::{CsPdu, CsRepr, SarPdu, SarRepr};
use reef::protocol::atm::cell::{Cell, CellRepr, receive_user_cell};

fuzz_target!(|data: &[u8]| {
    let _ = receive_user_cell(data);
    if let Ok(cell) = Cell::new_checked(data) {
        let _ = (
            cell.gfc(),
            cell.circuit(),
            cell.payload_type(),
            cell.clp(),
            cell.payload(),
        );
        if let Ok(repr) = CellRepr::parse(&cell) {
            assert_eq!(
                repr.header_bytes().ok().as_ref().map(|h| &h[..]),
                Some(&data[..5])
            );
        }
    }
    if let Ok(pdu) = SarPdu::new_checked(data) {
        let _ = (
            pdu.sn(),
            pdu.mid(),
            pdu.li(),
            pdu.payload(),
            pdu.computed_crc(),
        );
        if let Ok(repr) = SarRepr::parse(&pdu) {
            let mut copy = data[..48].to_vec();
            let mut out = SarPdu::new_checked(&mut copy[..]).expect("48 bytes");
            repr.emit(&mut out).expect("a parsed SAR-PDU re-emits");
            assert_eq!(&copy[..], &data[..48]);
        }
    }
    if let Ok(pdu) = CsPdu::new_checked(data) {
        let _ = (pdu.payload(), pdu.al());
        if let Ok(repr) = CsRepr::parse(&pdu) {
            assert_eq!(&repr.header()[..], &data[..4]);
            assert_eq!(repr.trailer()[1..], data[data.len() - 3..]);
        }
    }
    if let Ok(pdu) = CpcsPdu::new_checked(data) {
        let _ = pdu.payload();
        if let Ok(repr) = CpcsRepr::parse(&pdu) {
            assert_eq!(usize::from(repr.length), pdu.payload().len());
        }
    }
});

//! `reef live clan`: the CLAN Queue between two real processes. Correctness under stress
//! (millions of messages of random sizes, every byte and the order checked), a killed peer
//! reported rather than waited for, and the command line. Nothing here asserts on timing:
//! the machine may be loaded.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;
use std::time::Duration;

use reef::live::queue::{LiveError, Rx, Tx, spawn};

const SPIN: Duration = Duration::from_micros(15);

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Message `seq`'s size: mostly small, some up to 2 KB, a few up to 64 KB (larger than the
/// 10 KB ring, so they cross it in pieces).
fn size_of(seq: u64) -> usize {
    let r = splitmix(seq);
    match r % 1000 {
        0 => 2049 + (r >> 10) as usize % 63_488,
        1..=99 => 65 + (r >> 10) as usize % 1984,
        _ => 1 + (r >> 10) as usize % 64,
    }
}

/// Message `seq`'s bytes.
fn fill(seq: u64, buf: &mut [u8]) {
    let mut x = splitmix(seq ^ 0x5eed);
    for chunk in buf.chunks_mut(8) {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

#[test]
fn millions_of_random_messages_arrive_whole_and_in_order() {
    const N: u64 = 2_000_000;
    let (link, child) = spawn(1, |l| {
        let mut tx = Tx::new(0);
        let mut buf = vec![0u8; 65_536 + 12];
        for seq in 0..N {
            let n = size_of(seq);
            buf[..8].copy_from_slice(&seq.to_le_bytes());
            buf[8..12].copy_from_slice(&(n as u32).to_le_bytes());
            fill(seq, &mut buf[12..12 + n]);
            if tx.send(l, SPIN, &buf[..12 + n]).is_err() {
                return 1;
            }
        }
        0
    })
    .unwrap();
    let mut rx = Rx::new(0);
    let mut head = [0u8; 12];
    let mut got = vec![0u8; 65_536];
    let mut want = vec![0u8; 65_536];
    let mut bytes = 0u64;
    for seq in 0..N {
        rx.recv(&link, SPIN, &mut head).unwrap();
        let s = u64::from_le_bytes(head[..8].try_into().unwrap());
        let n = u32::from_le_bytes(head[8..].try_into().unwrap()) as usize;
        assert_eq!(s, seq, "out of order");
        assert_eq!(n, size_of(seq), "message {seq}: wrong length");
        rx.recv(&link, SPIN, &mut got[..n]).unwrap();
        fill(seq, &mut want[..n]);
        assert!(got[..n] == want[..n], "message {seq}: bytes differ");
        bytes += n as u64;
    }
    assert!(
        bytes > 200_000_000,
        "{bytes} bytes: the sizes are not what the test means"
    );
    assert_eq!(child.wait().unwrap(), 0);
}

#[test]
fn a_peer_killed_mid_message_is_detected() {
    let (link, child) = spawn(1, |l| {
        let mut tx = Tx::new(0);
        for _ in 0..1000 {
            if tx.send(l, SPIN, &[9u8; 100]).is_err() {
                return 1;
            }
        }
        // Half a message, then death.
        let _ = tx.send(l, SPIN, &[9u8; 50]);
        // SAFETY: the child kills itself, as a crash would.
        unsafe { libc::raise(libc::SIGKILL) };
        0
    })
    .unwrap();
    let mut rx = Rx::new(0);
    let mut m = [0u8; 100];
    for _ in 0..1000 {
        rx.recv(&link, SPIN, &mut m).unwrap();
    }
    let e = rx.recv(&link, SPIN, &mut m).unwrap_err();
    assert!(matches!(e, LiveError::PeerDied), "{e}");
    assert_eq!(child.wait().unwrap(), 128 + libc::SIGKILL);
}

#[test]
fn cli_live_clan_quick_writes_the_records() {
    let dir = std::env::temp_dir().join(format!("reef-live-{}", std::process::id()));
    let json = dir.join("live.json");
    let out = common::reef_writing(&["live", "clan", "--quick", "--quiet"], &json, &dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["system"], "clan-live");
    let recs = j["records"].as_array().unwrap();
    let mut systems = std::collections::BTreeSet::new();
    for r in recs {
        assert!(r["measured"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r.get("simulated").is_none());
        systems.insert(r["case"]["system"].as_str().unwrap().to_string());
    }
    assert_eq!(
        systems,
        ["clan-poll", "clan-sleep", "tcp-loopback", "unix-socket"]
            .map(String::from)
            .into()
    );
    for e in [
        "round-trip",
        "streaming",
        "streaming-summary",
        "transactions",
        "transactions-summary",
    ] {
        assert!(recs.iter().any(|r| r["experiment"] == e), "{e}");
        assert!(dir.join(format!("{e}.csv")).exists(), "{e}.csv");
    }
    assert!(dir.join("streaming.svg").exists() && dir.join("transactions.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_live_bad_arguments_are_explained() {
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_reef"))
            .args(args)
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (code, err) = run(&["live", "atm"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no live run for `atm`") && err.contains("clan"),
        "{err}"
    );
    let (code, err) = run(&["live", "clan", "--poll-us", "soon"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("whole number of microseconds"), "{err}");
    let (code, err) = run(&["live", "clan", "--poll-us", "5000000"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("0 to 1000000"), "{err}");
    let (code, err) = run(&["live", "clan", "--bogus"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    let (code, err) = run(&["live", "clan", "--json"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--json <FILE>"), "{err}");
}

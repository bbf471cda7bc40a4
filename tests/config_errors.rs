//! Bad input gets a clear error naming the file, the line and what was expected — never a
//! panic, never a silent default.

use reef::config::{self, ConfigError};
use std::path::Path;

fn err(text: &str) -> ConfigError {
    err_with(text, &[])
}

fn err_with(text: &str, set: &[&str]) -> ConfigError {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    match config::load_str("bad.toml", text, Path::new("tests/data"), &set) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

const MESH: &str = "[topology]\nkind = \"mesh\"\nk = [4, 4]\n";

/// The error for the 4×4 mesh with `extra` (its line 4 on) and a load of 0.1.
fn err_mesh(extra: &str) -> ConfigError {
    err(&format!("{MESH}{extra}[traffic]\nload = 0.1\n"))
}

#[test]
fn unknown_key_names_line_and_suggests() {
    let e = err(&format!("{MESH}\n[traffic]\nlaod = 0.2\n"));
    assert_eq!(e.line, Some(6));
    assert_eq!(e.key, "traffic.laod");
    assert!(e.msg.contains("unknown field `laod`"), "{e}");
    assert_eq!(e.hint.as_deref(), Some("did you mean `load`?"));
    assert!(e.to_string().starts_with("bad.toml:6: traffic.laod:"), "{e}");
    let e = err(&format!(
        "{MESH}[traffic]\nload = 0.1\n[swich]\nmode = \"wormhole\"\n"
    ));
    assert_eq!(e.key, "swich");
    assert_eq!(e.line, Some(6));
}

#[test]
fn wrong_type() {
    let e = err_mesh("[channel]\nvcs = \"two\"\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "channel.vcs"));
    assert!(e.msg.contains("invalid type"), "{e}");
    let e = err_mesh("[switch]\nrouter_delay = 4\n");
    assert_eq!(e.key, "switch.router_delay");
    assert!(e.hint.unwrap().contains("strings"));
}

#[test]
fn bad_units_and_values() {
    let e = err_mesh("[switch]\nrouter_delay = \"4 parsecs\"\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "switch.router_delay"));
    assert!(e.msg.contains("unknown unit `parsecs`"));
    let e = err_mesh("[switch]\nrouter_delay = \"100 MHz\"\n");
    assert!(e.msg.contains("expected a duration"), "{e}");
    let e = err_mesh("[channel]\nvcs = 0\n");
    assert!(e.msg.contains("1..=64"), "{e}");
    let e = err(&format!("{MESH}[traffic]\nload = -0.5\n"));
    assert_eq!(e.key, "traffic.load");
    let e = err(&format!("{MESH}[traffic]\nload = 1.5\npacket_size = 1\n"));
    assert!(e.msg.contains("Bernoulli"), "{e}");
    let e = err(&format!("{MESH}[topology.extra]\n"));
    assert!(e.key.starts_with("topology"), "{e}");
    // A cycle below a picosecond is the clock's fault, not the default flit time's.
    let e = err(&format!(
        "[sim]\nclock = \"0.3 ps\"\n{MESH}[traffic]\nload = 0.1\n"
    ));
    assert_eq!((e.key.as_str(), e.line), ("sim.clock", Some(2)));
    assert!(e.msg.contains("resolution of 1 ps"), "{e}");
}

#[test]
fn spans_beyond_reef_clock_are_refused() {
    // Picoseconds in 64 bits: a duration, a cycle, a packet's hop or a mean packet gap past
    // 1000 s is an error, not a saturated or wrapped time.
    let e = err_mesh("[channel]\ncredit_delay = \"1e20 cycles\"\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "channel.credit_delay"));
    assert!(e.msg.contains("limit of 1000 s"), "{e}");
    let e = err(&format!(
        "[sim]\nclock = \"1e-30 Hz\"\n{MESH}[traffic]\nload = 0.1\n"
    ));
    assert_eq!(e.key, "sim.clock");
    let e = err(&format!(
        "{MESH}[host]\nsend_per_byte = \"300 s\"\n[traffic]\nload = 0.1\npacket_size = 4\n"
    ));
    // Blamed on the largest part of the hop (it was always the packet size).
    assert_eq!(e.key, "host.send_per_byte");
    assert!(e.msg.contains("one hop of a 4-flit packet"), "{e}");
    let e = err(&format!(
        "{MESH}[traffic]
load = 0.1
packet_size = 4
[host]
send_overhead = \"1000 s\"
"
    ));
    assert_eq!((e.line, e.key.as_str()), (Some(8), "host.send_overhead"), "{e}");
    for injection in ["bernoulli", "poisson", "periodic"] {
        let e = err(&format!(
            "{MESH}[traffic]\ninjection = \"{injection}\"\nload = 1e-300\n"
        ));
        assert_eq!(e.key, "traffic.load");
        assert!(e.msg.contains("one packet every"), "{e}");
    }
    // Far past what a host's channel sends (a source queue counted packet by packet at the
    // window's end never finished counting).
    let e = err(&format!(
        "{MESH}[traffic]\ninjection = \"poisson\"\nload = \"1e20 GB/s\"\n"
    ));
    assert!(e.msg.contains("ten times what a host's channel can send"), "{e}");
    assert!(e.hint.unwrap().contains("backlogged"));
    // Numbers past what reef reads say so.
    let e = err_mesh("[switch]\nrouter_delay = \"1e-300 ns\"\n");
    assert!(e.msg.contains("out of range"), "{e}");
    // The limit itself is accepted; so is a slow host channel without synthetic traffic
    // (no load is used, whatever its default).
    let ok = format!("{MESH}[sim]\nwarmup = \"1000 s\"\n[traffic]\nload = 0.1\n");
    config::load_str("ok.toml", &ok, Path::new("tests/data"), &[]).unwrap();
    let ok = format!("{MESH}[host_channel]\nflit_time = \"100 cycles\"\n[traffic]\npattern = \"none\"\n");
    config::load_str("ok.toml", &ok, Path::new("tests/data"), &[]).unwrap();
}

#[test]
fn cut_through_needs_grants_for_a_whole_packet() {
    // A 5-flit buffer granted 2 flits a token: a sender holding no credit gets two tokens
    // (the fifth slot never makes one), 4 flits: a 5-flit cut-through packet never goes.
    let ok = "[switch]\nmode = \"cut-through\"\n[traffic]\nload = 0.1\npacket_size = 5\n";
    let e = err(&format!(
        "{MESH}[channel]\nbuffer = 5\nflow_control = \"tokens\"\ntoken_grant = 2\n{ok}"
    ));
    assert_eq!(e.key, "switch.mode");
    assert!(e.msg.contains("is sure of 4"), "{e}");
    let ok_text = format!("{MESH}[channel]\nbuffer = 6\nflow_control = \"tokens\"\ntoken_grant = 2\n{ok}");
    assert!(config::load_str("ok.toml", &ok_text, Path::new("tests/data"), &[]).is_ok());
    // So does the channel into a host: a host buffer smaller than a packet stopped the run
    // with an engine invariant (found by fuzzing).
    let e = err(&format!("{MESH}[host_channel]\nbuffer = 4\n{ok}"));
    assert_eq!(e.key, "switch.mode");
    assert!(e.msg.contains("→h") && e.msg.contains("is sure of 4"), "{e}");
}

#[test]
fn waiting_for_a_tail_credit_needs_credits() {
    // Tokens are granted a few at a time, never the whole buffer at once: a VC released only
    // when all its credits are back would never be released.
    let e = err(&format!(
        "{MESH}[channel]\nflow_control = \"tokens\"\n[switch]\nvc_release = \"tail-credit\"\n"
    ));
    assert_eq!(e.key, "switch.vc_release");
    assert!(e.msg.contains("token flow control"), "{e}");
    let e = err(&format!("{MESH}[switch]\nvc_release = \"tail-credits\"\n"));
    assert!(e.msg.contains("tail-credit"), "{e}");
}

#[test]
fn impossible_topologies() {
    let e = err("[topology]\nkind = \"mesh\"\nk = [8, 1]\n[traffic]\nload = 0.1\n");
    assert!(
        e.msg.contains("impossible topology") && e.msg.contains("at least 2"),
        "{e}"
    );
    // The line of `k`, not of `kind`.
    assert_eq!((e.key.as_str(), e.line), ("topology.k", Some(3)));
    let e = err("[topology]\nkind = \"clos\"\nleaves = 4\n[traffic]\nload = 0.1\n");
    assert!(e.msg.contains("needs `hosts_per_leaf`"), "{e}");
    let e = err("[topology]\nkind = \"mesh\"\nk = [4, 4]\nspines = 2\n[traffic]\nload = 0.1\n");
    assert_eq!((e.key.as_str(), e.line), ("topology.spines", Some(4)));
    let e = err("[topology]\nkind = \"meshy\"\n");
    assert!(e.msg.contains("unknown variant `meshy`"), "{e}");
    let e = err("[topology]\nkind = \"file\"\nfile = \"missing.txt\"\n[traffic]\nload = 0.1\n");
    assert!(e.msg.contains("cannot read"), "{e}");
    // A file that never ends is refused, not read for ever.
    if cfg!(target_os = "linux") {
        let e = err("[topology]\nkind = \"file\"\nfile = \"/dev/zero\"\n[traffic]\nload = 0.1\n");
        assert!(e.msg.contains("larger than 256 MB"), "{e}");
    }
    let e =
        err("[topology]\nkind = \"torus\"\nk = [4, 4]\n[routing]\ndateline = true\n[traffic]\nload = 0.1\n");
    assert!(e.msg.contains("even number of VCs"), "{e}");
    let e = err(
        "[topology]\nkind = \"mesh\"\nk = [4, 4]\n[routing]\nalgorithm = \"clos\"\n[traffic]\nload = 0.1\n",
    );
    assert!(e.msg.contains("matching topology"), "{e}");
}

#[test]
fn unreachable_explicit_route() {
    let e = err(
        "[topology]\nkind = \"file\"\nfile = \"chain3.txt\"\n[routing]\nalgorithm = \"source\"\n[[routing.route]]\nsrc = 0\ndst = 2\nports = [0, 1, 2]\n[traffic]\nload = 0.1\n",
    );
    assert_eq!(e.key, "routing.route");
    assert!(e.msg.contains("route 0→2"), "{e}");
}

#[test]
fn syntax_errors_name_the_line() {
    let e = err("name = \"x\"\n[topology\nkind = \"mesh\"\n");
    assert_eq!(e.line, Some(2));
}

#[test]
fn overrides_are_checked_too() {
    let e = err_with(&format!("{MESH}[traffic]\nload = 0.1\n"), &["traffic.load=abc"]);
    // The option that gave the value is named after the message (not in it).
    assert_eq!(e.origin, Some(config::Origin::Set));
    assert!(e.to_string().contains("(from --set)") && e.line.is_none(), "{e}");
    let e = err_with(&format!("{MESH}[traffic]\nload = 0.1\n"), &["traffic.lod=3"]);
    assert_eq!(e.hint.as_deref(), Some("did you mean `load`?"));
    let e = err_with(&format!("{MESH}[traffic]\nload = 0.1\n"), &["traffic"]);
    assert!(e.msg.contains("key=value"), "{e}");
    // An empty part of the key was taken as a key named "" (blamed on a line of the file).
    let e = err_with(&format!("{MESH}[traffic]\nload = 0.1\n"), &["traffic..load=0.1"]);
    assert!(e.msg.contains("is not a key") && e.line.is_none(), "{e}");
}

#[test]
fn irregular_file_errors_name_their_own_file_and_line() {
    let dir = std::env::temp_dir().join("reef-config-errors");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("net.txt"),
        "s0:0 s1:0\nh0 s0:1\nh1 s1:1\nh2 s1:9 latency=fast\n",
    )
    .unwrap();
    let e = config::load_str(
        "cfg.toml",
        "[topology]\nkind = \"file\"\nfile = \"net.txt\"\n[traffic]\nload = 0.1\n",
        &dir,
        &[],
    )
    .unwrap_err();
    assert!(e.msg.contains("net.txt:4:"), "{e}");
    assert_eq!(e.line, Some(3));
    // Numbers no file of this size can reach, and ports past a switch's 128, are errors on
    // their line (a huge number used to size tables by it, or wrap).
    for (bad, what) in [
        ("s4294967295:0 s1:0", "numbered from 0 without gaps"),
        ("s0:0 h99999", "numbered from 0 without gaps"),
        ("s0:0 s1:65535", "not a port number (0 to 127)"),
        ("switch s0 ports=300\ns0:0 s1:0", "reef supports up to 128"),
    ] {
        std::fs::write(dir.join("big.txt"), format!("{bad}\nh0 s0:1\nh1 s1:1\n")).unwrap();
        let e = config::load_str(
            "cfg.toml",
            "[topology]\nkind = \"file\"\nfile = \"big.txt\"\n[traffic]\nload = 0.1\n",
            &dir,
            &[],
        )
        .unwrap_err();
        assert!(e.msg.contains("big.txt:1:") && e.msg.contains(what), "{bad}: {e}");
    }
    // Token flow control on a link the file makes one-way, or gives two VCs or a buffer
    // smaller than a grant: refused as the config loads (`reef check` passed these once and
    // only the run refused them).
    for (net, what) in [
        (
            "s0:1 -> s1:1\ns1:2 -> s0:2",
            "needs a channel in the opposite direction",
        ),
        ("s0:1 s1:1 vcs=2", "runs on one VC, not 2"),
        ("s0:1 s1:1 buffer=2", "token_max 56, buffer 2"),
    ] {
        std::fs::write(dir.join("tok.txt"), format!("h0 s0:0\nh1 s1:0\n{net}\n")).unwrap();
        let e = config::load_str(
            "cfg.toml",
            "[topology]\nkind = \"file\"\nfile = \"tok.txt\"\n[channel]\nflow_control = \"tokens\"\n[traffic]\nload = 0.1\n",
            &dir,
            &[],
        )
        .unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("topology.file", Some(3)), "{net}: {e}");
        assert!(e.msg.contains(what), "{net}: {e}");
    }
}

/// The deserialiser's own words (Rust type and enum names) do not reach the user.
#[test]
fn messages_speak_config_not_rust() {
    let e = err("[topology]\nkind = \"mesh\"\nk = \"eight\"\n[traffic]\nload = 0.1\n");
    assert_eq!((e.line, e.key.as_str()), (Some(3), "topology.k"));
    assert!(e.msg.contains("switches per dimension"), "{e}");
    assert!(e.hint.as_deref().unwrap().contains("k = [8, 4]"));
    let e = err_mesh("[switch]\nmode = {}\n");
    assert_eq!(e.key, "switch.mode");
    assert!(e.msg.contains("a name in quotes"), "{e}");
    let e = err(&format!("{MESH}[traffic]\nload = {{}}\n"));
    assert_eq!(e.key, "traffic.load");
    assert!(e.msg.contains("flits per cycle per host, or a rate"), "{e}");
    // An output FIFO past 2^31 flits once overflowed the engine's buffer sizing.
    let e = err_mesh("[switch]\noutput_buffer = 3000000000\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "switch.output_buffer"));
    assert!(e.msg.contains("must be 1..=1048576 flits, got 3000000000"), "{e}");
    let e = err_mesh("[channel]\nbuffer = -1\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "channel.buffer"));
    assert!(e.msg.contains("a whole number of flits from 1 to 1048576"), "{e}");
    for text in [&e.msg, e.hint.as_deref().unwrap_or("")] {
        assert!(!text.contains("u32") && !text.contains("enum"), "{e}");
    }
    let e = err_mesh("[switch]\nrouter_delay = \"-3 ns\"\n");
    assert!(e.msg.contains("cannot be negative"), "{e}");
    let e = err("[sim]\nseed = 18446744073709551615\n");
    assert_eq!(e.line, Some(2));
    assert!(e.hint.as_deref().unwrap().contains("2^63 - 1"), "{e}");
}

#[test]
fn keys_that_do_not_apply_are_errors() {
    // Each of these was accepted and did nothing (a second fuzzing round).
    let e = err_mesh("[routing]\npaths = \"minimal\"\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "routing.paths"));
    let e = err(&format!(
        "{MESH}[traffic]\npattern = \"tornado\"\ninclude_self = true\nload = 0.1\n"
    ));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "traffic.include_self"));
    let e = err(&format!(
        "{MESH}[traffic]\npattern = \"pairs\"\npairs = []\nload = 0.1\n"
    ));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "traffic.pairs"));
    assert!(e.msg.contains("no pair"), "{e}");
}

#[test]
fn zero_bits_are_blamed_on_the_bits() {
    // A flit or tail of no bits would take no time: the error names the key the user set,
    // not the time reef derives from it.
    for key in ["flit_bits", "tail_bits"] {
        let e = err_mesh(&format!("[channel]\nrate = \"100 MBaud\"\n{key} = 0\n"));
        assert_eq!(
            (e.line, e.key.as_str()),
            (Some(6), format!("channel.{key}").as_str()),
            "{e}"
        );
        assert!(e.msg.contains("at least 1 bit"), "{e}");
    }
}

#[test]
fn on_off_loads_too_low_for_the_periods_are_refused() {
    // A source draws its on and off periods one by one: a packet once in millions of
    // periods made a run seem to hang. It is refused, naming the load.
    let on_off = "[traffic]\ninjection = \"on-off\"\non = \"1 cycle\"\noff = \"1 cycle\"\n";
    let e = err(&format!("{MESH}{on_off}load = 1e-7\n"));
    assert_eq!((e.line, e.key.as_str()), (Some(8), "traffic.load"), "{e}");
    assert!(e.msg.contains("on-periods"), "{e}");
    assert!(
        config::load_str(
            "ok.toml",
            &format!("{MESH}{on_off}load = 1e-3\n"),
            Path::new("."),
            &[]
        )
        .is_ok()
    );
}

#[test]
fn runs_are_counted_and_their_seeds_must_fit() {
    let base = format!("{MESH}[traffic]\nload = 0.1\n");
    for n in ["0", "1001"] {
        let e = err_with(&base, &[&format!("sim.runs={n}")]);
        assert_eq!(e.key, "sim.runs");
        assert!(e.msg.contains("1..=1000"), "{e}");
    }
    let e = err_with(&base, &["sim.runs=3", "sim.seed=9223372036854775806"]);
    assert_eq!(e.key, "sim.runs");
    assert!(e.msg.contains("past 2^63 - 1"), "{e}");
    assert_eq!(e.hint.as_deref(), Some("lower sim.seed"));
    // The last seed may be 2^63 - 1 itself.
    let ok = config::load_str(
        "ok.toml",
        &base,
        Path::new("tests/data"),
        &["sim.runs=2".into(), "sim.seed=9223372036854775806".into()],
    );
    assert_eq!(ok.expect("fits").params.runs, 2);
}

/// Issue 31: value-range messages give the key's real range, and no Rust type name.
#[test]
fn r31_ranges_are_the_keys_own() {
    let base = format!("{MESH}[traffic]\nload = 0.1\n");
    for (set, want) in [
        ("channel.vcs=-1", "from 1 to 64"),
        ("channel.buffer=1000000000000", "from 1 to 1048576"),
        ("sim.batches=-1", "from 1 to 1000"),
        ("sim.runs=-1", "from 1 to 1000"),
        ("switch.output_buffer=-1", "from 0 (none) to 1048576"),
        ("sim=3", "a table of keys (a section such as [sim])"),
    ] {
        let e = err_with(&base, &[set]);
        assert!(e.msg.contains(want), "{set}: {e}");
        assert!(
            !e.msg.contains("4294967295") && !e.msg.contains("Raw"),
            "{set}: {e}"
        );
    }
    // A list that is not TOML is a syntax error, not a string.
    let e = err_with(&base, &["topology.k=[1,,2]"]);
    assert!(e.msg.contains("is not a TOML value"), "{e}");
    assert!(e.hint.unwrap().contains("TOML syntax"));
}

/// Issue 31: what was accepted and should not be.
#[test]
fn r31_refusals() {
    // A packet that cannot be sent within the window and its drain.
    let e = err_with(
        &format!("{MESH}[traffic]\nload = 0.1\n"),
        &["traffic.packet_size=1000000000"],
    );
    assert_eq!(e.key, "traffic.packet_size");
    assert!(e.msg.contains("no measured packet could be delivered"), "{e}");
    // A window too short for one ordinary packet is blamed on the window.
    let e = err_with(
        &format!("{MESH}[traffic]\nload = 0.1\npacket_size = 4\n"),
        &["sim.measure=\"1 cycle\""],
    );
    assert_eq!(e.key, "sim.measure", "{e}");
    // (One that fits runs.)
    config::load_str(
        "ok.toml",
        &format!("{MESH}[traffic]\nload = 0.1\npacket_size = 1000\n"),
        Path::new("."),
        &[],
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("reef-r31-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file_err = |net: &str, extra: &str| {
        std::fs::write(dir.join("n.txt"), net).unwrap();
        config::load_str(
            "cfg.toml",
            &format!("[topology]\nkind = \"file\"\nfile = \"n.txt\"\n{extra}[traffic]\nload = 0.1\n"),
            &dir,
            &[],
        )
        .unwrap_err()
    };
    // A switch linked to itself.
    let e = file_err("s0:0 s1:0\ns1:1 s1:2\nh0 s0:1\nh1 s1:3\n", "");
    assert!(
        e.msg.contains("n.txt:2:") && e.msg.contains("links s1 to itself"),
        "{e}"
    );
    // A port count that is no number says so, with the range.
    let e = file_err("switch s0 ports=100000\ns0:0 s1:0\nh0 s0:1\nh1 s1:1\n", "");
    assert!(e.msg.contains("reef supports up to 128"), "{e}");
    let e = file_err("switch s0 ports=many\ns0:0 s1:0\nh0 s0:1\nh1 s1:1\n", "");
    assert!(
        e.msg
            .contains("`ports=many`: a port count is a whole number from 1 to 128"),
        "{e}"
    );
    // A source route from a host to itself, and two for one pair.
    let net = "s0:0 s1:0\nh0 s0:1\nh1 s1:1\n";
    let e = file_err(
        net,
        "[routing]\nalgorithm = \"source\"\n[[routing.route]]\nsrc = 0\ndst = 0\nports = [1]\n",
    );
    assert!(e.msg.contains("does not send to itself"), "{e}");
    let e = file_err(
        net,
        "[routing]\nalgorithm = \"source\"\n[[routing.route]]\nsrc = 0\ndst = 1\nports = [0, 1]\n\
         [[routing.route]]\nsrc = 0\ndst = 1\nports = [0, 1]\n",
    );
    assert!(e.msg.contains("is given twice"), "{e}");
}

/// Issue 31: `--unset` removes a key, so that an example can switch to token flow control
/// (which refuses a credit delay) or to a message benchmark (which refuses a load).
#[test]
fn r31_unset_removes_a_key() {
    let unset = |k: &str| format!("{}{k}", config::UNSET);
    let ex = Path::new("examples/mesh8x8.toml");
    let e = config::load(ex, &["channel.flow_control=\"tokens\"".to_string()]).unwrap_err();
    assert!(e.hint.unwrap().contains("--unset channel.credit_delay"));
    let s = config::load(
        ex,
        &[
            unset("channel.credit_delay"),
            "channel.flow_control=\"tokens\"".to_string(),
        ],
    )
    .unwrap();
    assert!(matches!(
        s.fabric.channels[0].params.flow,
        reef::fabric::FlowControl::Tokens { .. }
    ));
    // To a message benchmark: the synthetic keys go, the message keys come.
    let mut o: Vec<String> = [
        "traffic.load",
        "traffic.packet_size",
        "traffic.pattern",
        "traffic.injection",
        "sim.warmup",
        "sim.measure",
    ]
    .iter()
    .map(|k| unset(k))
    .collect();
    o.extend(
        [
            "traffic.kind=\"ping-pong\"",
            "traffic.pair=[0, 63]",
            "traffic.message_sizes=[8]",
        ]
        .map(String::from),
    );
    let s = config::load(ex, &o).unwrap();
    assert!(s.messages.is_some());
    // A key the config does not set is an error, not a silent no-op.
    let e = config::load(ex, &[unset("channel.nope")]).unwrap_err();
    assert_eq!(e.origin, Some(config::Origin::Unset));
    assert!(e.msg.contains("does not set it"), "{e}");
    // The run's name says what was run.
    assert_eq!(
        config::run_name("m", &[unset("a.b"), "c.d=1".into(), "sim.check=true".into()]),
        "m (without a.b, c.d=1)"
    );
}

#[test]
fn a_dragonfly_names_what_it_lacks() {
    let df = "[topology]\nkind = \"dragonfly\"\n";
    let e = err(&format!("{df}[traffic]\nload = 0.1\n"));
    assert!(e.msg.contains("hosts_per_switch"), "{e}");
    // BookSim2's min takes VC 1 after the global hop; ugal three VCs.
    let e = err(&format!("{df}hosts_per_switch = 2\n[traffic]\nload = 0.1\n"));
    assert_eq!(e.key, "channel.vcs", "{e}");
    assert_eq!(e.hint.as_deref(), Some("set channel.vcs = 2"));
    let e = err(&format!(
        "{df}hosts_per_switch = 2\n[routing]\nalgorithm = \"dragonfly-ugal\"\n[channel]\nvcs = 2\n\
         [traffic]\nload = 0.1\n"
    ));
    assert_eq!((e.key.as_str(), e.line), ("channel.vcs", Some(7)), "{e}");
    let e = err(&format!(
        "{df}hosts_per_switch = 9\n[channel]\nvcs = 2\n[traffic]\nload = 0.1\n"
    ));
    assert!(e.msg.contains("1 to 8"), "{e}");
    let e = err(&format!(
        "{MESH}[routing]\nalgorithm = \"dragonfly-min\"\n[traffic]\nload = 0.1\n"
    ));
    assert_eq!(e.key, "routing.algorithm", "{e}");
}

#[test]
fn a_host_returns_credits_only_on_credit_channels() {
    let e = err_mesh(
        "[channel]\nflow_control = \"tokens\"\nflit_time = \"10 ns\"\nbuffer = 16\n\
         [host]\ncredit_return = \"2 ns\"\n",
    );
    assert_eq!((e.line, e.key.as_str()), (Some(9), "host.credit_return"));
    assert!(e.msg.contains("credit flow control"), "{e}");
    let e = err_mesh("[switch]\nflit_delay = \"2 parsecs\"\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "switch.flit_delay"));
}

#[test]
fn an_internal_speedup_needs_a_separable_allocator() {
    // Two crossbar allocations a cycle need cycles: a separable allocator.
    let e = err_mesh("[switch]\ninternal_speedup = 2\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "switch.internal_speedup"));
    assert!(e.msg.contains("separable"), "{e}");
    let e = err_mesh("[switch]\nallocator = \"islip\"\ninternal_speedup = 3\n");
    assert_eq!((e.line, e.key.as_str()), (Some(6), "switch.internal_speedup"));
    assert!(e.msg.contains("1 or 2"), "{e}");
    let e = err_mesh("[switch]\nallocator = \"islip\"\nspeedup = 2\ninternal_speedup = 2\n");
    assert_eq!(e.key, "switch.internal_speedup");
    assert!(e.msg.contains("input speed-up"), "{e}");
    let e = err_mesh("[switch]\nallocator = \"islip\"\nrouter_delay = \"0 cycles\"\ninternal_speedup = 2\n");
    assert_eq!(e.key, "switch.internal_speedup");
    assert!(e.msg.contains("router_delay"), "{e}");
    let e = err_mesh("[switch]\nallocator = \"islip\"\nrouter_delay = \"1 cycle\"\ninternal_speedup = 2\n");
    assert!(e.msg.contains("vc_reuse_delay"), "{e}");
    // The output queue sends on edges of whole picoseconds: no clocked channels.
    let e =
        err_mesh("[channel]\nrate = \"300 MB/s\"\n[switch]\nallocator = \"islip\"\ninternal_speedup = 2\n");
    assert_eq!((e.line, e.key.as_str()), (Some(8), "switch.internal_speedup"));
    assert!(e.msg.contains("clocked"), "{e}");
}

#[test]
fn an_output_speedup_needs_a_separable_allocator() {
    // Sub-ports of an output are matched once a cycle: a separable allocator.
    let e = err_mesh("[switch]\noutput_speedup = 2\n");
    assert_eq!((e.line, e.key.as_str()), (Some(5), "switch.output_speedup"));
    assert!(e.msg.contains("separable"), "{e}");
    for bad in ["0", "17"] {
        let e = err_mesh(&format!(
            "[switch]\nallocator = \"islip\"\noutput_speedup = {bad}\n"
        ));
        assert_eq!((e.line, e.key.as_str()), (Some(6), "switch.output_speedup"));
        assert!(e.msg.contains("from 1 to 16"), "{e}");
    }
    let e = err_mesh(
        "[switch]\nallocator = \"islip\"\nrouter_delay = \"1 cycle\"\nvc_reuse_delay = \"1 cycle\"\ninternal_speedup = 2\noutput_speedup = 2\n",
    );
    assert_eq!(e.key, "switch.output_speedup");
    assert!(e.msg.contains("internal speed-up"), "{e}");
    let e = err_mesh("[switch]\nallocator = \"islip\"\noutput_buffer = 4\noutput_speedup = 2\n");
    assert_eq!(e.key, "switch.output_speedup");
    assert!(e.msg.contains("output_buffer"), "{e}");
    let e = err_mesh("[channel]\nrate = \"300 MB/s\"\n[switch]\nallocator = \"islip\"\noutput_speedup = 2\n");
    assert_eq!((e.line, e.key.as_str()), (Some(8), "switch.output_speedup"));
    assert!(e.msg.contains("clocked"), "{e}");
}

#[test]
fn a_batch_says_what_it_needs_and_what_it_has_no_use_for() {
    let batch = |traffic: &str, sim: &str| {
        err(&format!(
            "{MESH}[traffic]\ninjection = \"batch\"\n{traffic}[sim]\n{sim}"
        ))
    };
    let e = batch("", "");
    assert_eq!(e.key, "traffic");
    assert!(e.msg.contains("needs batch = "), "{e}");
    let e = batch("batch = 0\n", "");
    assert_eq!((e.line, e.key.as_str()), (Some(6), "traffic.batch"));
    // A batch source makes a packet a cycle: no load, and no window.
    let e = batch("batch = 10\nload = 0.2\n", "");
    assert_eq!((e.line, e.key.as_str()), (Some(7), "traffic.load"));
    assert!(e.msg.contains("no load"), "{e}");
    for key in [
        "warmup = \"10 cycles\"",
        "measure = \"10 cycles\"",
        "sampling = \"booksim\"",
        "batches = 4",
    ] {
        let e = batch("batch = 10\n", &format!("{key}\n"));
        assert_eq!(e.line, Some(8), "{key}");
        assert!(e.msg.contains("it has no window"), "{e}");
    }
    // More than reef's clock can hold.
    let e = batch("batch = 1000000000\n", "clock = \"1 Hz\"\n");
    assert_eq!(e.key, "traffic.batch");
    // `batch` without a batch source does nothing: refused.
    let e = err(&format!("{MESH}[traffic]\nload = 0.1\nbatch = 10\n"));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "traffic.batch"));
    let e = err(&format!("{MESH}[traffic]\nload = 0.1\nmax_outstanding = 4\n"));
    assert_eq!((e.line, e.key.as_str()), (Some(6), "traffic.max_outstanding"));
    // A message benchmark dates its own messages.
    let e = err(&format!(
        "{MESH}[traffic]\nkind = \"ping-pong\"\npair = [0, 15]\nmessage_sizes = [8]\n[sim]\nsource_queueing = false\n"
    ));
    assert_eq!(e.key, "sim.source_queueing");
}

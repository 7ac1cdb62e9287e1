//! Malformed scenarios: each is rejected before the run with a message that
//! names the location, the field, what was expected and what was found.

use cnsim_core::scenario::{self, Format};

const GOOD: &str = r#"duration = "1ms"
[defaults.switch]
buffer = "150KB"
pause = { xoff = "140KB", xon = "130KB" }
[[switches]]
name = "SW"
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[links]]
between = ["A", "SW"]
rate = "10Gbps"
[[links]]
between = ["SW", "B"]
[[sources]]
host = "A"
to = "B"
load = 0.5
"#;

/// Replace `from` by `to` in the good scenario and return the error text.
fn reject(from: &str, to: &str) -> String {
    assert!(
        GOOD.contains(from),
        "test bug: '{from}' is not in the scenario"
    );
    let text = GOOD.replacen(from, to, 1);
    match scenario::load(&text, "bad.toml", Format::Toml, &[]) {
        Ok(_) => panic!("accepted a scenario with '{to}'"),
        Err(e) => e.to_string(),
    }
}

fn check(msg: &str, line: usize, parts: &[&str]) {
    assert!(
        msg.starts_with(&format!("bad.toml:{line}:")),
        "wrong location in: {msg}"
    );
    for p in parts {
        assert!(msg.contains(p), "'{p}' missing from: {msg}");
    }
}

#[test]
fn the_good_scenario_is_accepted() {
    scenario::load(GOOD, "good.toml", Format::Toml, &[]).unwrap();
}

#[test]
fn bad_unit() {
    check(
        &reject("rate = \"10Gbps\"", "rate = \"10 Gbs\""),
        13,
        &[
            "links[0].rate",
            "expected a rate like '10Gbps'",
            "found '10 Gbs'",
        ],
    );
}

#[test]
fn unknown_key_suggests_the_right_one() {
    check(
        &reject("rate = \"10Gbps\"", "rat = \"10Gbps\""),
        13,
        &["links[0]", "unknown field 'rat'", "did you mean 'rate'"],
    );
}

#[test]
fn negative_rate() {
    check(
        &reject("rate = \"10Gbps\"", "rate = \"-10Gbps\""),
        13,
        &["links[0].rate", "found '-10Gbps'"],
    );
}

#[test]
fn zero_rate() {
    check(
        &reject("rate = \"10Gbps\"", "rate = \"0Gbps\""),
        13,
        &["links[0].rate", "above zero"],
    );
}

#[test]
fn xon_above_xoff() {
    check(
        &reject("xon = \"130KB\"", "xon = \"145KB\""),
        4,
        &[
            "defaults.switch.pause.xon",
            "expected XON below XOFF (140000 B)",
            "found 145000 B",
        ],
    );
}

#[test]
fn threshold_above_the_buffer() {
    check(
        &reject("xoff = \"140KB\"", "xoff = \"160KB\""),
        4,
        &[
            "defaults.switch.pause.xoff",
            "at most the buffer (150000 B)",
            "found 160000 B",
        ],
    );
}

#[test]
fn flow_to_an_unknown_host_suggests_a_name() {
    check(
        &reject("to = \"B\"", "to = \"BB\""),
        18,
        &["sources[0].to", "unknown host 'BB'", "did you mean 'B'"],
    );
}

#[test]
fn flow_to_an_unreachable_host() {
    // C hangs off a second switch that is not linked to the first.
    let island = "[[hosts]]\nname = \"C\"\n[[switches]]\nname = \"SW2\"\n[[links]]\nbetween = [\"C\", \"SW2\"]\n[[sources]]";
    let text = GOOD
        .replacen("[[sources]]", island, 1)
        .replace("to = \"B\"", "to = \"C\"");
    let msg = scenario::load(&text, "bad.toml", Format::Toml, &[])
        .unwrap_err()
        .to_string();
    check(&msg, 24, &["sources[0].to", "host 'A' cannot reach 'C'"]);
}

#[test]
fn empty_topology() {
    let e = scenario::load("duration = \"1ms\"\n", "bad.toml", Format::Toml, &[]).unwrap_err();
    assert!(e.to_string().contains("empty topology"), "{e}");
    assert!(e.to_string().starts_with("bad.toml"), "{e}");
}

#[test]
fn duplicate_names() {
    check(
        &reject("name = \"B\"", "name = \"A\""),
        10,
        &["hosts[1].name", "duplicate name 'A'"],
    );
}

#[test]
fn bad_toml_syntax() {
    let e = scenario::load(
        "duration = \"1ms\n[[hosts]]\n",
        "bad.toml",
        Format::Toml,
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("bad.toml:1:"), "{e}");
}

#[test]
fn missing_required_field() {
    check(
        &reject("duration = \"1ms\"", "bin = \"1us\""),
        1,
        &["missing field 'duration'"],
    );
}

#[test]
fn load_above_one() {
    check(
        &reject("load = 0.5", "load = 1.5"),
        19,
        &["sources[0].load", "expected a load in (0, 1]", "found 1.5"],
    );
}

#[test]
fn wrong_type() {
    check(
        &reject("load = 0.5", "load = \"half\""),
        19,
        &["sources[0].load", "invalid type"],
    );
}

#[test]
fn stop_before_start() {
    check(
        &reject("load = 0.5", "load = 0.5\nstart = \"2ms\"\nstop = \"1ms\""),
        21,
        &[
            "sources[0].stop",
            "expected stop after start (2ms), found 1ms",
        ],
    );
}

#[test]
fn host_with_two_links() {
    let msg = reject(
        "between = [\"SW\", \"B\"]",
        "between = [\"SW\", \"B\"]\n[[links]]\nbetween = [\"A\", \"B\"]",
    );
    check(
        &msg,
        17,
        &["links[2].between[0]", "host 'A' already has a link"],
    );
}

#[test]
fn unknown_enum_value_suggests_the_right_one() {
    check(
        &reject("pause = { xoff", "pause = { mode = \"globl\", xoff"),
        4,
        &[
            "defaults.switch.pause.mode",
            "unknown variant 'globl'",
            "did you mean 'global'",
        ],
    );
}

#[test]
fn disconnected_host() {
    check(
        &reject("[[sources]]", "[[hosts]]\nname = \"LONELY\"\n[[sources]]"),
        16,
        &["hosts[2]", "host 'LONELY' is not connected"],
    );
}

#[test]
fn source_to_itself() {
    check(
        &reject("to = \"B\"", "to = \"A\""),
        18,
        &["sources[0].to", "cannot send to its own host 'A'"],
    );
}

#[test]
fn unknown_plot_name() {
    let msg = reject("[[sources]]", "[plot]\nqueues = [\"SW->Q\"]\n[[sources]]");
    check(
        &msg,
        17,
        &["plot.queues[0]", "unknown queue (\"NODE->PEER\") 'SW->Q'"],
    );
}

#[test]
fn bad_override_path() {
    let e = scenario::load(
        GOOD,
        "good.toml",
        Format::Toml,
        &[("switches[NOPE].latency".into(), "1us".into())],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("no entry of 'switches' is named 'NOPE'"),
        "{e}"
    );
}

#[test]
fn overrides_are_located_and_validated_like_the_file() {
    let e = scenario::load(
        GOOD,
        "good.toml",
        Format::Toml,
        &[("links[0].rate".into(), "ten".into())],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("links[0].rate: expected a rate"),
        "{e}"
    );
    let ok = scenario::load(
        GOOD,
        "good.toml",
        Format::Toml,
        &[("switches[SW].latency".into(), "2us".into())],
    )
    .unwrap();
    assert_eq!(ok.nodes[0].name, "SW");
    match &ok.nodes[0].kind {
        cnsim_core::scenario::spec::NodeKind::Switch(s) => {
            assert_eq!(s.latency, cnsim_core::units::Time::from_us(2))
        }
        _ => unreachable!(),
    }
}

#[test]
fn json_input_names_the_field() {
    let e = scenario::load(
        r#"{"duration": "1ms", "hosts": [{"name": "A", "colour": 1}]}"#,
        "<dict>",
        Format::Json,
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("<dict>: hosts[0]"), "{e}");
    assert!(e.to_string().contains("unknown field 'colour'"), "{e}");
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        "=",
        "[[[",
        "duration = 5",
        "duration = \"5\"",
        "[[links]]\nbetween = 3",
        "[plot]\nlinks = 1",
        "\u{0}\u{ffff}",
    ] {
        let _ = scenario::load(text, "x.toml", Format::Toml, &[]);
        let _ = scenario::load(text, "x.json", Format::Json, &[]);
    }
}

#[test]
fn overrides_select_sources_by_their_derived_name() {
    let sc = scenario::load(
        GOOD,
        "good.toml",
        Format::Toml,
        &[("sources[A->B].load".into(), "0.25".into())],
    )
    .unwrap();
    assert_eq!(sc.sources[0].name, "A->B");
    assert_eq!(sc.sources[0].load, 0.25);
    let json = r#"{"duration": "1ms", "switches": [{"name": "SW"}], "hosts": [{"name": "A"}, {"name": "B"}],
        "links": [{"between": ["A", "SW"]}, {"between": ["SW", "B"]}], "sources": [{"host": "A", "to": "B", "load": 0.5}]}"#;
    let sc = scenario::load(
        json,
        "<dict>",
        Format::Json,
        &[("sources[A->B].load".into(), "0.75".into())],
    )
    .unwrap();
    assert_eq!(sc.sources[0].load, 0.75);
}

#[test]
fn a_sweep_section_is_accepted_and_checked_for_shape() {
    let with = |s: &str| format!("{GOOD}\n[sweep]\n{s}\n");
    let ok = scenario::load(&with("seeds = 3\n[sweep.axes]\n\"sources[0].load\" = [0.2, 0.4]\n[sweep.variants.fast]\n\"links[0].rate\" = \"40Gbps\""), "s.toml", Format::Toml, &[]).unwrap();
    let d = ok.describe();
    assert_eq!(d["sweep"]["seeds"], 3);
    assert_eq!(d["sweep"]["axes"]["sources[0].load"][1], 0.4);
    assert_eq!(d["sweep"]["variants"]["fast"]["links[0].rate"], "40Gbps");
    let plain = scenario::load(GOOD, "s.toml", Format::Toml, &[]).unwrap();
    assert_eq!(
        cnsim_core::results::scenario_hash(&ok),
        cnsim_core::results::scenario_hash(&plain),
        "the sweep does not change the point"
    );
    for (bad, expect) in [
        ("seeds = 0", "sweep.seeds: expected at least 1 seed"),
        (
            "seeds = 2\nseed_list = [1]",
            "give either 'seeds' or 'seed_list'",
        ),
        (
            "[sweep.axes]\n\"sources[0].load\" = []",
            "axis 'sources[0].load' has no values",
        ),
        ("seed = 3", "unknown field 'seed' (did you mean 'seeds'?)"),
    ] {
        let e = scenario::load(&with(bad), "s.toml", Format::Toml, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(expect), "{e}");
        assert!(e.starts_with("s.toml:"), "{e}");
    }
}

#[test]
fn e2cm_and_adapter_mistakes_are_named() {
    // A loop delay without per-destination queues.
    let msg = reject("name = \"A\"\n", "name = \"A\"\nloop_delay = \"10us\"\n");
    check(&msg, 9, &["hosts[0].loop_delay", "set voq = true"]);
    // E2CM without the switch loop.
    let msg = reject("load = 0.5\n", "load = 0.5\n[e2cm]\nmeasure = \"source\"\n");
    assert!(msg.contains("e2cm") && msg.contains("[bcn]"), "{msg}");
    // An unknown measurement point.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\n[bcn]\n[e2cm]\nmeasure = \"middle\"\n",
    );
    check(
        &msg,
        22,
        &[
            "e2cm.measure",
            "\"source\" or \"destination\"",
            "\"middle\"",
        ],
    );
    // Sampling belongs to [bcn]; the flow loop samples with probes.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\n[bcn]\n[e2cm]\ncontrol = { sample_probability = 0.1 }\n",
    );
    check(
        &msg,
        22,
        &["e2cm.control.sample_probability", "probe_probability"],
    );
    // A gain given twice.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\n[bcn]\ngi = 0.5\nincrease_at_fbmax = \"50Mbps\"\n",
    );
    check(
        &msg,
        22,
        &["bcn.increase_at_fbmax", "either gi or increase_at_fbmax"],
    );
}

#[test]
fn qcn_and_tcp_mistakes_are_named() {
    // Two congestion-notification schemes at once.
    let msg = reject("load = 0.5\n", "load = 0.5\n[bcn]\n[qcn]\n");
    assert!(
        msg.contains("qcn") && msg.contains("[bcn] or [qcn]"),
        "{msg}"
    );
    // A quantization rule that does not exist.
    let msg = reject("load = 0.5\n", "load = 0.5\n[qcn]\nquantize = \"ceil\"\n");
    check(
        &msg,
        21,
        &["qcn.quantize", "\"floor\" or \"round\"", "\"ceil\""],
    );
    // A jitter wider than the interval.
    let msg = reject("load = 0.5\n", "load = 0.5\n[qcn]\nsample_jitter = 1.5\n");
    check(&msg, 21, &["qcn.sample_jitter", "[0, 1]", "1.5"]);
    // A zero timer period.
    let msg = reject("load = 0.5\n", "load = 0.5\n[qcn]\ntimer = \"0ms\"\n");
    check(&msg, 21, &["qcn.timer", "above zero"]);
    // An unknown transport.
    let msg = reject("load = 0.5\n", "load = 0.5\ntransport = \"sctp\"\n");
    check(&msg, 20, &["transport", "sctp"]);
    // A TCP frame that leaves no payload after the headers.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\ntransport = \"tcp\"\nframe = \"64B\"\n[tcp]\nheader = \"64B\"\n",
    );
    check(&msg, 16, &["sources[0]", "64 B header", "found 64 B"]);
    // Delayed-ACK details without delayed ACKs.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\n[tcp]\ndelayed_ack = false\ndelayed_ack_timeout = \"40ms\"\n",
    );
    check(&msg, 22, &["tcp.delayed_ack_timeout", "delayed_ack = true"]);
    // A limiter scope that does not exist.
    let msg = reject("load = 0.5\n", "load = 0.5\n[qcn]\nlimiter = \"port\"\n");
    check(
        &msg,
        21,
        &["qcn.limiter", "\"flow\" or \"destination\"", "\"port\""],
    );
    // A watchdog that would fire at once.
    let msg = reject("load = 0.5\n", "load = 0.5\n[watchdog]\npause = \"0ms\"\n");
    check(&msg, 21, &["watchdog.pause", "above zero"]);
    // max_rto below min_rto.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\n[tcp]\nmin_rto = \"200ms\"\nmax_rto = \"1ms\"\n",
    );
    check(&msg, 22, &["tcp.max_rto", "at least min_rto"]);
}

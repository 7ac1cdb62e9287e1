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
fn a_bare_number_for_a_quantity_hints_at_its_unit() {
    check(
        &reject("rate = \"10Gbps\"", "rate = 10e9"),
        13,
        &[
            "links[0].rate",
            "invalid type: floating point",
            "a rate is written with its unit, in quotes: \"10Gbps\"",
        ],
    );
    check(
        &reject("duration = \"1ms\"", "duration = 5"),
        1,
        &[
            "duration",
            "a time is written with its unit, in quotes: \"5ms\"",
        ],
    );
    check(
        &reject("buffer = \"150KB\"", "buffer = 150000"),
        3,
        &["defaults.switch.buffer", "\"150KB\""],
    );
    // A name is not a quantity: no unit hint.
    let msg = reject("name = \"SW\"", "name = 5");
    assert!(!msg.contains("unit"), "{msg}");
}

#[test]
fn unknown_section_suggests_the_right_one() {
    let msg = reject("load = 0.5\n", "load = 0.5\n[qnc]\n");
    check(&msg, 20, &["qnc", "did you mean 'qcn'?"]);
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
    // An unknown source of the baseline latency.
    let msg = reject(
        "load = 0.5\n",
        "load = 0.5\n[bcn]\n[e2cm]\nbaseline = \"never\"\n",
    );
    check(
        &msg,
        22,
        &[
            "e2cm.baseline",
            "\"flow_start\" or \"while_probing\"",
            "\"never\"",
        ],
    );
    // A limiter jitter of the whole gap or more.
    let msg = reject("name = \"A\"\n", "name = \"A\"\nlimiter_jitter = 1.0\n");
    check(
        &msg,
        9,
        &["hosts[0].limiter_jitter", "a fraction in [0, 1)", "found 1"],
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

// ---------------------------------------------------------------- flow names

const THREE_HOSTS: &str = r#"duration = "1ms"
[[switches]]
name = "SW"
[[hosts]]
name = "A"
[[hosts]]
name = "B"
[[hosts]]
name = "C"
[[links]]
between = ["A", "SW"]
[[links]]
between = ["B", "SW"]
[[links]]
between = ["C", "SW"]
[[sources]]
host = "A"
to = ["B", "C"]
load = 0.2
[[sources]]
host = "A"
to = "B"
load = 0.2
"#;

fn load_err(text: &str, overrides: &[(&str, &str)]) -> String {
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match scenario::load(text, "bad.toml", Format::Toml, &ov) {
        Ok(_) => panic!("accepted:\n{text}\nwith {overrides:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn two_flows_with_one_name_are_refused_with_both_locations() {
    // Source 0 (named "A", two destinations) makes flows "A->B" and "A->C";
    // source 1 (unnamed, to B) is also called "A->B".
    let msg = load_err(THREE_HOSTS, &[]);
    check(
        &msg,
        20,
        &["sources[1]", "'A->B'", "bad.toml:18:7", "sources[0].to[0]"],
    );
}

#[test]
fn a_named_source_may_not_take_a_flow_name_either() {
    let text = THREE_HOSTS.replacen("to = \"B\"", "name = \"A->C\"\nto = \"B\"", 1);
    let msg = load_err(&text, &[]);
    check(&msg, 22, &["sources[1].name", "'A->C'", "bad.toml:18:12"]);
}

// ---------------------------------------------------------------- units

#[test]
fn values_out_of_range_say_so_with_the_limit() {
    for (from, to, limit) in [
        (
            "rate = \"10Gbps\"",
            "rate = \"1e30Gbps\"",
            "18446744073.709551615Gbps",
        ),
        (
            "duration = \"1ms\"",
            "duration = \"1e9s\"",
            "18446744.073709551615s",
        ),
        (
            "buffer = \"150KB\"",
            "buffer = \"1e30MB\"",
            "18446744073709551615B",
        ),
    ] {
        let msg = reject(from, to);
        assert!(msg.contains("out of range"), "{msg}");
        assert!(msg.contains(limit), "{msg}");
        assert!(!msg.contains("unknown unit"), "{msg}");
    }
}

#[test]
fn exponents_are_exact() {
    let sc = scenario::load(
        &GOOD
            .replacen("rate = \"10Gbps\"", "rate = \"1e1Gbps\"", 1)
            .replacen("duration = \"1ms\"", "duration = \"1.5e-3s\"", 1),
        "ok.toml",
        Format::Toml,
        &[],
    )
    .unwrap();
    assert_eq!(sc.links[0].rate, cnsim_core::units::Rate::gbps(10));
    assert_eq!(sc.duration, cnsim_core::units::Time::from_us(1500));
}

#[test]
fn a_huge_duration_is_blamed_on_the_duration() {
    let msg = reject(
        "duration = \"1ms\"",
        "duration = \"18446744073709551615ps\"",
    );
    check(&msg, 1, &["duration", "bin"]);
    assert!(msg.contains(": duration: "), "{msg}");
}

// ---------------------------------------------------------------- --set

#[test]
fn set_does_not_move_the_file_locations() {
    // `bin` and a new key in [defaults.switch] insert lines above the bad rate.
    let text = GOOD.replacen("rate = \"10Gbps\"", "rate = \"10 Gbs\"", 1);
    let msg = load_err(
        &text,
        &[("bin", "50us"), ("defaults.switch.latency", "1us")],
    );
    check(&msg, 13, &["links[0].rate", "found '10 Gbs'"]);
    // An unknown key stays where it is written too.
    let text = GOOD.replacen("rate = \"10Gbps\"", "rat = \"10Gbps\"", 1);
    let msg = load_err(&text, &[("bin", "50us")]);
    check(&msg, 13, &["links[0]", "unknown field 'rat'"]);
}

#[test]
fn a_bad_value_from_set_is_reported_as_coming_from_set() {
    let msg = load_err(GOOD, &[("links[0].rate", "10 Gbs")]);
    assert!(
        msg.starts_with("--set links[0].rate=10 Gbs: links[0].rate: "),
        "{msg}"
    );
    let msg = load_err(GOOD, &[("duration", "5")]);
    assert!(msg.starts_with("--set duration=5: duration: "), "{msg}");
    let msg = load_err(GOOD, &[("links[0].rat", "1")]);
    assert!(msg.starts_with("--set links[0].rat=1: "), "{msg}");
    assert!(msg.contains("unknown field 'rat'"), "{msg}");
    let msg = load_err(GOOD, &[("defaults.switch.pause.xon", "145KB")]);
    assert!(
        msg.starts_with("--set defaults.switch.pause.xon=145KB: defaults.switch.pause.xon: "),
        "{msg}"
    );
    // A table made by an override is the override's too.
    let msg = load_err(GOOD, &[("switches[SW].pause.xon", "145KB")]);
    assert!(
        msg.starts_with("--set switches[SW].pause.xon=145KB: switches[0].pause: "),
        "{msg}"
    );
    assert!(msg.contains("missing field 'xoff'"), "{msg}");
}

#[test]
fn a_value_from_set_in_defaults_is_reported_as_coming_from_set() {
    let msg = load_err(GOOD, &[("defaults.switch.buffer", "lots")]);
    assert!(
        msg.starts_with("--set defaults.switch.buffer=lots: defaults.switch.buffer: "),
        "{msg}"
    );
    // A check between a value of the file and one from --set is located in the file.
    let msg = load_err(GOOD, &[("defaults.switch.buffer", "100KB")]);
    check(&msg, 4, &["defaults.switch.pause.xoff", "100000 B"]);
}

#[test]
fn non_finite_numbers_from_set_are_refused_by_name() {
    let json = r#"{"duration": "1ms", "switches": [{"name": "SW"}],
        "hosts": [{"name": "A"}, {"name": "B"}],
        "links": [{"between": ["A", "SW"]}, {"between": ["B", "SW"]}],
        "sources": [{"host": "A", "to": "B", "load": 0.5}]}"#;
    for (key, value) in [
        ("sources[0].load", "nan"),
        ("duration", "inf"),
        ("sources[0].load", "-inf"),
    ] {
        let ov = vec![(key.to_string(), value.to_string())];
        let msg = scenario::load(json, "<dict>", Format::Json, &ov)
            .unwrap_err()
            .to_string();
        assert!(msg.contains(key), "{msg}");
        assert!(msg.contains("finite"), "{msg}");
        assert!(
            !msg.contains("missing field") && !msg.contains("null"),
            "{msg}"
        );
    }
}

// ---------------------------------------------------------------- names

#[test]
fn control_characters_in_names_are_refused() {
    for bad in [
        "A\u{1b}[31m",
        "A\u{0}",
        "A\u{202e}",
        "A\u{2066}",
        "A\u{7f}",
        "A\u{200f}",
    ] {
        let esc = bad.escape_unicode().to_string();
        // Written as TOML escapes so that the file itself stays plain text.
        let toml_name: String = bad
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '[' {
                    c.to_string()
                } else {
                    format!("\\u{:04X}", c as u32)
                }
            })
            .collect();
        let msg = reject("name = \"A\"", &format!("name = \"{toml_name}\""));
        check(&msg, 8, &["hosts[0].name", "control character"]);
        assert!(
            !msg.chars().any(|c| c.is_control()
                || ('\u{200e}'..='\u{200f}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
            "{msg} ({esc})"
        );
    }
    let msg = reject("load = 0.5", "load = 0.5\nname = \"f\\u001B]0;x\\u0007\"");
    check(&msg, 20, &["sources[0].name", "control character"]);
    let msg = reject(
        "duration = \"1ms\"",
        "duration = \"1ms\"\nname = \"run\\u202E\"",
    );
    check(&msg, 2, &["name", "control character"]);
}

// ---------------------------------------------------------------- checks

#[test]
fn a_bcn_min_rate_above_the_line_rate_is_refused() {
    let msg = reject("load = 0.5", "load = 0.5\n[bcn]\nmin_rate = \"20Gbps\"");
    check(&msg, 21, &["bcn.min_rate", "20Gbps", "10Gbps", "'A'"]);
    let msg = reject("load = 0.5", "load = 0.5\n[qcn]\nmin_rate = \"11Gbps\"");
    check(&msg, 21, &["qcn.min_rate", "11Gbps"]);
}

#[test]
fn a_source_starting_after_the_run_is_refused() {
    let msg = reject("load = 0.5", "load = 0.5\nstart = \"2ms\"\nstop = \"3ms\"");
    check(&msg, 20, &["sources[0].start", "2ms", "duration"]);
    let msg = reject("load = 0.5", "load = 0.5\nstart = \"1ms\"");
    check(&msg, 20, &["sources[0].start", "1ms", "duration"]);
}

#[test]
fn a_switch_buffer_smaller_than_a_frame_is_refused() {
    let text = GOOD.replacen(
        "buffer = \"150KB\"\npause = { xoff = \"140KB\", xon = \"130KB\" }",
        "buffer = \"1000B\"",
        1,
    );
    let msg = load_err(&text, &[]);
    check(&msg, 3, &["defaults.switch.buffer", "1000 B", "1500 B"]);
    // Frames that fit are fine.
    let ok = text.replacen("load = 0.5", "load = 0.5\nframe = \"1000B\"", 1);
    scenario::load(&ok, "ok.toml", Format::Toml, &[]).unwrap();
}

// ---------------------------------------------------------------- files

fn file_err(path: &std::path::Path) -> String {
    // In a thread, so that a read that blocks fails the test instead of hanging it.
    let p = path.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(
            scenario::load_file(&p, &[])
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    });
    match rx.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(Err(e)) => e,
        Ok(Ok(())) => panic!("{} accepted", path.display()),
        Err(_) => panic!("reading {} did not return", path.display()),
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cnsim-malformed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn files_that_are_not_regular_are_refused_before_reading() {
    let e = file_err(std::path::Path::new("/dev/zero"));
    assert!(
        e.starts_with("/dev/zero: ") && e.contains("not a regular file"),
        "{e}"
    );
    let fifo = scratch("pipe.toml");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = file_err(&fifo);
    assert!(
        e.starts_with(&format!("{}: ", fifo.display())) && e.contains("not a regular file"),
        "{e}"
    );
    let dir = scratch("dir.toml");
    std::fs::create_dir_all(&dir).unwrap();
    let e = file_err(&dir);
    assert!(e.contains("is a directory"), "{e}");
}

#[test]
fn files_over_the_size_limit_are_refused_before_reading() {
    let big = scratch("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(16 * 1024 * 1024 + 1).unwrap();
    let e = file_err(&big);
    assert!(e.starts_with(&format!("{}: ", big.display())), "{e}");
    assert!(e.contains("16 MiB") && e.contains("too large"), "{e}");
}

#[test]
fn unreadable_and_non_utf8_files_name_the_path() {
    let e = file_err(std::path::Path::new("/proc/self/mem"));
    assert!(e.starts_with("/proc/self/mem: "), "{e}");
    let latin1 = scratch("latin1.toml");
    std::fs::write(&latin1, b"duration = \"1ms\"\nname = \"caf\xe9\"\n").unwrap();
    let e = file_err(&latin1);
    assert!(
        e.starts_with(&format!("{}:2:", latin1.display())) && e.contains("UTF-8"),
        "{e}"
    );
}

#[test]
fn a_million_plain_entries_are_refused_without_blaming_repeat() {
    let text = "duration = \"1ms\"\n".to_string() + &"[[hosts]]\n".repeat(1_000_001);
    let started = std::time::Instant::now();
    let msg = load_err(&text, &[]);
    assert!(!msg.contains("repeat"), "{msg}");
    assert!(
        msg.contains("1000000 entries") || msg.contains("1,000,000 entries"),
        "{msg}"
    );
    assert!(
        msg.starts_with("bad.toml:1000002:1: hosts[1000000]"),
        "{msg}"
    );
    eprintln!("refused in {:?}", started.elapsed());
}

#[test]
fn a_bad_value_set_on_a_dict_scenario_names_the_override() {
    let json = r#"{"duration": "1ms", "switches": [{"name": "SW"}],
        "hosts": [{"name": "A"}, {"name": "B"}],
        "links": [{"between": ["A", "SW"]}, {"between": ["B", "SW"]}],
        "sources": [{"host": "A", "to": "B", "load": 0.5}]}"#;
    let ov = vec![("duration".to_string(), "5".to_string())];
    let msg = scenario::load(json, "<dict>", Format::Json, &ov)
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("--set duration=5: duration: invalid type"),
        "{msg}"
    );
    let msg = scenario::load(&json.replace("0.5", "\"x\""), "<dict>", Format::Json, &[])
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("<dict>: sources[0].load: invalid type"),
        "{msg}"
    );
}

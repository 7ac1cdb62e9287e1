//! Replicated entries: `repeat` over `[params]`, expansion order and names,
//! overrides that resize a topology, located errors in copies, and a run
//! that matches the same scenario written out by hand.

use crate::common::*;
use cnsim_core::scenario::{self, Format, Scenario, ScenarioError};

/// A core switch with `edges` edge switches, `per_edge` clients on each,
/// every client sending to one hot host.
const FABRIC: &str = r#"name = "fabric"
duration = "2ms"

[params]
edges = 3
per_edge = 2

[defaults.switch]
buffer = "150KB"

[[switches]]
name = "CORE"
[[switches]]
name = "E{e}"
repeat = { e = "edges" }

[[hosts]]
name = "HOT"
[[hosts]]
name = "C{e}.{j}"
repeat = { e = "edges", j = "per_edge" }

[[links]]
between = ["HOT", "CORE"]
[[links]]
between = ["E{e}", "CORE"]
repeat = { e = "edges" }
[[links]]
between = ["C{e}.{j}", "E{e}"]
repeat = { e = "edges", j = "per_edge" }

[[sources]]
host = "C{e}.{j}"
to = "HOT"
load = 0.2
repeat = { e = "edges", j = "per_edge" }
"#;

fn load(text: &str, overrides: &[(&str, &str)]) -> Result<Scenario, ScenarioError> {
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    scenario::load(text, "fabric.toml", Format::Toml, &ov)
}

fn fabric(overrides: &[(&str, &str)]) -> Scenario {
    load(FABRIC, overrides).unwrap_or_else(|e| panic!("{e}"))
}

/// The fabric with `from` replaced by `to`; the error it gives, as text.
fn reject(from: &str, to: &str, overrides: &[(&str, &str)]) -> String {
    assert!(FABRIC.contains(from), "test bug: '{from}' is not in FABRIC");
    match load(&FABRIC.replacen(from, to, 1), overrides) {
        Ok(_) => panic!("accepted the fabric with '{to}'"),
        Err(e) => e.to_string(),
    }
}

fn node_names(sc: &Scenario) -> Vec<&str> {
    sc.nodes.iter().map(|n| n.name.as_str()).collect()
}

fn source_names(sc: &Scenario) -> Vec<&str> {
    sc.sources.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn copies_follow_their_template_in_cross_product_order() {
    let sc = fabric(&[]);
    assert_eq!(
        node_names(&sc),
        ["CORE", "E1", "E2", "E3", "HOT", "C1.1", "C1.2", "C2.1", "C2.2", "C3.1", "C3.2"]
    );
    assert_eq!(sc.links.len(), 1 + 3 + 6);
    let ends: Vec<String> = sc
        .links
        .iter()
        .map(|l| format!("{}-{}", sc.nodes[l.a].name, sc.nodes[l.b].name))
        .collect();
    assert_eq!(ends[1..4], ["E1-CORE", "E2-CORE", "E3-CORE"]);
    assert_eq!(ends[4..6], ["C1.1-E1", "C1.2-E1"]);
    assert_eq!(ends[9], "C3.2-E3");
    assert_eq!(
        source_names(&sc),
        [
            "C1.1->HOT",
            "C1.2->HOT",
            "C2.1->HOT",
            "C2.2->HOT",
            "C3.1->HOT",
            "C3.2->HOT"
        ]
    );
    let hot = sc.nodes.iter().position(|n| n.name == "HOT").unwrap();
    assert!(sc.sources.iter().all(|s| s.dsts == [hot] && s.load == 0.2));
}

#[test]
fn variables_nest_in_the_order_of_their_names() {
    // Written j first: tables have no order, so `e` still varies slowest.
    let text = FABRIC.replacen(
        "repeat = { e = \"edges\", j = \"per_edge\" }",
        "repeat = { j = \"per_edge\", e = \"edges\" }",
        1,
    );
    let sc = load(&text, &[]).unwrap();
    assert_eq!(node_names(&sc), node_names(&fabric(&[])));
}

#[test]
fn overriding_a_param_resizes_the_topology() {
    let sc = fabric(&[("params.edges", "11")]);
    assert_eq!(sc.nodes.len(), 1 + 11 + 1 + 11 * 2);
    assert_eq!(sc.links.len(), 1 + 11 + 11 * 2);
    assert_eq!(sc.sources.len(), 22);
    assert_eq!(sc.nodes.last().unwrap().name, "C11.2");

    let sc = fabric(&[("params.edges", "2"), ("params.per_edge", "4")]);
    assert_eq!(
        node_names(&sc)[4..],
        ["C1.1", "C1.2", "C1.3", "C1.4", "C2.1", "C2.2", "C2.3", "C2.4"]
    );
}

#[test]
fn overrides_reach_templates_by_index_and_by_name() {
    // A field of a template applies to every copy.
    let sc = fabric(&[("sources[0].load", "0.25")]);
    assert!(sc.sources.iter().all(|s| s.load == 0.25));
    // A template is selected by its name as written.
    let sc = fabric(&[("hosts[C{e}.{j}].egress", "150KB")]);
    let egress: Vec<Option<u64>> = sc
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            cnsim_core::scenario::spec::NodeKind::Host(h) => Some(h.egress),
            _ => None,
        })
        .collect();
    assert_eq!(egress[0], None, "HOT is not a copy");
    assert!(egress[1..].iter().all(|e| *e == Some(150_000)));
    // A count in `repeat` is a field like any other.
    let sc = fabric(&[
        ("switches[1].repeat.e", "2"),
        ("hosts[1].repeat.e", "2"),
        ("links[1].repeat.e", "2"),
        ("links[2].repeat.e", "2"),
        ("sources[0].repeat.e", "2"),
    ]);
    assert_eq!(sc.nodes.len(), 1 + 2 + 1 + 4);
}

#[test]
fn a_count_of_zero_makes_no_copies() {
    let sc = fabric(&[("params.per_edge", "0")]);
    assert_eq!(node_names(&sc), ["CORE", "E1", "E2", "E3", "HOT"]);
    assert!(sc.sources.is_empty());
    assert_eq!(sc.links.len(), 4);
}

#[test]
fn a_count_may_be_a_literal() {
    let text = FABRIC
        .replace("repeat = { e = \"edges\" }", "repeat = { e = 2 }")
        .replace(
            "repeat = { e = \"edges\", j = \"per_edge\" }",
            "repeat = { e = 2, j = \"per_edge\" }",
        );
    let sc = load(&text, &[]).unwrap();
    assert_eq!(sc.nodes.len(), 1 + 2 + 1 + 4);
    // The params are then unused, and overriding them changes nothing.
    let resized = load(&text, &[("params.edges", "7")]).unwrap();
    assert_eq!(node_names(&resized), node_names(&sc));
}

#[test]
fn destinations_may_use_the_variables_too() {
    // Each client of E1 sends to its twin under E2 (and to HOT, in a list).
    let text = format!(
        "{FABRIC}\n[[sources]]\nname = \"twin{{j}}\"\nhost = \"C1.{{j}}\"\nto = [\"C2.{{j}}\", \"HOT\"]\nload = 0.1\nrepeat = {{ j = \"per_edge\" }}\n"
    );
    let sc = load(&text, &[]).unwrap();
    let twin2 = sc.sources.iter().find(|s| s.name == "twin2").unwrap();
    let dsts: Vec<&str> = twin2
        .dsts
        .iter()
        .map(|&d| sc.nodes[d].name.as_str())
        .collect();
    assert_eq!(sc.nodes[twin2.host].name, "C1.2");
    assert_eq!(dsts, ["C2.2", "HOT"]);
}

#[test]
fn unknown_parameter() {
    assert_eq!(
        reject("j = \"per_edge\" }", "j = \"per_edg\" }", &[]),
        "fabric.toml:21:29: hosts[1].repeat.j: unknown parameter 'per_edg' (did you mean 'per_edge'?)"
    );
}

#[test]
fn unknown_variable_in_a_name() {
    assert_eq!(
        reject("name = \"C{e}.{j}\"", "name = \"C{e}.{k}\"", &[]),
        "fabric.toml:20:8: hosts[1].name: unknown variable '{k}'; this entry repeats over e, j"
    );
    // An entry without `repeat` has no variables.
    assert_eq!(
        reject("name = \"HOT\"", "name = \"HOT{e}\"", &[]),
        "fabric.toml:18:8: hosts[0].name: unknown variable '{e}'; this entry has no 'repeat' (braces in a name mark a variable)"
    );
    // In a list of endpoints, at the element.
    assert_eq!(
        reject(
            "between = [\"E{e}\", \"CORE\"]",
            "between = [\"E{f}\", \"CORE\"]",
            &[]
        ),
        "fabric.toml:26:12: links[1].between[0]: unknown variable '{f}'; this entry repeats over e"
    );
    assert_eq!(
        reject("name = \"E{e}\"", "name = \"E{e\"", &[]),
        "fabric.toml:14:8: switches[1].name: unclosed '{' in 'E{e'; a variable is written {name}"
    );
}

#[test]
fn params_are_non_negative_integers() {
    assert_eq!(
        reject("edges = 3", "edges = -1", &[]),
        "fabric.toml:5:9: params.edges: expected an integer >= 0, found -1"
    );
    assert_eq!(
        reject("edges = 3", "edges = 2.5", &[]),
        "fabric.toml:5:9: params.edges: expected an integer >= 0, found 2.5"
    );
    assert_eq!(
        reject("edges = 3", "edges = \"3\"", &[]),
        "fabric.toml:5:9: params.edges: expected an integer >= 0, found \"3\""
    );
    // Through --set too (reported as the override's).
    assert_eq!(
        reject("edges = 3", "edges = 3", &[("params.per_edge", "-2")]),
        "--set params.per_edge=-2: params.per_edge: expected an integer >= 0, found -2"
    );
}

#[test]
fn bad_repeat_tables() {
    assert_eq!(
        reject("repeat = { e = \"edges\" }", "repeat = { e = -2 }", &[]),
        "fabric.toml:15:16: switches[1].repeat.e: expected a count (an integer >= 0) or a parameter name, found -2"
    );
    assert_eq!(
        reject("repeat = { e = \"edges\" }", "repeat = { E = \"edges\" }", &[]),
        "fabric.toml:15:16: switches[1].repeat.E: expected a variable name of lowercase letters, digits and '_' (not starting with a digit), found 'E'"
    );
    assert_eq!(
        reject("repeat = { e = \"edges\" }", "repeat = {}", &[]),
        "fabric.toml:15:10: switches[1].repeat: expected at least one variable, e.g. repeat = { i = 4 }"
    );
}

#[test]
fn repeat_is_not_a_default() {
    assert_eq!(
        reject(
            "buffer = \"150KB\"",
            "buffer = \"150KB\"\nrepeat = { e = 2 }",
            &[]
        ),
        "fabric.toml:10:10: defaults.switch.repeat: 'repeat' cannot have a default; set it on each entry to replicate"
    );
}

#[test]
fn a_copy_that_collides_is_a_duplicate_name() {
    // A plain entry after the template: reported at the plain entry.
    let text = FABRIC.replacen("[[links]]", "[[hosts]]\nname = \"C2.1\"\n\n[[links]]", 1);
    let e = load(&text, &[]).unwrap_err().to_string();
    assert_eq!(
        e,
        "fabric.toml:24:8: hosts[2].name: duplicate name 'C2.1' (first used at hosts[1], copy e=2, j=1)"
    );
    // A plain entry before it: reported at the template, naming the copy.
    let e = reject("name = \"HOT\"", "name = \"C1.2\"", &[]);
    assert_eq!(
        e,
        "fabric.toml:20:8: hosts[1].name: duplicate name 'C1.2' (first used at hosts[0]) (copy e=1, j=2)"
    );
}

#[test]
fn errors_in_copies_point_at_the_template_and_name_the_copy() {
    // Fewer clients than links to them: the first link to a missing client.
    let e = load(FABRIC, &[("hosts[1].repeat.e", "2")])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "fabric.toml:29:12: links[2].between[0]: unknown node 'C3.1' (did you mean 'C1.1'?) (copy e=3, j=1)"
    );
    // A copy that sends to itself.
    let e = reject("to = \"HOT\"", "to = \"C{e}.1\"", &[]);
    assert_eq!(
        e,
        "fabric.toml:34:6: sources[0].to: a source cannot send to its own host 'C1.1' (copy e=1, j=1)"
    );
}

#[test]
fn the_expansion_is_capped() {
    let e = load(FABRIC, &[("params.edges", "2000000")])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "fabric.toml:15:10: switches[1].repeat: expected at most 1000000 entries in the scenario, found more (this entry makes 2000000)"
    );
    // Counts whose product overflows are caught the same way.
    let e = load(
        FABRIC,
        &[
            ("params.edges", "1"),
            ("hosts[1].repeat.j", "4294967296"),
            ("hosts[1].repeat.e", "4294967296"),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("hosts[1].repeat: expected at most 1000000 entries"),
        "{e}"
    );
}

#[test]
fn json_scenarios_repeat_too() {
    let json = r#"{"duration": "1ms", "params": {"n": 3},
        "switches": [{"name": "SW"}],
        "hosts": [{"name": "SINK"}, {"name": "H{i}", "repeat": {"i": "n"}}],
        "links": [{"between": ["SINK", "SW"]}, {"between": ["H{i}", "SW"], "repeat": {"i": "n"}}],
        "sources": [{"host": "H{i}", "to": "SINK", "load": 0.1, "repeat": {"i": "n"}}]}"#;
    let load_json = |k: &str, v: &str| {
        let ov = vec![(k.to_string(), v.to_string())];
        scenario::load(json, "<dict>", Format::Json, &ov)
    };
    let sc = scenario::load(json, "<dict>", Format::Json, &[]).unwrap();
    assert_eq!(source_names(&sc), ["H1->SINK", "H2->SINK", "H3->SINK"]);
    assert_eq!(load_json("params.n", "5").unwrap().sources.len(), 5);
    assert_eq!(
        load_json("sources[0].to", "H{i}").unwrap_err().to_string(),
        "--set sources[0].to=H{i}: sources[0].to: a source cannot send to its own host 'H1' (copy i=1)"
    );
    assert_eq!(
        load_json("hosts[1].repeat.i", "m").unwrap_err().to_string(),
        "--set hosts[1].repeat.i=m: hosts[1].repeat.i: unknown parameter 'm'"
    );
}

/// The fabric at 2 edges x 2 clients, written out by hand.
const BY_HAND: &str = r#"name = "fabric"
duration = "2ms"

[defaults.switch]
buffer = "150KB"

[[switches]]
name = "CORE"
[[switches]]
name = "E1"
[[switches]]
name = "E2"

[[hosts]]
name = "HOT"
[[hosts]]
name = "C1.1"
[[hosts]]
name = "C1.2"
[[hosts]]
name = "C2.1"
[[hosts]]
name = "C2.2"

[[links]]
between = ["HOT", "CORE"]
[[links]]
between = ["E1", "CORE"]
[[links]]
between = ["E2", "CORE"]
[[links]]
between = ["C1.1", "E1"]
[[links]]
between = ["C1.2", "E1"]
[[links]]
between = ["C2.1", "E2"]
[[links]]
between = ["C2.2", "E2"]

[[sources]]
host = "C1.1"
to = "HOT"
load = 0.2
[[sources]]
host = "C1.2"
to = "HOT"
load = 0.2
[[sources]]
host = "C2.1"
to = "HOT"
load = 0.2
[[sources]]
host = "C2.2"
to = "HOT"
load = 0.2
"#;

#[test]
fn a_replicated_scenario_runs_like_the_one_written_out() {
    let replicated = fabric(&[("params.edges", "2"), ("params.per_edge", "2")]);
    let by_hand = load_str(BY_HAND);
    assert_eq!(
        cnsim_core::results::scenario_hash(&replicated),
        cnsim_core::results::scenario_hash(&by_hand),
        "the same resolved scenario"
    );
    let a = run(&replicated, Some(4));
    let b = run(&by_hand, Some(4));
    assert!(a.summary.totals.volume.delivered_frames > 0);
    assert_eq!(a.summary.events, b.summary.events);
    assert_eq!(
        serde_json::to_value(&a.summary.totals).unwrap(),
        serde_json::to_value(&b.summary.totals).unwrap()
    );
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.series, b.series);
    assert_conservation(&a);
}

#[test]
fn the_documented_example_is_valid() {
    let doc = std::fs::read_to_string(repo_file("docs/scenario-format.md")).unwrap();
    let section = &doc[doc.find("## Replicated entries").expect("the section")..];
    let start = section.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + section[start..].find("```").unwrap();
    let sc = load_str(&section[start..end]);
    assert!(sc.nodes.iter().any(|n| n.name == "C4.2"));
    let ov = vec![("params.edges".to_string(), "11".to_string())];
    let bigger = scenario::load(&section[start..end], "doc.toml", Format::Toml, &ov).unwrap();
    assert!(bigger.nodes.len() > sc.nodes.len());
}

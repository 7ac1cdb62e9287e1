//! Same scenario and seed: identical results. Different seed: different
//! arrivals. Adding a flow elsewhere: another flow's arrivals unchanged.

use crate::common::*;

fn short(variant: &str) -> cnsim_core::Scenario {
    load_file(
        &format!("scenarios/baseline/{variant}.toml"),
        &[("duration", "20ms")],
    )
}

#[test]
fn same_seed_gives_identical_results() {
    for v in ["no_cm", "pause"] {
        let sc = short(v);
        let a = run(&sc, Some(7));
        let b = run(&sc, Some(7));
        assert_eq!(a.series, b.series);
        assert_eq!(a.flows, b.flows);
        assert_eq!(a.queues, b.queues);
        assert_eq!(a.summary.events, b.summary.events);
    }
}

#[test]
fn results_do_not_depend_on_the_thread() {
    let sc = short("pause");
    let here = run(&sc, Some(3));
    let there = std::thread::spawn(move || run(&sc, Some(3)))
        .join()
        .unwrap();
    assert_eq!(here.series, there.series);
}

#[test]
fn different_seeds_give_different_arrivals() {
    let sc = short("no_cm");
    let a = run(&sc, Some(1));
    let b = run(&sc, Some(2));
    assert_ne!(a.series.flow_tx_bytes, b.series.flow_tx_bytes);
}

#[test]
fn adding_a_flow_does_not_change_another_flows_arrivals() {
    let base = short("no_cm");
    // Same scenario plus a source on S2 (an otherwise silent host) toward S1.
    let text = std::fs::read_to_string(repo_file("scenarios/baseline/no_cm.toml"))
        .unwrap()
        .replace(
            "[plot]",
            "[[sources]]\nhost = \"S2\"\nto = \"S1\"\nload = 0.1\n\n[plot]",
        );
    let ov = vec![("duration".to_string(), "20ms".to_string())];
    let more =
        cnsim_core::scenario::load(&text, "more.toml", cnsim_core::Format::Toml, &ov).unwrap();
    assert_eq!(more.flows().len(), base.flows().len() + 1);
    let a = run(&base, Some(5));
    let b = run(&more, Some(5));
    let n = a.series.n_bins;
    for (i, f) in base.flows().iter().enumerate() {
        let j = more.flows().iter().position(|g| g.name == f.name).unwrap();
        assert_eq!(
            a.series.flow_tx_bytes[i * n..(i + 1) * n],
            b.series.flow_tx_bytes[j * n..(j + 1) * n],
            "offered series of {} changed",
            f.name
        );
    }
}

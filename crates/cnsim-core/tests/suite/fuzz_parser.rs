//! Fuzzing the scenario parser and validator: shipped scenarios (and the
//! format doc's generated topology), mutated at random (lines dropped,
//! duplicated or cut; values swapped for hostile tokens; bytes inserted),
//! must load or be refused with a located message — never panic. CI runs the default budget (`FUZZ_CASES`, below, about a
//! minute with the other tests on 2 cores); for a longer campaign:
//!
//! ```sh
//! PROPTEST_CASES=200000 cargo test --release -p cnsim-core --test suite fuzz_parser
//! ```
//!
//! A failing case is written to `fuzz_parser.proptest-regressions` beside
//! this file and replayed first on every later run; the file must not exist
//! in the repository (the corpus of found crashes is empty).

use crate::common::*;
use cnsim_core::scenario::{self, Format};
use proptest::prelude::*;

const FUZZ_CASES: u32 = 100_000;

const SHIPPED: [&str; 6] = [
    "scenarios/baseline/bcn_pause.toml",
    "scenarios/cn_sim_baseline/pause_bcn00.toml",
    "scenarios/hotspot_degree/bcn.toml",
    "scenarios/e2cm/e2cm.toml",
    "scenarios/qcn_tcp/hotspot.toml",
    "scenarios/deadlock/ring.toml",
];

/// One more family: the `[topology]` example of the format doc (a k = 4
/// fat tree with replicated sources over its host names). The bench
/// scenarios are too large to load 100,000 times.
fn family(i: usize) -> String {
    if let Some(path) = SHIPPED.get(i) {
        return std::fs::read_to_string(repo_file(path)).unwrap();
    }
    documented_topology_example()
}

/// Tokens that stress the parser: bad units, extremes, wrong types, names
/// that do not exist, broken syntax.
const HOSTILE: [&str; 32] = [
    "0",
    "-1",
    "1e309",
    "nan",
    "\"\"",
    "\"0B\"",
    "\"-5KB\"",
    "\"1e30Gbps\"",
    "\"18446744073709551616B\"",
    "\"10 Gbps\"",
    "\"1.5.3ms\"",
    "\"inf\"",
    "\"KB\"",
    "\"0ps\"",
    "\"1ps\"",
    "\"999999999999s\"",
    "true",
    "[]",
    "{}",
    "[1, \"a\"]",
    "{ x = 1 }",
    "\"NOPE\"",
    "\"*\"",
    "\"→\"",
    "18446744073709551615",
    "-9223372036854775808",
    "0.0000001",
    "1e-300",
    "\"9217B\"",
    "[",
    "\"\\u0000\"",
    "'''",
];

#[derive(Debug, Clone)]
enum Mutation {
    DropLine(usize),
    DuplicateLine(usize),
    CutAt(usize),
    ReplaceValue(usize, usize),
    InsertByte(usize, u8),
}

fn mutate(text: &str, m: &Mutation) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let pick = |i: usize| i % lines.len().max(1);
    if lines.is_empty() && !matches!(m, Mutation::InsertByte(..)) {
        return text.to_string();
    }
    match *m {
        Mutation::DropLine(i) => {
            let i = pick(i);
            lines
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != i)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
        }
        Mutation::DuplicateLine(i) => {
            let i = pick(i);
            let mut v = lines.clone();
            v.insert(i, lines[i]);
            v.join("\n")
        }
        Mutation::CutAt(i) => {
            let cut = i % (text.len() + 1);
            let mut end = cut;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_string()
        }
        Mutation::ReplaceValue(i, t) => {
            let i = pick(i);
            let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            if let Some(eq) = v[i].find(" = ") {
                v[i] = format!("{} = {}", &v[i][..eq], HOSTILE[t % HOSTILE.len()]);
            }
            v.join("\n")
        }
        Mutation::InsertByte(i, b) => {
            let mut bytes = text.as_bytes().to_vec();
            let at = i % (bytes.len() + 1);
            bytes.insert(at, b);
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::CutAt),
        (any::<usize>(), any::<usize>()).prop_map(|(i, t)| Mutation::ReplaceValue(i, t)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::InsertByte(i, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(FUZZ_CASES),
        max_shrink_iters: 2_000,
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::Direct(
            "tests/fuzz_parser.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_scenarios_load_or_are_refused_with_a_location(
        file in 0..SHIPPED.len() + 1,
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut text = family(file);
        for m in &mutations {
            text = mutate(&text, m);
        }
        match scenario::load(&text, "fuzz.toml", Format::Toml, &[]) {
            Ok(sc) => {
                // A valid scenario also describes itself (what `validate` shows).
                let _ = sc.describe();
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("fuzz.toml"), "unlocated: {msg}");
                prop_assert!(msg.len() > "fuzz.toml: ".len() + 10, "empty message: {msg}");
            }
        }
    }
}

#[test]
fn no_crash_was_ever_recorded() {
    let corpus = repo_file("crates/cnsim-core/tests/fuzz_parser.proptest-regressions");
    assert!(
        !corpus.exists(),
        "{} holds failing cases: fix them",
        corpus.display()
    );
}

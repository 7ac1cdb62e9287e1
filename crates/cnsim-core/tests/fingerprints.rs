//! The event fingerprints stored in `tests/fingerprints.json` (every
//! shipped study's quick reproduction, written by
//! `tests/test_fingerprints.py`) come out the same from this build: release
//! in `make test`, and debug too (`cargo test -p cnsim-core --test
//! fingerprints`). CNSIM_FINGERPRINT_MAX_EVENTS=N checks only the points
//! of at most N events.

mod common;
use common::*;

#[test]
fn stored_fingerprints_match_this_build() {
    let text =
        std::fs::read_to_string(repo_file("tests/fingerprints.json")).expect("stored fingerprints");
    let store: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    let limit = std::env::var("CNSIM_FINGERPRINT_MAX_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (key, entry) in &store {
        if entry["events"].as_u64().unwrap() > limit {
            continue;
        }
        let overrides: Vec<(String, String)> = entry["overrides"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => toml_literal(other),
                };
                (k.clone(), v)
            })
            .collect();
        let pairs: Vec<(&str, &str)> = overrides
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let sc = load_file(entry["scenario"].as_str().unwrap(), &pairs);
        let r = run(&sc, entry["seed"].as_u64());
        if r.summary.fingerprint != entry["fingerprint"].as_str().unwrap() {
            wrong.push(format!(
                "{key}: {} (stored {})",
                r.summary.fingerprint, entry["fingerprint"]
            ));
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} points checked");
    assert!(
        wrong.is_empty(),
        "fingerprints differ from tests/fingerprints.json:\n{}",
        wrong.join("\n")
    );
}

/// A JSON value as the TOML literal `--set` reads (strings inside tables
/// and arrays are quoted; JSON's string escapes are valid in TOML).
fn toml_literal(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{} = {}",
                        serde_json::to_string(k).unwrap(),
                        toml_literal(v)
                    )
                })
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(toml_literal).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

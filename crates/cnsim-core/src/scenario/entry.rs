//! The entries a scenario lists (`[[switches]]`, `[[hosts]]`, `[[links]]`,
//! `[[sources]]`), each with the path its errors are reported at, and the
//! limit on how many there may be.

use super::error::{FieldPath, Locator, ScenarioError};
use super::schema::*;
use toml::de::{DeTable, DeValue};

/// Most entries (of all kinds, after expansion and with those of
/// `[topology]`) a scenario may have: far
/// beyond any topology the engine is meant for, and it turns a typo such as
/// `edges = 1000000000` into an error instead of an exhausted memory.
pub(super) const MAX_ENTRIES: u64 = 1_000_000;

/// Refuses a file that writes out more than `MAX_ENTRIES` entries without
/// `repeat`, before they are deserialized: a file of a million
/// `[[hosts]]` is refused at once instead of after building each of them.
/// Expansion counts again, with copies and `[topology]`.
pub(super) fn check_written_entries(doc: &DeTable, loc: &Locator) -> Result<(), ScenarioError> {
    let mut total = 0u64;
    for kind in ["switches", "hosts", "links", "sources"] {
        let Some(DeValue::Array(entries)) = doc.get(kind).map(|v| v.get_ref()) else {
            continue;
        };
        for (i, e) in entries.iter().enumerate() {
            let plain = matches!(e.get_ref(), DeValue::Table(t) if !t.contains_key("repeat"));
            total += u64::from(plain);
            if total > MAX_ENTRIES {
                return Err(loc.error_at(
                    Some(e.span().start),
                    format!("{kind}[{i}]"),
                    format!("expected at most {MAX_ENTRIES} entries in the scenario, found more (this is entry {total})"),
                ));
            }
        }
    }
    Ok(())
}

/// An entry after expansion, with the path its errors are reported at.
pub(super) struct Entry<T> {
    pub path: FieldPath,
    pub raw: T,
}

/// The entries of a scenario after expansion: template order, and the
/// copies of one template in cross-product order.
pub(super) struct Entries {
    pub switches: Vec<Entry<RawSwitch>>,
    pub hosts: Vec<Entry<RawHost>>,
    pub links: Vec<Entry<RawLink>>,
    pub sources: Vec<Entry<RawSource>>,
}

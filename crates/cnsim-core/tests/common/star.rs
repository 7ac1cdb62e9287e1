//! H1 and H2 -- SW -- H3: two senders and one receiver on one switch, the
//! engine's tests' smallest incast, as scenario text. Plain text, with
//! nothing from cnsim, so that unit tests can include it too.

/// The scenario: `top` (top-level keys and `[defaults.*]` tables) first,
/// then the switch with the keys `switch`, the three hosts and their
/// links, then `rest` (sources and whole sections).
pub fn two_to_one(top: &str, switch: &str, rest: &str) -> String {
    format!(
        r#"{top}
[[switches]]
name = "SW"
{switch}
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[hosts]]
name = "H3"
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["H2", "SW"]
[[links]]
between = ["SW", "H3"]
{rest}"#
    )
}

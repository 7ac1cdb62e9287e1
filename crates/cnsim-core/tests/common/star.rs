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

/// Two line-rate sources, H1 and H2, into H3 for 10 ms: SW->H3 overloaded
/// twice over, its 150 KB buffer dropping half of the arrivals. Hosts act
/// on notifications only after 1 s, so a congestion point's messages
/// never relieve the overload. `sections` adds the scheme's section.
pub fn overload(sections: &str) -> String {
    let top = r#"
duration = "10ms"
[defaults.link]
rate = "10Gbps"
delay = "0.5us"
[defaults.host]
response_time = "1s""#;
    let rest = format!(
        r#"
[[sources]]
host = "H1"
to = "H3"
load = 1.0
[[sources]]
host = "H2"
to = "H3"
load = 1.0
{sections}"#
    );
    two_to_one(top, r#"buffer = "150KB""#, &rest)
}

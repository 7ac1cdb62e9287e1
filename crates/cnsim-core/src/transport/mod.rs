//! Transport protocols run by end stations on top of the simulated Ethernet:
//! pure state machines that the engine drives with segments, ACKs and timer
//! events (docs/model.md, "TCP NewReno").

pub mod tcp;

/// How a source's units reach the network (`transport` in a scenario's
/// `[[source]]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Frames go out as produced (only the adapter may hold them back).
    #[default]
    Udp,
    /// Units are appended to one TCP NewReno connection per destination.
    Tcp,
}

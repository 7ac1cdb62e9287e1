//! The thresholds that drive the control loops of each queue, copied from
//! the resolved scenario into the result so that tables and figures can
//! show them beside the occupancies they are compared with.
//!
//! These are constants of the configuration, read when the result is
//! assembled: nothing here runs while frames move. `None` (null in
//! `summary.json`, NaN in the tables) marks a threshold that does not
//! apply to that row. Sizes are bytes.

use crate::cm::bcn::PAGE_BYTES;
use crate::flowctl::pause::PauseMode;
use crate::net::ecn::EcnRule;
use crate::net::mmu::{SharedBufferSpec, Threshold};
use crate::scenario::spec::{NodeKind, Scenario, SwitchSpec};
use crate::units::Rate;
use serde::Serialize;

/// The thresholds of one output queue (a row of the `queues` table).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueThresholds {
    /// ECN marking, on the port's marking class queues: RED's Kmin and
    /// Kmax, the rule of the port's link rate. A step rule's K is given as
    /// both: RED with Kmin = Kmax = K marks exactly as the step does
    /// (every frame above K, none at or below).
    pub ecn_kmin_bytes: Option<u64>,
    pub ecn_kmax_bytes: Option<u64>,
    /// Global PAUSE: this output queue's occupancy at or above which its
    /// switch sends XOFF (out of its other ports), at or below which XON.
    pub pause_output_xoff_bytes: Option<u64>,
    pub pause_output_xon_bytes: Option<u64>,
    /// Per-input PAUSE: the thresholds on this port's input partition (the
    /// bytes that arrived from the peer and are still in the switch), at
    /// which XOFF / XON go back to the peer.
    pub pause_input_xoff_bytes: Option<u64>,
    pub pause_input_xon_bytes: Option<u64>,
    /// BCN (also E2CM's switch loop) or QCN: the congestion point's
    /// equilibrium queue length Qeq.
    pub qeq_bytes: Option<u64>,
}

impl QueueThresholds {
    /// The output queue of `node` on a link of `rate`.
    pub fn of(sc: &Scenario, node: usize, rate: Rate) -> QueueThresholds {
        let Some(s) = switch(sc, node) else {
            return QueueThresholds::default();
        };
        let (ecn_kmin_bytes, ecn_kmax_bytes) = match s.ecn.as_ref().map(|e| e.rule_at(rate)) {
            Some(EcnRule::Red { kmin, kmax, .. }) => (Some(kmin.0), Some(kmax.0)),
            Some(EcnRule::Step { k }) => (Some(k.0), Some(k.0)),
            None => (None, None),
        };
        let pause = |mode: PauseMode| {
            s.pause
                .filter(|p| p.mode == mode)
                .map(|p| (p.xoff, p.xon))
                .unzip()
        };
        let (pause_output_xoff_bytes, pause_output_xon_bytes) = pause(PauseMode::Global);
        let (pause_input_xoff_bytes, pause_input_xon_bytes) = pause(PauseMode::PerInput);
        QueueThresholds {
            ecn_kmin_bytes,
            ecn_kmax_bytes,
            pause_output_xoff_bytes,
            pause_output_xon_bytes,
            pause_input_xoff_bytes,
            pause_input_xon_bytes,
            qeq_bytes: s
                .congestion_point
                .then(|| congestion_point_qeq(sc))
                .flatten(),
        }
    }
}

/// Qeq of the scheme whose congestion points sit on switch queues, if the
/// scenario has one (the order in which the engine picks the scheme).
fn congestion_point_qeq(sc: &Scenario) -> Option<u64> {
    if let Some(b) = &sc.bcn {
        return Some(b.qeq_pages as u64 * PAGE_BYTES);
    }
    sc.qcn.as_ref().map(|q| q.qeq.0)
}

/// The thresholds of one (output queue, class) (a row of the `classes`
/// table).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ClassThresholds {
    /// Static PFC of a lossless class: the bytes of this class that
    /// arrived through this port (from the peer) and are still in the
    /// switch, at or above which XOFF goes back to the peer, at or below
    /// which XON. None on a shared-buffer switch, whose MMU decides
    /// (`BufferThresholds`).
    pub pfc_xoff_bytes: Option<u64>,
    pub pfc_xon_bytes: Option<u64>,
}

impl ClassThresholds {
    /// Class `class` of a port of `node`.
    pub fn of(sc: &Scenario, node: usize, class: u8) -> ClassThresholds {
        let (pfc_xoff_bytes, pfc_xon_bytes) = switch(sc, node)
            .and_then(|s| s.pfc)
            .filter(|p| p.classes & (1 << class) != 0)
            .and_then(|p| p.thresholds)
            .unzip();
        ClassThresholds {
            pfc_xoff_bytes,
            pfc_xon_bytes,
        }
    }
}

/// The thresholds of a shared-buffer switch's MMU (a row of
/// `summary.buffers`). A threshold is either static (`_bytes`) or dynamic
/// (`_alpha`: α times the free shared pool at the moment of the decision);
/// the other field is None.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct BufferThresholds {
    /// XOFF of a lossless ingress (port, class) on its shared-pool use
    /// (None without lossless classes).
    pub lossless_xoff_bytes: Option<u64>,
    pub lossless_xoff_alpha: Option<f64>,
    /// XON once that use is this far below the XOFF threshold (None
    /// without lossless classes).
    pub resume_offset_bytes: Option<u64>,
    /// A lossy frame beyond its reserve enters the pool only while its
    /// egress (port, class) stays within this.
    pub lossy_egress_bytes: Option<u64>,
    pub lossy_egress_alpha: Option<f64>,
}

impl BufferThresholds {
    /// `lossless`: the switch has lossless (PFC) classes.
    pub fn of(spec: &SharedBufferSpec, lossless: bool) -> BufferThresholds {
        let split = |t: Threshold| match t {
            Threshold::Static(b) => (Some(b.0), None),
            Threshold::Dynamic(a) => (None, Some(a.num as f64 / a.den as f64)),
        };
        let (lossless_xoff_bytes, lossless_xoff_alpha) = if lossless {
            split(spec.lossless_xoff)
        } else {
            (None, None)
        };
        let (lossy_egress_bytes, lossy_egress_alpha) = split(spec.lossy_egress);
        BufferThresholds {
            lossless_xoff_bytes,
            lossless_xoff_alpha,
            resume_offset_bytes: lossless.then_some(spec.resume_offset.0),
            lossy_egress_bytes,
            lossy_egress_alpha,
        }
    }
}

fn switch(sc: &Scenario, node: usize) -> Option<&SwitchSpec> {
    match &sc.nodes[node].kind {
        NodeKind::Switch(s) => Some(s),
        NodeKind::Host(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Format};

    /// H1 -- SW -- H2 at 10 Gb/s, with `switch` added to the switch's keys
    /// and `sections` at the end.
    fn line(switch: &str, sections: &str) -> Scenario {
        let text = format!(
            r#"
duration = "1ms"
[defaults.link]
rate = "10Gbps"
delay = "1us"
[[switches]]
name = "SW"
{switch}
[[hosts]]
name = "H1"
[[hosts]]
name = "H2"
[[links]]
between = ["H1", "SW"]
[[links]]
between = ["SW", "H2"]
[[sources]]
host = "H1"
to = "H2"
load = 0.5
{sections}
"#
        );
        load(&text, "test.toml", Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"))
    }

    fn node(sc: &Scenario, name: &str) -> usize {
        sc.nodes
            .iter()
            .position(|n| n.name == name)
            .expect("a node")
    }

    #[test]
    fn a_step_rule_gives_k_as_kmin_and_kmax_and_per_rate_rules_apply() {
        let sc = line(
            r#"ecn = { rule = "step", k = "30KB", rates = [{ rate = "40Gbps", k = "1MB" }] }"#,
            "",
        );
        let at = |gbps| QueueThresholds::of(&sc, node(&sc, "SW"), Rate::gbps(gbps));
        assert_eq!(
            (at(10).ecn_kmin_bytes, at(10).ecn_kmax_bytes),
            (Some(30_000), Some(30_000))
        );
        assert_eq!(at(40).ecn_kmin_bytes, Some(1_000_000));
        // A host's queue has no thresholds.
        assert_eq!(
            QueueThresholds::of(&sc, node(&sc, "H1"), Rate::gbps(10)),
            QueueThresholds::default()
        );
    }

    #[test]
    fn pause_thresholds_go_where_the_mode_compares_them() {
        let of = |mode: &str| {
            let sc = line(
                &format!(r#"pause = {{ mode = "{mode}", xoff = "100KB", xon = "80KB" }}"#),
                "",
            );
            QueueThresholds::of(&sc, node(&sc, "SW"), Rate::gbps(10))
        };
        let global = of("global");
        assert_eq!(
            (
                global.pause_output_xoff_bytes,
                global.pause_output_xon_bytes
            ),
            (Some(100_000), Some(80_000))
        );
        assert_eq!(global.pause_input_xoff_bytes, None);
        let per_input = of("per_input");
        assert_eq!(
            (
                per_input.pause_input_xoff_bytes,
                per_input.pause_input_xon_bytes
            ),
            (Some(100_000), Some(80_000))
        );
        assert_eq!(per_input.pause_output_xoff_bytes, None);
        assert_eq!(of("off"), QueueThresholds::default());
    }

    #[test]
    fn qeq_only_on_congestion_points_of_a_scheme() {
        let qcn = "[qcn]\nqeq = \"20KB\"";
        let at = |switch: &str, sections: &str| {
            let sc = line(switch, sections);
            QueueThresholds::of(&sc, node(&sc, "SW"), Rate::gbps(10)).qeq_bytes
        };
        assert_eq!(at("", qcn), Some(20_000));
        assert_eq!(at("congestion_point = false", qcn), None);
        assert_eq!(at("", ""), None);
    }

    #[test]
    fn static_pfc_on_lossless_classes_only() {
        let sc = line(
            r#"buffer_model = "per_input"
buffer = "150KB"
pfc = { classes = [3], xoff = "100KB", xon = "80KB" }"#,
            "[priorities]\nclasses = 4",
        );
        let class = |c| ClassThresholds::of(&sc, node(&sc, "SW"), c);
        assert_eq!(
            (class(3).pfc_xoff_bytes, class(3).pfc_xon_bytes),
            (Some(100_000), Some(80_000))
        );
        assert_eq!(class(0), ClassThresholds::default());
        assert_eq!(
            ClassThresholds::of(&sc, node(&sc, "H1"), 3),
            ClassThresholds::default()
        );
    }
}

//! The output sections: `[metrics]` (fairness and stability windows) and
//! `[plot]` (what the figures show).

use super::build::Builder;
use super::error::{unknown_name, FieldPath, ScenarioError};
use super::schema::*;
use super::spec::*;

impl Builder<'_> {
    pub(super) fn metrics(
        &self,
        m: &RawMetrics,
        sc: &Scenario,
    ) -> Result<MetricsSpec, ScenarioError> {
        let mp = FieldPath::root().key("metrics");
        let mut out = MetricsSpec::default();
        if let Some(f) = &m.fairness {
            let fp = mp.key("fairness");
            let names: Vec<String> = sc.flows().into_iter().map(|f| f.name).collect();
            let flows = match &f.flows {
                None => (0..names.len()).collect(),
                Some(list) => list
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        names.iter().position(|k| k == n).ok_or_else(|| {
                            self.err(
                                &fp.key("flows").index(i),
                                unknown_name("flow", n, names.iter()),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            };
            if flows.is_empty() {
                return Err(self.err(&fp.key("flows"), "expected at least one flow, found none"));
            }
            let start = self.time(&f.start, &fp.key("start"))?;
            let end = self.time(&f.end, &fp.key("end"))?;
            for (t, key) in [(start, "start"), (end, "end")] {
                if t.0 % sc.bin.0 != 0 {
                    return Err(self.err(
                        &fp.key(key),
                        format!(
                            "expected a multiple of the bin width ({}), found {t}",
                            sc.bin
                        ),
                    ));
                }
            }
            if end <= start || end > sc.duration {
                return Err(self.err(
                    &fp.key("end"),
                    format!(
                        "expected a window end after start ({start}) and at most the duration ({}), found {end}",
                        sc.duration
                    ),
                ));
            }
            let target = self.rate(&f.target, &fp.key("target"))?;
            out.fairness = Some(FairnessSpec {
                flows,
                start,
                end,
                target,
            });
        }
        if let Some(st) = &m.stability {
            let sp = mp.key("stability");
            let queues = sc.queue_names();
            let queue = queues.iter().position(|q| *q == st.queue).ok_or_else(|| {
                self.err(
                    &sp.key("queue"),
                    unknown_name("queue (\"NODE->PEER\")", &st.queue, queues.iter()),
                )
            })?;
            let threshold = self.size(&st.threshold, &sp.key("threshold"))?;
            let onset = match &st.onset {
                Some(s) => self.size(s, &sp.key("onset"))?,
                None => 2 * threshold,
            };
            if onset < threshold {
                return Err(self.err(
                    &sp.key("onset"),
                    format!("expected an onset level at least the threshold ({threshold} B), found {onset} B"),
                ));
            }
            out.stability = Some(StabilitySpec {
                queue,
                threshold,
                onset,
            });
        }
        if m.ingress_occupancy == Some(true) {
            // Switches count bytes per ingress (port, class) only with a
            // shared buffer or PFC.
            let counts = sc.nodes.iter().any(
                |n| matches!(&n.kind, NodeKind::Switch(s) if s.shared.is_some() || s.pfc.is_some()),
            );
            if !counts {
                return Err(self.err(
                    &mp.key("ingress_occupancy"),
                    "expected a switch with a shared buffer (buffer_model = \"shared\") or PFC, \
                     whose ingress queues are counted; found none",
                ));
            }
            out.ingress_occupancy = true;
        }
        Ok(out)
    }

    pub(super) fn plot(&self, plot: &RawPlot, sc: &Scenario) -> Result<PlotSpec, ScenarioError> {
        let pp = FieldPath::root().key("plot");
        let queues = sc.queue_names();
        let flows: Vec<String> = sc.flows().into_iter().map(|f| f.name).collect();
        let check = |list: &[String],
                     known: &[String],
                     key: &str,
                     what: &str|
         -> Result<(), ScenarioError> {
            for (i, n) in list.iter().enumerate() {
                if !known.contains(n) {
                    return Err(
                        self.err(&pp.key(key).index(i), unknown_name(what, n, known.iter()))
                    );
                }
            }
            Ok(())
        };
        check(&plot.links, &queues, "links", "link (\"NODE->PEER\")")?;
        check(&plot.queues, &queues, "queues", "queue (\"NODE->PEER\")")?;
        check(&plot.flows, &flows, "flows", "flow")?;
        Ok(PlotSpec {
            links: plot.links.clone(),
            flows: plot.flows.clone(),
            queues: plot.queues.clone(),
        })
    }
}

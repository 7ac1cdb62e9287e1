//! The end of a run: what is still in flight is counted, the whole-run
//! invariants are checked, and the result is assembled.

use super::switch::{SwitchState, NO_INGRESS_ROW};
use super::Role;
use super::{RunError, Simulator};
use crate::metrics::series::gather_rows;
use crate::net::topology::{BufferModel, NodeKind};
use crate::results::{
    BufferSummary, BufferThresholds, ClassSummary, ClassThresholds, IngressRow, PfcTotals, RunCost,
    RunResult, Series,
};
use crate::scenario::spec::Scenario;
use crate::units::Time;

impl Simulator {
    /// What this simulator still holds at the end goes into its flows'
    /// counters: frames buffered or on their way, the transport's and the
    /// scheme's counts. (A split run settles each partition, then adds
    /// them up.)
    pub(super) fn settle(&mut self) {
        self.catch_up_writers();
        // Frames still buffered or on their way at the end.
        let queued = self.ports.iter().flat_map(|p| p.queued());
        let limited = self.limiters.iter().flat_map(|rl| rl.queue.iter());
        let on_links = self
            .on_links
            .iter()
            .map(|(_, f)| f)
            .chain(self.lane_frames.iter());
        let travelling = on_links.chain(self.parked.iter().map(|(_, f)| f));
        for f in queued.chain(limited).chain(travelling) {
            if f.is_data()
                && !self
                    .flow_conn
                    .get(f.flow as usize)
                    .copied()
                    .unwrap_or(false)
            {
                self.flows[f.flow as usize].volume.in_flight(f.size as u64);
            }
        }
        self.finish_conns();
        for (f, c) in self.flows.iter_mut().enumerate() {
            (c.probes_sent, c.probe_replies) = self.scheme.probe_counts(f as u32);
            c.cnps_sent = self.scheme.cnps_sent(f as u32);
        }
    }

    /// Check the whole-run invariants and assemble the result.
    pub(super) fn finish(mut self, sc: &Scenario, cost: RunCost) -> Result<RunResult, RunError> {
        let end = self.end;
        for f in 0..self.flow_conn.len() {
            if self.flow_conn[f] {
                let v = &mut self.flows[f].volume;
                v.in_flight_bytes = v.offered_bytes - v.delivered_bytes;
            }
        }
        self.sort_logs();
        self.check_conservation();
        if let Some(v) = &self.violation {
            return Err(RunError::Invariant(v.describe(sc, self.seed)));
        }
        if self.watchdog_spec.is_some() {
            // Pauses still running at the end are checked once more, and
            // every cycle search still due runs now.
            for port in 0..self.ports.len() as u32 {
                self.watch(port);
            }
            self.search_cycles(Time::MAX);
        }
        let occ_mean = self.queue_occ.finish(end);
        // A queue's bytes sent and largest occupancy are its series' sum
        // and maximum: a frame's hop updates the series alone.
        for (i, p) in self.ports.iter().enumerate() {
            let q = &mut self.queues[i];
            q.pause_frames_sent = p.pause.sender.frames_sent;
            q.xoff_sent = p.pause.sender.xoff_sent;
            q.paused_time = p.pause.receiver.paused_time(end);
            q.tx_bytes = self.queue_tx.row(i).sum();
            q.max_occupancy = self.queue_occ.max_row(i).iter().copied().max().unwrap_or(0);
        }
        // A workload's row sums its flows' bytes, but a level (a rate, a
        // window) of many flows in one row means nothing: those are NaN.
        let from = self.workload.first as usize * self.flow_tx.n_bins;
        let levels = |mut v: Vec<f64>| {
            v.iter_mut().skip(from).for_each(|x| *x = f64::NAN);
            v
        };
        // The limiters' rows in the order of their flows, however the run
        // made them (in a split run, each partition makes its own).
        let n_bins = self.flow_tx.n_bins;
        let (rl_flows, rl_order) = self.rl_rows.by_key();
        let rl_rows = |m: &[f64]| gather_rows(m, &rl_order, n_bins);
        let rl_rate_mean = rl_rows(&self.rl_rate.finish(end));
        let rl_occ_mean = rl_rows(&self.rl_occ.finish(end));
        let rl_occ_max = gather_rows(&self.rl_occ.max, &rl_order, n_bins);
        let rl_target_mean = self
            .rl_target
            .as_mut()
            .map_or_else(Vec::new, |t| rl_rows(&t.finish(end)));
        let alpha_mean = levels(
            self.flow_alpha
                .finish(end)
                .into_iter()
                .map(|a| a / super::cm::ALPHA_UNIT)
                .collect(),
        );
        let tcp_cwnd_mean = levels(self.tcp_cwnd.finish(end));
        let workload_records = self.workload_records();
        let flows_finished = self.workload.all_finished;
        let series = Series {
            bin: sc.bin,
            n_bins: self.flow_tx.n_bins,
            flow_tx_bytes: self.flow_tx.take_rows(),
            flow_rx_bytes: self.flow_rx.take_rows(),
            queue_tx_bytes: self.queue_tx.take_rows(),
            queue_drops: self.queue_drops.take_rows(),
            queue_xoff: self.queue_xoff.take_rows(),
            queue_occ_mean: occ_mean,
            queue_occ_max: std::mem::take(&mut self.queue_occ.max),
            flow_rl_flows: rl_flows,
            flow_rl_rate_mean: rl_rate_mean,
            flow_rl_occ_mean: rl_occ_mean,
            flow_rl_occ_max: rl_occ_max,
            flow_rl_target_mean: rl_target_mean,
            flow_alpha_mean: alpha_mean,
            flow_cwnd_mean: tcp_cwnd_mean,
            flow_retransmissions: self.conn_retx.take_rows(),
            flow_timeouts: self.conn_timeouts.take_rows(),
            buffer_shared_mean: self.buffer_shared.finish(end),
            buffer_shared_max: std::mem::take(&mut self.buffer_shared.max),
            buffer_headroom_mean: self.buffer_headroom.finish(end),
            buffer_headroom_max: std::mem::take(&mut self.buffer_headroom.max),
            ingress_occ_mean: self.ingress_occ.finish(end),
            ingress_occ_max: std::mem::take(&mut self.ingress_occ.max),
        };
        let watchdog = self
            .watchdog_spec
            .take()
            .map(|spec| (spec, std::mem::take(&mut self.watchdog), self.any_pfc));
        let classes = self.class_summaries(sc);
        let buffers = self.buffer_summaries(sc);
        let ingress = self.ingress_rows(sc);
        let pfc = self.any_pfc.then(|| {
            let frames_sent = self
                .ports
                .iter()
                .filter_map(|p| p.classes.as_deref())
                .map(|pc| pc.pfc_sender.frames_sent)
                .sum();
            let events = std::mem::take(&mut self.pfc_events);
            let totals = PfcTotals {
                frames_sent,
                events: events.len() as u64,
                events_omitted: self.pfc_events_omitted,
            };
            (totals, events)
        });
        let stop = self
            .stop
            .take()
            .map(|(reached, reason)| (reached, self.end, reason));
        let stability = self.stability.take();
        let window = self.window.filter(|w| w.0 > 0);
        let flows = std::mem::take(&mut self.flows);
        let queues = std::mem::take(&mut self.queues);
        let (seed, n_events, frame_hops) = (self.seed, self.n_events, self.frame_hops);
        let fingerprint = self.fingerprint;
        // The engine's state goes before the result tables are built, so a
        // run's peak memory is the larger of the two, not their sum.
        drop(self);
        let mut result = RunResult::assemble(
            sc,
            seed,
            cost,
            n_events,
            frame_hops,
            fingerprint,
            watchdog,
            stop,
            flows,
            queues,
            series,
            stability,
            classes,
            pfc,
            buffers,
            workload_records,
            flows_finished,
        );
        result.summary.ingress = ingress;
        result.summary.window_s = window.map(Time::as_secs_f64);
        Ok(result)
    }

    /// The rows of the ingress series, in row order.
    fn ingress_rows(&self, sc: &Scenario) -> Vec<IngressRow> {
        let mut rows = Vec::new();
        for (p, &base) in self.ingress_row.iter().enumerate() {
            if base == NO_INGRESS_ROW {
                continue;
            }
            let port = &self.ports[p];
            let peer = self.ports[port.peer as usize].node as usize;
            for class in 0..self.n_classes {
                debug_assert_eq!(rows.len(), (base + class as u32) as usize);
                rows.push(IngressRow {
                    switch: sc.nodes[port.node as usize].name.clone(),
                    from: sc.nodes[peer].name.clone(),
                    class,
                });
            }
        }
        rows
    }

    /// A row per shared-buffer switch.
    fn buffer_summaries(&self, sc: &Scenario) -> Vec<BufferSummary> {
        let mut rows = Vec::new();
        for (n, role) in self.roles.iter().enumerate() {
            let Role::Switch(SwitchState {
                shared: Some(b), ..
            }) = role
            else {
                continue;
            };
            let NodeKind::Switch(spec) = &sc.nodes[n].kind else {
                continue;
            };
            let total = match spec.buffer {
                BufferModel::Shared { bytes } => bytes,
                _ => unreachable!("a shared buffer"),
            };
            let lossless = spec.pfc.map_or(0, |p| p.classes).count_ones() as u64;
            let cfg = spec.shared.as_ref().expect("a shared buffer");
            rows.push(BufferSummary {
                switch: sc.nodes[n].name.clone(),
                buffer_bytes: total,
                shared_pool_bytes: b.mmu.shared_pool().0,
                headroom_bytes: cfg.headroom.iter().map(|h| h.0).sum::<u64>() * lossless,
                max_shared_used_bytes: b.max_shared,
                max_headroom_used_bytes: b.max_headroom,
                headroom_overflows: b.headroom_overflows,
                thresholds: BufferThresholds::of(cfg, lossless > 0),
            });
        }
        rows
    }

    /// A row per (queue, class) of the classes in use, if the ports have
    /// classes.
    fn class_summaries(&self, sc: &Scenario) -> Vec<ClassSummary> {
        let names = sc.queue_names();
        let end = self.end;
        let mut rows = Vec::new();
        for (i, p) in self.ports.iter().enumerate() {
            let Some(pc) = p.classes.as_deref() else {
                continue;
            };
            for class in 0..self.n_classes {
                let st = p.class_stats(class);
                let paused = pc.pfc_receiver().paused_time(class, end);
                rows.push(ClassSummary {
                    queue: names[i].clone(),
                    class,
                    tx_bytes: st.tx_bytes,
                    drops_frames: st.drops_frames,
                    drops_bytes: st.drops_bytes,
                    max_occupancy_bytes: st.max_occupancy,
                    paused_time_s: paused.as_secs_f64(),
                    paused_fraction: paused.as_secs_f64() / end.as_secs_f64(),
                    pfc_xoff_sent: pc.pfc_sender.xoff_sent[class as usize],
                    pfc_xon_sent: pc.pfc_sender.xon_sent[class as usize],
                    ecn_marked: st.ecn_marked,
                    thresholds: ClassThresholds::of(sc, p.node as usize, class),
                });
            }
        }
        rows
    }
}

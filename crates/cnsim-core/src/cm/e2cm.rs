//! E2CM: ECM's switch loop (BCN feedback, `cm::bcn`) plus a per-flow
//! end-to-end loop driven by probes (docs/model.md, "ECM and E2CM").
//!
//! Once a flow's rate limiter is installed, its source sends a probe into
//! the flow about every 75 KB (each released frame is followed by one with
//! the configured probability) and at least every `max_interval`. The
//! destination reflects it. From the reflected probe the source estimates
//! the flow's backlog in the network by Little's law, q = λ·(L − L0), with
//! L0 the unloaded latency learnt from a probe sent with the flow's first
//! frame (`Baseline`), and feeds it to the same BCN feedback law the
//! switches use, with the flow loop's own Qeq, gains and BCN-MAX threshold. The law itself is a
//! reconstruction (no public description was found); see docs/decisions.md.

use super::bcn::{self, BcnParams};
use super::{CmTimer, Message, Reaction, Rp, TimerRequest};
use crate::engine::rng::{unit_open0, Stream};
use crate::net::frame::{Frame, FrameKind};
use crate::net::rate_limiter::RateLimiter;
use crate::units::Time;
use serde::Serialize;

/// Where the flow's throughput and forward latency are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Measure {
    /// The probe carries the bytes the source sent since the previous
    /// probe; the destination only stamps its arrival time. Latency is the
    /// round trip minus the smallest round trip seen (no clock sync needed).
    Source,
    /// The destination counts the bytes it received and the one-way delay
    /// (synchronized clocks) and returns both.
    Destination,
}

/// Where a flow's baseline latency L0 (the unloaded round trip, or in the
/// destination form the unloaded forward delay) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Baseline {
    /// A probe leaves with the flow's first frame, before the flow has
    /// built any queue, as a source measures a path at connection set-up;
    /// its latency seeds L0, which later probes can only lower.
    FlowStart,
    /// Only probes sent while a limiter is installed count: L0 is the
    /// smallest latency seen since the flow was first throttled, which
    /// includes whatever queue stood then (cnsim 0.1).
    WhileProbing,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct E2cmParams {
    /// The per-flow loop's law: Qeq, W, gains, minimum rate, decrease cap, BCN-MAX.
    pub control: BcnParams,
    pub measure: Measure,
    pub baseline: Baseline,
    /// Probability that a released data frame is followed by a probe.
    pub probe_probability: f64,
    /// A probing flow sends a probe at least this often.
    pub probe_max_interval: Time,
    pub probe_bytes: u32,
    /// Reflected probes travel in the strict-priority expedited class.
    pub expedite: bool,
}

/// What one probe carries, kept out of the frame (which holds its index)
/// so frames stay small.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProbeRecord {
    pub flow: u32,
    /// The source's send time.
    pub t_src: Time,
    /// Data bytes the flow released since its previous probe.
    pub bytes: u64,
    /// The destination's arrival stamp.
    pub t_dst: Time,
    /// Destination-measured: received rate (bytes/s), if two probes have arrived.
    pub rx_rate: Option<f64>,
    /// Destination-measured: one-way delay above the smallest seen.
    pub fwd_excess: Time,
}

/// A fixed pool of probe records, reused: no allocation once warm.
#[derive(Default)]
pub struct ProbePool {
    records: Vec<ProbeRecord>,
    free: Vec<u32>,
}

impl ProbePool {
    pub fn take(&mut self, r: ProbeRecord) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.records[i as usize] = r;
                i
            }
            None => {
                self.records.push(r);
                (self.records.len() - 1) as u32
            }
        }
    }
    pub fn get(&self, i: u32) -> &ProbeRecord {
        &self.records[i as usize]
    }
    pub fn get_mut(&mut self, i: u32) -> &mut ProbeRecord {
        &mut self.records[i as usize]
    }
    pub fn give_back(&mut self, i: u32) {
        self.free.push(i);
    }
    /// Record `i` is `r`: a copy of one this pool's flow took elsewhere.
    pub fn put(&mut self, i: u32, r: ProbeRecord) {
        let i = i as usize;
        if i >= self.records.len() {
            self.records.resize(i + 1, ProbeRecord::default());
        }
        self.records[i] = r;
    }
    /// Records in use (probes in flight).
    pub fn in_use(&self) -> usize {
        self.records.len() - self.free.len()
    }
}

/// Source half of a flow's probe loop.
#[derive(Debug, Clone, Default)]
pub struct ProbeSource {
    pub probing: bool,
    /// Data bytes released since the last probe.
    pub bytes_since: u64,
    /// When the last probe left (or probing started).
    pub last_probe: Time,
    /// Destination stamp of the last reflected probe.
    pub last_t_dst: Option<Time>,
    /// L0: the smallest round trip seen.
    pub rtt_min: Option<Time>,
    /// Backlog estimate at the previous probe, pages.
    pub q_prev: i64,
    /// Invalidates pending timers when probing stops.
    pub generation: u32,
    pub probes_sent: u64,
    /// Replies used by the loop (while probing).
    pub replies: u64,
    /// Reflected probes back at the source, probing or not.
    pub returned: u64,
}

/// Destination half (destination-based measurement only).
#[derive(Debug, Clone, Default)]
pub struct ProbeSink {
    /// Data bytes of the flow received since the last probe.
    pub rx_bytes: u64,
    pub last_arrival: Option<Time>,
    pub fwd_min: Option<Time>,
}

/// Throughput, bytes/s, from `bytes` between two destination stamps.
pub fn throughput(bytes: u64, t_prev: Time, t_now: Time) -> Option<f64> {
    (t_now > t_prev).then(|| bytes as f64 / (t_now - t_prev).as_secs_f64())
}

/// Latency above the running minimum: updates `min` with `l` and returns `l − min`.
pub fn excess_latency(min: &mut Option<Time>, l: Time) -> Time {
    let m = min.map_or(l, |m| m.min(l));
    *min = Some(m);
    l - m
}

/// Little's law: bytes queued in the network for a flow delivering `rate`
/// bytes/s whose frames wait `excess` beyond the unloaded latency.
pub fn backlog(rate: f64, excess: Time) -> u64 {
    (rate * excess.as_secs_f64()).round() as u64
}

impl ProbeSink {
    /// A probe sent at `t_src` arrives at `now`: the destination's
    /// measurements for its record.
    pub fn on_probe(&mut self, now: Time, t_src: Time) -> (Option<f64>, Time) {
        let rate = self
            .last_arrival
            .and_then(|prev| throughput(self.rx_bytes, prev, now));
        self.rx_bytes = 0;
        self.last_arrival = Some(now);
        (rate, excess_latency(&mut self.fwd_min, now - t_src))
    }
}

impl ProbeSource {
    /// A reflected probe is back at `now`: the flow's backlog estimate, if
    /// the probe and its predecessors allow one.
    pub fn on_reply(&mut self, measure: Measure, now: Time, r: &ProbeRecord) -> Option<u64> {
        self.replies += 1;
        match measure {
            Measure::Source => {
                let rate = self
                    .last_t_dst
                    .and_then(|prev| throughput(r.bytes, prev, r.t_dst));
                self.last_t_dst = Some(r.t_dst);
                let excess = excess_latency(&mut self.rtt_min, now - r.t_src);
                rate.map(|rate| backlog(rate, excess))
            }
            Measure::Destination => r.rx_rate.map(|rate| backlog(rate, r.fwd_excess)),
        }
    }

    /// The per-flow feedback for a backlog estimate of `q` bytes (the BCN
    /// law with the flow loop's parameters); zero means no change.
    pub fn feedback(&mut self, p: &BcnParams, q: u64) -> i32 {
        let fb = bcn::feedback_value(p, q, self.q_prev);
        self.q_prev = bcn::pages(q);
        fb
    }
}

/// E2CM's probe loop in a running network: per flow its source half, its
/// destination half (destination-based measurement only, else empty), the
/// stream deciding which released frames a probe follows, and the records
/// of its probes in flight. A flow's records are its own: the numbers its
/// source gives them depend on its probes alone, so that a record can
/// follow its probe into another partition of a split run
/// (`probe_record`, `put_probe_record`) under the same number.
pub struct E2cm {
    pub params: E2cmParams,
    src: Vec<ProbeSource>,
    sink: Vec<ProbeSink>,
    probes: Vec<ProbePool>,
    rng: Vec<Stream>,
}

impl E2cm {
    /// One probe loop per flow, each with its stream.
    pub fn new(params: E2cmParams, rng: Vec<Stream>) -> E2cm {
        let n = rng.len();
        E2cm {
            params,
            src: vec![ProbeSource::default(); n],
            sink: match params.measure {
                Measure::Destination => vec![ProbeSink::default(); n],
                Measure::Source => Vec::new(),
            },
            probes: (0..n).map(|_| ProbePool::default()).collect(),
            rng,
        }
    }

    /// A rate limiter was just installed: the flow starts probing its path.
    pub(super) fn start_probing(&mut self, flow: u32, now: Time) -> TimerRequest {
        let s = &mut self.src[flow as usize];
        s.probing = true;
        s.bytes_since = 0;
        s.last_probe = now;
        s.last_t_dst = None;
        s.q_prev = 0;
        s.generation = s.generation.wrapping_add(1);
        TimerRequest {
            timer: CmTimer::Probe,
            at: now + self.params.probe_max_interval,
            generation: s.generation,
        }
    }

    /// The limiter was removed: probing stops.
    pub(super) fn stop_probing(&mut self, flow: u32, rl: &mut RateLimiter) {
        let s = &mut self.src[flow as usize];
        s.probing = false;
        s.generation = s.generation.wrapping_add(1);
        rl.probe_due = false;
    }

    /// The flow's limiter released a data frame: a probe follows it with
    /// the configured probability.
    #[inline]
    pub(super) fn released(&mut self, bytes: u16, rp: Rp) {
        let f = rp.row as usize;
        if self.src[f].probing {
            self.src[f].bytes_since += bytes as u64;
            if unit_open0(&mut self.rng[f]) <= self.params.probe_probability {
                rp.limiter.probe_due = true;
            }
        }
    }

    /// The probe sent now behind the flow's frames.
    pub(super) fn probe(&mut self, flow: u32, now: Time) -> Message {
        let s = &mut self.src[flow as usize];
        let record = self.probes[flow as usize].take(ProbeRecord {
            flow,
            t_src: now,
            bytes: s.bytes_since,
            ..Default::default()
        });
        s.bytes_since = 0;
        s.last_probe = now;
        s.probes_sent += 1;
        Message {
            kind: FrameKind::Probe,
            bytes: self.params.probe_bytes as u16,
            cpid: record,
            aux: 0,
            qfb: 0,
        }
    }

    /// A probing flow checks whether its longest probe interval has passed.
    pub(super) fn timer(&mut self, generation: u32, rp: Rp) -> Reaction {
        let s = &self.src[rp.row as usize];
        if !s.probing || s.generation != generation {
            return Reaction::default();
        }
        let interval = self.params.probe_max_interval;
        let due = s.last_probe + interval;
        let wake = rp.now >= due;
        if wake {
            rp.limiter.probe_due = true;
        }
        let at = if wake { rp.now + interval } else { due };
        Reaction {
            wake,
            timers: [
                Some(TimerRequest {
                    timer: CmTimer::Probe,
                    at,
                    generation,
                }),
                None,
            ],
            ..Reaction::default()
        }
    }

    /// The destination stamps the probe (and measures, in destination
    /// mode) and returns it to the source: the reply and whether it is
    /// expedited.
    pub(super) fn reflect(&mut self, probe: &Frame, now: Time) -> (Message, bool) {
        let rec = self.probes[probe.flow as usize].get_mut(probe.cpid);
        rec.t_dst = now;
        if let Some(sink) = self.sink.get_mut(probe.flow as usize) {
            let (rate, excess) = sink.on_probe(now, rec.t_src);
            rec.rx_rate = rate;
            rec.fwd_excess = excess;
        }
        let reply = Message {
            kind: FrameKind::ProbeReply,
            bytes: self.params.probe_bytes as u16,
            cpid: probe.cpid,
            aux: 0,
            qfb: 0,
        };
        (reply, self.params.expedite)
    }

    /// A reflected probe is back: the flow's own loop adjusts its limiter.
    pub(super) fn react(&mut self, reply: &Frame, rp: Rp) -> Reaction {
        let pool = &mut self.probes[reply.flow as usize];
        let record = *pool.get(reply.cpid);
        pool.give_back(reply.cpid);
        let s = &mut self.src[reply.flow as usize];
        s.returned += 1;
        if !s.probing {
            // The flow-start probe, or the limiter was released while this
            // probe was out: only the baseline learns from it (in the
            // destination form the destination already has).
            if self.params.baseline == Baseline::FlowStart && self.params.measure == Measure::Source
            {
                excess_latency(&mut s.rtt_min, rp.now - record.t_src);
            }
            return Reaction::default();
        }
        let Some(q) = s.on_reply(self.params.measure, rp.now, &record) else {
            return Reaction::default();
        };
        let fb = s.feedback(&self.params.control, q);
        let rl = rp.limiter;
        if fb == 0 || !rl.active {
            return Reaction::default();
        }
        rl.rate = bcn::react(&self.params.control, rl.rate, fb, rp.line);
        Reaction::rate_changed()
    }

    /// A probe leaves with each flow's first frame.
    pub(super) fn probes_at_flow_start(&self) -> bool {
        self.params.baseline == Baseline::FlowStart
    }

    /// The flow's baseline latency L0 as its loop knows it: the smallest
    /// round trip (source form) or forward delay (destination form) seen.
    pub fn baseline_latency(&self, flow: u32) -> Option<Time> {
        match self.params.measure {
            Measure::Source => self.src[flow as usize].rtt_min,
            Measure::Destination => self.sink[flow as usize].fwd_min,
        }
    }

    /// Destination mode measures the flow's data at its destination.
    pub(super) fn watches_destinations(&self) -> bool {
        !self.sink.is_empty()
    }

    #[inline]
    pub(super) fn delivered(&mut self, flow: u32, bytes: u16) {
        if let Some(sink) = self.sink.get_mut(flow as usize) {
            sink.rx_bytes += bytes as u64;
        }
    }

    /// A probe lost in the network frees its record.
    pub(super) fn dropped(&mut self, frame: &Frame) {
        if frame.kind == FrameKind::Probe {
            self.probes[frame.flow as usize].give_back(frame.cpid);
        }
    }

    /// The record of `frame`, a probe or a reflected probe.
    pub(super) fn probe_record(&self, frame: &Frame) -> ProbeRecord {
        *self.probes[frame.flow as usize].get(frame.cpid)
    }

    /// Record `index` of `flow`'s probes as another partition of a split
    /// run kept it, where the probe or its reflection comes from. (A probe
    /// dropped in a partition other than its source's leaves its record
    /// taken at the source: the source's next probes take other numbers,
    /// which no result depends on.)
    pub(super) fn put_probe_record(&mut self, flow: u32, index: u32, record: ProbeRecord) {
        self.probes[flow as usize].put(index, record);
    }

    /// Probes sent and reflected probes back, of `flow`.
    pub fn counts(&self, flow: u32) -> (u64, u64) {
        let s = &self.src[flow as usize];
        (s.probes_sent, s.returned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, Rate};

    /// Study D's per-flow controller: Qeq 15 KB, W 2, Gd 2.5/Fbmax capped at
    /// 0.5, Gi 0.025·Gi0 (a maximal positive feedback adds 250 Mb/s), BCN-MAX 56 KB.
    fn flow_loop() -> BcnParams {
        let qeq_pages = 15_000 / 64; // 234
        let fb_max = 5.0 * qeq_pages as f64; // 1170
        BcnParams {
            qeq_pages,
            w: 2.0,
            gi: 250.0 / fb_max,
            gd: 2.5 / fb_max,
            rate_unit: Rate::mbps(1),
            sampling: bcn::Sampling::Probability(0.02),
            min_rate: Rate::mbps(1),
            max_decrease: 0.5,
            initial_rate: None,
            rl_queue: Bytes(u64::MAX),
            message_bytes: 64,
            expedite: false,
            bcn_max: Some(Bytes(56_000)),
            stop: None,
            drift: None,
        }
    }

    #[test]
    fn throughput_divides_the_probe_byte_count_by_two_destination_stamps() {
        // 75,000 B between stamps 60 us apart: 1.25e9 B/s = 10 Gb/s.
        let r = throughput(75_000, Time::from_us(40), Time::from_us(100)).unwrap();
        assert!((r - 1.25e9).abs() < 1e-3, "{r}");
        assert_eq!(
            throughput(75_000, Time::from_us(100), Time::from_us(100)),
            None
        );
    }

    #[test]
    fn source_based_rate_and_latency_use_destination_stamps_and_the_smallest_round_trip() {
        let mut s = ProbeSource::default();
        let rec = |t_src: u64, bytes: u64, t_dst: u64| ProbeRecord {
            t_src: Time::from_us(t_src),
            bytes,
            t_dst: Time::from_us(t_dst),
            ..Default::default()
        };
        // The first reply gives a stamp and a round trip (20 us) but no rate yet.
        assert_eq!(
            s.on_reply(Measure::Source, Time::from_us(20), &rec(0, 0, 10)),
            None
        );
        assert_eq!(s.rtt_min, Some(Time::from_us(20)));
        // Second: 7,500 B over destination stamps 10 -> 70 us = 125 MB/s (1 Gb/s);
        // round trip 100 - 40 = 60 us, 40 us above L0: backlog 125e6 × 40e-6 = 5,000 B.
        assert_eq!(
            s.on_reply(Measure::Source, Time::from_us(100), &rec(40, 7_500, 70)),
            Some(5_000)
        );
        // A shorter round trip becomes the new L0: excess 0, backlog 0.
        assert_eq!(
            s.on_reply(Measure::Source, Time::from_us(115), &rec(100, 1_500, 82)),
            Some(0)
        );
        assert_eq!(s.rtt_min, Some(Time::from_us(15)));
        assert_eq!(s.replies, 3);
    }

    #[test]
    fn destination_based_measurements_count_received_bytes_between_probe_arrivals() {
        let mut d = ProbeSink::default();
        // First probe: sent at 0, arrives at 10 us: forward minimum 10 us.
        assert_eq!(
            d.on_probe(Time::from_us(10), Time::ZERO),
            (None, Time::ZERO)
        );
        d.rx_bytes = 12_500;
        // Second: 12,500 B over 100 us = 125 MB/s; one-way 110 - 70 = 40 us, 30 over the minimum.
        let (rate, excess) = d.on_probe(Time::from_us(110), Time::from_us(70));
        assert!((rate.unwrap() - 1.25e8).abs() < 1e-6);
        assert_eq!(excess, Time::from_us(30));
        assert_eq!(d.rx_bytes, 0);
        // The source turns them into a backlog: 125e6 × 30e-6 = 3,750 B.
        let mut s = ProbeSource::default();
        let r = ProbeRecord {
            rx_rate: rate,
            fwd_excess: excess,
            ..Default::default()
        };
        assert_eq!(
            s.on_reply(Measure::Destination, Time::ZERO, &r),
            Some(3_750)
        );
    }

    #[test]
    fn the_flow_loop_applies_the_bcn_law_with_its_own_parameters() {
        let p = flow_loop();
        let mut s = ProbeSource::default();
        // 30,000 B = 468 pages from 0: Fb = (234 - 468) - 2 × 468 = -1170 (saturated).
        assert_eq!(s.feedback(&p, 30_000), -1170);
        // Decrease capped at 0.5 (Gd × 1170 = 2.5 uncapped).
        assert_eq!(bcn::react(&p, 1e9, -1170, 10e9), 0.5e9);
        // Steady at 10,000 B = 156 pages after 468: Fb = 78 + 624 = 702 -> +150 Mb/s.
        assert_eq!(s.feedback(&p, 10_000), 702);
        let r = bcn::react(&p, 0.5e9, 702, 10e9);
        assert!((r - 0.65e9).abs() < 1.0, "{r}");
        // At or above the 56 KB BCN-MAX threshold: maximal negative whatever the change.
        assert_eq!(s.feedback(&p, 56_000), -1170);
        assert_eq!(s.feedback(&p, 56_000), -1170);
    }

    #[test]
    fn the_pool_reuses_returned_records() {
        let mut pool = ProbePool::default();
        let a = pool.take(ProbeRecord::default());
        let b = pool.take(ProbeRecord::default());
        assert_ne!(a, b);
        pool.give_back(a);
        assert_eq!(pool.in_use(), 1);
        assert_eq!(
            pool.take(ProbeRecord {
                bytes: 9,
                ..Default::default()
            }),
            a
        );
        assert_eq!(pool.get(a).bytes, 9);
    }
}

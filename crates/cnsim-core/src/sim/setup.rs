//! Building the simulator from a scenario: ports, roles, sources and
//! the per-flow and per-port state of the configured schemes.

use super::switch::{SharedBuffer, SwitchState, NO_INGRESS_ROW};
use super::workload::WorkloadFlows;
use super::{adapter::HostState, invariants, Role, Simulator};
use crate::cm::bcn::CongestionPoint;
use crate::cm::bcn_scheme::Bcn;
use crate::cm::dcqcn::Dcqcn;
use crate::cm::e2cm::E2cm;
use crate::cm::qcn::{Qcn, QcnCp};
use crate::cm::Scheme;
use crate::engine::rng::Stream;
use crate::engine::rng::{component_key, stream, Geometric};
use crate::engine::Fifo;
use crate::flowctl::pause::PauseMode;
use crate::flowctl::watchdog::Watchdog;
use crate::metrics::series::{BinnedLevel, BinnedSum, PortSums, RowsOnDemand};
use crate::net::ecn::{MarkAt, PortMarking};
use crate::net::mmu::{IngressCells, Mmu};
use crate::net::port::{Owner, Port, PortClasses};
use crate::net::rate_limiter::{Pacing, RateLimiter};
use crate::net::routing::{adjacency, Routes};
use crate::net::sched::SchedSpec;
use crate::net::topology::{BufferModel, NodeKind};
use crate::results::{FlowCounters, QueueCounters, StabilityWatch};
use crate::scenario::schema::SourceKind;
use crate::scenario::spec::Scenario;
use crate::scenario::spec::{FlowOrigin, FlowSpec};
use crate::traffic::source::{Source, SourceParams};
use crate::transport::Transport;
use crate::units::Time;
use fixedbitset::FixedBitSet;
use slab::Slab;
use std::collections::VecDeque;

/// The number of flows from which a run prefetches flow records
/// (`Simulator::prefetch_flows`): their counters (`FlowCounters`, under
/// 200 bytes each) then take most of a megabyte, the size of a core's
/// second-level cache on current x86 processors (512 KB to 2 MB), and a
/// frame's flow is usually out of it.
const PREFETCH_FLOWS: usize = 4096;

/// Rows the PFC event table keeps; later events are counted, not listed.
const PFC_EVENTS_LIMIT: usize = 1_000_000;

impl Simulator {
    pub fn new(sc: &Scenario, seed: u64) -> Simulator {
        let rss_at_start = crate::results::resident_memory();
        let routes = Routes::compute(&sc.nodes, &sc.links);
        let adj = adjacency(sc.nodes.len(), &sc.links);
        // An event's key holds a port and a PFC class in 32 bits (`Event::place`);
        // the memory estimate refuses runs far smaller than 2^29 ports.
        debug_assert!(sc.links.len() < 1 << 28, "ports number below 2^29");
        let mut ports = Vec::with_capacity(sc.links.len() * 2);
        for l in &sc.links {
            ports.push(Port::new(l.a as u32, 0, l.rate, l.delay));
            ports.push(Port::new(l.b as u32, 0, l.rate, l.delay));
        }
        for i in 0..sc.links.len() {
            ports[2 * i].peer = 2 * i as u32 + 1;
            ports[2 * i + 1].peer = 2 * i as u32;
        }
        for (n, ps) in adj.iter().enumerate() {
            let owner = match &sc.nodes[n].kind {
                NodeKind::Host(_) => Owner::Host,
                NodeKind::Switch(s) => Owner::Switch {
                    shared: s.shared.is_some(),
                    counts_input: matches!(s.buffer, BufferModel::PerInput { .. })
                        || s.pause
                            .is_some_and(|p| matches!(p.mode, PauseMode::PerInput)),
                },
            };
            for &(p, _) in ps {
                ports[p as usize].owner = owner;
            }
        }
        let n_classes = sc.priorities.as_ref().map_or(1, |p| p.classes);
        let mut roles = Vec::with_capacity(sc.nodes.len());
        let mut n_buffers = 0;
        let any_shared = sc
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Switch(s) if s.shared.is_some()));
        let mut ingress_cells = IngressCells::new(if any_shared { ports.len() } else { 0 });
        let mut pool_calm = vec![true; sc.nodes.len()];
        for (n, node) in sc.nodes.iter().enumerate() {
            roles.push(match &node.kind {
                NodeKind::Switch(s) => Role::Switch(SwitchState {
                    buffer: s.buffer,
                    queue_limit: s.queue_limit,
                    pause: s.pause,
                    pfc: s.pfc,
                    ecn_rng: s
                        .ecn
                        .as_ref()
                        .map(|_| Box::new(stream(seed, component_key("ecn", &node.name)))),
                    shared: s.shared.as_ref().map(|b| {
                        let lossless = s.pfc.map_or(0, |p| p.classes);
                        n_buffers += 1;
                        let own: Vec<u32> = adj[n].iter().map(|&(p, _)| p).collect();
                        let mmu =
                            Mmu::new(&b.mmu_spec(lossless, n_classes), &own, &mut ingress_cells)
                                .expect("the scenario checked the layout");
                        pool_calm[n] = mmu.calm();
                        Box::new(SharedBuffer {
                            mmu,
                            row: n_buffers - 1,
                            max_shared: 0,
                            max_headroom: 0,
                            headroom_overflows: 0,
                        })
                    }),
                }),
                NodeKind::Host(h) => {
                    let port = adj[n][0].0;
                    Role::Host(HostState {
                        host_number: routes.host_number(n).expect("hosts are numbered"),
                        port,
                        egress: h.egress,
                        high: h.egress_high,
                        low: h.egress_low.unwrap_or(0),
                        stopped: false,
                        waiting: VecDeque::new(),
                        turned: Vec::new(),
                        stalled: VecDeque::new(),
                        response_time: h.response_time,
                        voq: h.voq,
                        loop_delay: h.loop_delay,
                        in_delay: 0,
                        arbiter_free: Time::ZERO,
                        arbiter_wake: false,
                        lone_source: None,
                        waits_for_limiter: false,
                    })
                }
            });
        }
        let any_pfc = sc
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Switch(s) if s.pfc.is_some()));
        // A PAUSE switch's ports watch the occupancy its mode decides on:
        // its outputs' in global mode, its inputs' in per-input mode.
        let (mut pause_outputs, mut pause_inputs) = (false, false);
        for (n, node) in sc.nodes.iter().enumerate() {
            let NodeKind::Switch(s) = &node.kind else {
                continue;
            };
            let Some(ps) = s.pause.filter(|p| p.mode != PauseMode::Off) else {
                continue;
            };
            pause_outputs |= ps.mode == PauseMode::Global;
            pause_inputs |= ps.mode == PauseMode::PerInput;
            for &(p, _) in &adj[n] {
                ports[p as usize].pause.watch(ps.xoff, ps.xon);
            }
        }
        // Classes and PFC give every port its class queues; without them
        // ports keep the single queue's fast path.
        let marks_at = |at: MarkAt| {
            sc.nodes.iter().any(
                |n| matches!(&n.kind, NodeKind::Switch(s) if s.ecn.as_ref().is_some_and(|e| e.spec.at == at)),
            )
        };
        let any_ecn = marks_at(MarkAt::Enqueue) || marks_at(MarkAt::Dequeue);
        let any_shared = sc
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Switch(s) if s.shared.is_some()));
        // The distinct ECN markings of the switches' ports (a few: one per
        // switch configuration and link rate).
        let mut ecn_marks: Vec<PortMarking> = Vec::new();
        if sc.priorities.is_some() || any_pfc || any_ecn || any_shared {
            let sched = sc
                .priorities
                .as_ref()
                .map_or(SchedSpec::strict(), |p| p.sched);
            for p in 0..ports.len() {
                let peer = ports[ports[p].peer as usize].node as usize;
                let own = match &sc.nodes[ports[p].node as usize].kind {
                    NodeKind::Switch(s) => s.sched_toward(peer),
                    NodeKind::Host(_) => None,
                };
                let sched = own.unwrap_or(&sched);
                ports[p].set_classes(PortClasses::new(sched), sched);
                if let NodeKind::Switch(s) = &sc.nodes[ports[p].node as usize].kind {
                    if let Some(e) = &s.ecn {
                        let m = PortMarking {
                            classes: e.classes,
                            at: e.spec.at,
                            rule: e.rule_at(ports[p].rate),
                        };
                        let i = match ecn_marks.iter().position(|&n| n == m) {
                            Some(i) => i,
                            None => {
                                ecn_marks.push(m);
                                ecn_marks.len() - 1
                            }
                        };
                        let i = u16::try_from(i).expect("fewer than 65,535 distinct markings");
                        ports[p].set_marking(i, &m);
                    }
                }
            }
        }
        let mut to_peer = Vec::with_capacity(ports.len());
        let mut pause_to_peer = Vec::with_capacity(ports.len());
        let mut to_host = Vec::with_capacity(ports.len());
        for p in 0..ports.len() {
            let peer_node = &sc.nodes[ports[ports[p].peer as usize].node as usize];
            let latency = match &peer_node.kind {
                NodeKind::Switch(s) => s.latency,
                NodeKind::Host(_) => Time::ZERO,
            };
            to_peer.push(ports[p].delay + latency);
            pause_to_peer.push(ports[p].delay + peer_node.response_time());
            to_host.push(peer_node.is_host());
            if let NodeKind::Host(h) = &peer_node.kind {
                ports[p].service = h.service.map(Box::new);
            }
        }
        let window = (0..ports.len())
            .filter(|&p| {
                let peer = ports[ports[p].peer as usize].node as usize;
                !sc.nodes[ports[p].node as usize].is_host() && !sc.nodes[peer].is_host()
            })
            .map(|p| to_peer[p].min(pause_to_peer[p]))
            .min();
        let flow_specs = sc.run_flows(seed);
        let mut sources = Vec::with_capacity(sc.sources.len());
        // Each source's flows (flow index, destination host), in flow order.
        let mut source_flows: Vec<Vec<(u32, u32)>> = vec![Vec::new(); sc.sources.len()];
        for (fi, f) in flow_specs.iter().enumerate() {
            if let FlowOrigin::Source(s) = f.origin {
                let dst = routes.host_number(f.dst).expect("destinations are hosts");
                source_flows[s].push((fi as u32, dst));
            }
        }
        // Sources with equal loads share their gap generator's table.
        let mut gaps: std::collections::HashMap<u64, Geometric> = Default::default();
        for (si, s) in sc.sources.iter().enumerate() {
            let Role::Host(h) = &roles[s.host] else {
                unreachable!("validated: sources sit on hosts")
            };
            let unit_bytes = if s.kind == SourceKind::Transactions {
                s.transaction
            } else {
                s.frame as u64
            };
            let flows = std::mem::take(&mut source_flows[si]);
            let gap = gaps
                .entry(s.load.to_bits())
                .or_insert_with(|| Geometric::new(s.load))
                .clone();
            let slot = ports[h.port as usize].rate.tx_time(unit_bytes);
            sources.push(Source::new(SourceParams {
                host_node: s.host as u32,
                transport: s.transport,
                host_port: h.port,
                rng: stream(seed, component_key("source", &s.name)),
                gaps: gap,
                slot,
                slot_offset: s.slot_offset,
                start: s.start,
                stop: s.stop,
                frame: s.frame,
                unit_bytes,
                flows,
            }));
        }
        let n_bins = sc.duration.0.div_ceil(sc.bin.0) as usize;
        // Rows of the ingress series: each switch port with classes, class
        // by class, in port order (the order of the `classes` table).
        let mut ingress_row = Vec::new();
        let mut n_ingress = 0;
        if sc.metrics.ingress_occupancy {
            ingress_row = vec![NO_INGRESS_ROW; ports.len()];
            for (p, port) in ports.iter().enumerate() {
                let at_switch = matches!(sc.nodes[port.node as usize].kind, NodeKind::Switch(_));
                if at_switch && port.classes.is_some() {
                    ingress_row[p] = n_ingress;
                    n_ingress += n_classes as u32;
                }
            }
        }
        let n_ports = ports.len();
        let n_flows = flow_specs.len();
        let workload = WorkloadFlows::new(sc, &flow_specs);
        // Rows of the flow series: one per source flow, one per workload.
        let n_rows = workload.first as usize + sc.workloads.len();
        let queue_names = sc.queue_names();
        // Per port: the queue's name if it has a congestion point.
        let cp_queues: Vec<Option<&str>> = (0..n_ports)
            .map(|i| match &sc.nodes[ports[i].node as usize].kind {
                NodeKind::Switch(s) if s.congestion_point => Some(queue_names[i].as_str()),
                _ => None,
            })
            .collect();
        let any_voq = sc
            .nodes
            .iter()
            .any(|n| matches!(&n.kind, NodeKind::Host(h) if h.voq));
        let has_limiters = sc.has_rate_limiters() || any_voq;
        let rl_rows = if has_limiters { n_flows } else { 0 };
        let flow_src_node: Vec<u32> = flow_specs.iter().map(|f| f.src as u32).collect();
        let flow_dst_host: Vec<u32> = flow_specs
            .iter()
            .map(|f| routes.host_number(f.dst).expect("destinations are hosts"))
            .collect();
        let flow_src_host: Vec<u32> = flow_specs
            .iter()
            .map(|f| routes.host_number(f.src).expect("sources are hosts"))
            .collect();
        let mut sim = Simulator {
            now: Time::ZERO,
            end: sc.duration,
            seed,
            events: super::Events::with_capacity(4096),
            pause_outputs,
            pause_inputs,
            any_pfc,
            ecn_marks,
            ecn_at_enqueue: marks_at(MarkAt::Enqueue),
            ecn_at_dequeue: marks_at(MarkAt::Dequeue),
            // DCQCN's flows are ECN-capable: its switches mark them.
            flow_ect: flow_specs
                .iter()
                .map(|f| f.ecn || (sc.dcqcn.is_some() && !f.transport.is_connection()))
                .collect(),
            n_classes,
            flow_class: flow_specs.iter().map(|f| f.priority).collect(),
            ack_class: sc.priorities.as_ref().and_then(|p| p.acks),
            notification_class: sc.priorities.as_ref().and_then(|p| p.notifications),
            pfc_events: Vec::new(),
            pfc_events_limit: PFC_EVENTS_LIMIT,
            pfc_events_omitted: 0,
            roles,
            node_ports: adj
                .iter()
                .map(|ps| ps.iter().map(|&(p, _)| p).collect())
                .collect(),
            ports,
            to_peer,
            pause_to_peer,
            to_host,
            routes,
            parked: Slab::with_capacity(64),
            lane_frames: Fifo::new(),
            on_links: Slab::with_capacity(1024),
            sources,
            flows: vec![FlowCounters::default(); n_flows],
            queues: vec![QueueCounters::default(); n_ports],
            flow_tx: BinnedSum::new(n_rows, n_bins, sc.bin),
            flow_rx: BinnedSum::new(n_rows, n_bins, sc.bin),
            queue_tx: PortSums::new(n_ports, n_bins, sc.bin),
            queue_drops: PortSums::new(n_ports, n_bins, sc.bin),
            queue_xoff: PortSums::new(n_ports, n_bins, sc.bin),
            queue_occ: BinnedLevel::new(n_ports, n_bins, sc.bin),
            buffer_shared: BinnedLevel::new(n_buffers, n_bins, sc.bin),
            buffer_headroom: BinnedLevel::new(n_buffers, n_bins, sc.bin),
            ingress_occ: BinnedLevel::new(n_ingress as usize, n_bins, sc.bin),
            ingress_cells,
            pool_calm,
            ingress_row,
            n_events: 0,
            frame_hops: 0,
            fingerprint: 0,
            watchdog_spec: sc.watchdog,
            // With PFC the watchdog watches each (port, class): port × 8 + class.
            watchdog: Watchdog::new(match (sc.watchdog.is_some(), any_pfc) {
                (false, _) => 0,
                (true, false) => n_ports,
                (true, true) => n_ports * 8,
            }),
            stop: None,
            window,
            halt: None,
            part: None,
            watch_pending: Vec::new(),
            watch_at: Time::MAX,
            attention: false,
            checks: true,
            violation: None,
            rate_floor: invariants::rate_floor(sc),
            last_seq: vec![0; n_flows],
            #[cfg(test)]
            fault: invariants::Fault::None,
            #[cfg(test)]
            rp_outlives_flow: false,
            #[cfg(test)]
            keep_conn_ends: false,
            #[cfg(test)]
            late_frames: 0,
            #[cfg(test)]
            calm_looks: [0; 2],
            max_events: u64::MAX,
            max_wall: None,
            poll: None,
            scheme: Scheme::None,
            udp_at_last_bit: true,
            prefetch_flows: n_flows >= PREFETCH_FLOWS,
            conn_writer: Vec::new(),
            limiters: flow_specs[..rl_rows]
                .iter()
                .map(|f| limiter(sc, seed, f))
                .collect(),
            rl_active: FixedBitSet::with_capacity(rl_rows),
            flow_rl: match sc.qcn {
                Some(q) if q.per_destination => (0..n_flows)
                    .map(|f| {
                        let (s, d) = (flow_specs[f].src, flow_specs[f].dst);
                        (0..f)
                            .find(|&g| flow_specs[g].src == s && flow_specs[g].dst == d)
                            .unwrap_or(f) as u32
                    })
                    .collect(),
                _ => Vec::new(),
            },
            flow_src_host,
            flow_src_node,
            switch_latency: sc
                .nodes
                .iter()
                .map(|n| match &n.kind {
                    NodeKind::Switch(s) => s.latency,
                    NodeKind::Host(_) => Time::ZERO,
                })
                .collect(),
            // Rows come with the first limiter (`limiter_row`).
            rl_rate: BinnedLevel::new(0, n_bins, sc.bin),
            rl_occ: BinnedLevel::new(0, n_bins, sc.bin),
            rl_rows: RowsOnDemand::new(rl_rows.min(workload.first as usize)),
            stability: sc
                .metrics
                .stability
                .as_ref()
                .map(|s| StabilityWatch::new(s.queue as u32, s.threshold, s.onset)),
            flow_dst_host,
            flow_alpha: BinnedLevel::new(if sc.has_alpha() { n_rows } else { 0 }, n_bins, sc.bin),
            rl_target: sc
                .has_target_rate()
                .then(|| BinnedLevel::new(0, n_bins, sc.bin)),
            flow_conn: Vec::new(),
            conn_param_sets: Vec::new(),
            conn_param_of: Vec::new(),
            conn_sending: Vec::new(),
            conn_receiving: Vec::new(),
            senders: Slab::new(),
            receivers: Slab::new(),
            conn_dst_node: Vec::new(),
            tcp_cwnd: BinnedLevel::new(0, n_bins, sc.bin),
            conn_retx: BinnedSum::new(0, n_bins, sc.bin),
            conn_timeouts: BinnedSum::new(0, n_bins, sc.bin),
            flow_row: workload.rows(&flow_specs),
            workload,
            rss_at_start,
            #[cfg(feature = "partition-stats")]
            pstats: None,
        };
        for row in 0..rl_rows {
            sim.note_active(row as u32);
        }
        // Transmissions of several durations (links of several rates, ACKs
        // beside data): the completions of each form their own increasing
        // sequence, which the event queue's extra lanes take.
        // With links of several rates, each with data and ACKs, the
        // completions may take the lane of their frame time.
        let rates: std::collections::BTreeSet<_> = sim.ports.iter().map(|p| p.rate).collect();
        if rates.len() > 1 {
            sim.events.offer_placement_by_delay();
        } else if !sc.workloads.is_empty()
            || flow_specs.iter().any(|f| f.transport != Transport::Udp)
        {
            sim.events.open_all_lanes();
        }
        // A host whose only flow is a UDP source's: that source is the only
        // one who may wait for room there (`Simulator::park_source`).
        if sc.workloads.is_empty() {
            let mut flows_from = vec![0u32; sc.nodes.len()];
            for f in &flow_specs {
                flows_from[f.src] += 1;
            }
            for (si, s) in sim.sources.iter().enumerate() {
                let node = s.host_node as usize;
                if s.transport == Transport::Udp && flows_from[node] == 1 {
                    if let Role::Host(h) = &mut sim.roles[node] {
                        h.lone_source = Some(si as u32);
                    }
                }
            }
        }
        // A connection source with one flow is that flow's only writer.
        for (si, s) in sim.sources.iter().enumerate() {
            if let (true, Some((flow, _))) = (s.transport.is_connection(), s.next_first_frame()) {
                if sim.conn_writer.is_empty() {
                    sim.conn_writer = vec![super::conn::NO_WRITER; n_flows];
                }
                sim.conn_writer[flow as usize] = si as u32;
            }
        }
        let lines: Vec<f64> = (0..n_flows).map(|f| sim.line_rate(f as u32)).collect();
        for (rl, &line) in sim.limiters.iter_mut().zip(&lines) {
            rl.line = line;
        }
        sim.scheme = scheme(sc, seed, &cp_queues, &flow_specs, &lines);
        sim.udp_at_last_bit = !sim.scheme.watches_destinations();
        if sc.tcp.is_some() || sc.roce.is_some() {
            sim.init_conns(sc, &flow_specs, sc.tcp, sc.roce, n_bins, n_rows);
        }
        sim
    }
}

/// The scheme the scenario configures, with its state: congestion points
/// on the queues named in `cp_queues`, reaction points for the flows
/// (`lines`: each flow's line rate, bit/s), each with its random stream.
fn scheme(
    sc: &Scenario,
    seed: u64,
    cp_queues: &[Option<&str>],
    flows: &[FlowSpec],
    lines: &[f64],
) -> Scheme {
    let cp_stream = |queue: &str| stream(seed, component_key("cp", queue));
    let flow_streams = |kind: &str| -> Vec<Stream> {
        flows
            .iter()
            .map(|f| stream(seed, component_key(kind, &f.name)))
            .collect()
    };
    if let Some(p) = sc.bcn {
        let cps = cp_queues
            .iter()
            .map(|q| q.map(|queue| CongestionPoint::new(&p, cp_stream(queue))))
            .collect();
        // Only BCN(0,0) draws at the reaction point.
        let rp_rng = match p.stop {
            Some(_) => flow_streams("rp"),
            None => Vec::new(),
        };
        let e2cm = sc.e2cm.map(|e| E2cm::new(e, flow_streams("probe")));
        return Scheme::Bcn(Bcn::new(p, cps, rp_rng, e2cm));
    }
    if let Some(q) = sc.qcn {
        let cps = cp_queues
            .iter()
            .map(|c| c.map(|queue| QcnCp::new(&q, cp_stream(queue))))
            .collect();
        return Scheme::Qcn(Qcn::new(q, cps, lines, flow_streams("rp")));
    }
    if let Some(d) = sc.dcqcn {
        return Scheme::Dcqcn(Dcqcn::new(d, lines, flows.len(), flow_streams("rp")));
    }
    Scheme::None
}

/// The rate limiter of a flow (not installed), paced as its source host says.
fn limiter(sc: &Scenario, seed: u64, f: &FlowSpec) -> RateLimiter {
    let width = match &sc.nodes[f.src].kind {
        NodeKind::Host(h) => h.limiter_jitter,
        NodeKind::Switch(_) => unreachable!("flows start at hosts"),
    };
    let pacing = if width > 0.0 {
        Pacing::Jittered {
            width,
            rng: stream(seed, component_key("pacer", &f.name)),
        }
    } else {
        Pacing::Exact
    };
    RateLimiter {
        pacing,
        ..RateLimiter::default()
    }
}

//! PAUSE in the running network: generation at switches, sending and
//! reception, timers, and the deadlock watchdog. The decisions and the
//! ports' state are `flowctl`'s; this is where the engine applies them.

use super::{event::Event, switch::SwitchState, Role, Simulator};
use crate::flowctl::pause::{pause_duration, PauseEffect, PauseMode, XOFF_QUANTA};
use crate::flowctl::watchdog::PausedPorts;
use crate::net::port::Port;
use crate::units::Time;

/// The ports as the watchdog sees them: each port, or with PFC each
/// (port, class) as `port × 8 + class` (`per_class`).
pub(super) struct NetView<'a> {
    pub(super) ports: &'a [Port],
    pub(super) node_ports: &'a [Vec<u32>],
    pub(super) per_class: bool,
}

impl NetView<'_> {
    /// The port and class of a watched element.
    fn split(&self, e: u32) -> (usize, Option<u8>) {
        if self.per_class {
            ((e / 8) as usize, Some((e % 8) as u8))
        } else {
            (e as usize, None)
        }
    }
}

impl PausedPorts for NetView<'_> {
    /// PAUSE holds every class; PFC one.
    fn paused_since(&self, e: u32) -> Option<Time> {
        let (port, class) = self.split(e);
        let p = &self.ports[port];
        let by_pause = p.pause.receiver.paused_since();
        let by_pfc = class
            .zip(p.classes.as_deref())
            .and_then(|(c, pc)| pc.pfc_receiver().paused_since(c));
        match (by_pause, by_pfc) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn peer_port(&self, e: u32, i: usize) -> Option<u32> {
        let (port, class) = self.split(e);
        let peer = self.ports[port].peer as usize;
        let q = *self.node_ports[self.ports[peer].node as usize].get(i)?;
        Some(match class {
            Some(c) => q * 8 + c as u32,
            None => q,
        })
    }
}

impl Simulator {
    /// Occupancy at a switch changed (of output `out`, and of the input
    /// partition of `inp`): PAUSE may hold or release upstream. Without
    /// PAUSE anywhere this is the one test per frame; with it, the watched
    /// port's own `Crossings` (global mode: the output's, per-input mode:
    /// the input's) say whether the switch's decision can change, which
    /// then reads its mode and thresholds. In a run with both modes a port
    /// may be tested for the other one's quantity: a needless call to the
    /// exact decision, never a missed one.
    #[inline(always)]
    pub(super) fn pause_check(&mut self, node: usize, out: u32, inp: u32) {
        let by_output = self.pause_outputs && {
            let o = &self.ports[out as usize];
            o.pause.crossings.crossed(o.occupancy)
        };
        let by_input = self.pause_inputs && {
            let i = &self.ports[inp as usize];
            i.pause.crossings.crossed(i.input_occupancy)
        };
        #[cfg(test)]
        assert!(
            by_output || by_input || !self.pause_would_change(node, out, inp),
            "switch {node}: a PAUSE crossing its ports' test missed"
        );
        if by_output || by_input {
            self.switch_pause(node, out, inp);
        }
    }

    /// Whether `switch_pause` would change anything now (tests: the
    /// ports' crossings must say yes whenever it would).
    #[cfg(test)]
    fn pause_would_change(&self, node: usize, out: u32, inp: u32) -> bool {
        let Role::Switch(SwitchState {
            pause: Some(ps), ..
        }) = &self.roles[node]
        else {
            return false;
        };
        match ps.mode {
            PauseMode::Global => {
                let o = &self.ports[out as usize];
                let mut p = o.pause;
                p.output_crossing(o.occupancy, ps.xoff, ps.xon).is_some()
            }
            PauseMode::PerInput => {
                let i = &self.ports[inp as usize];
                let mut p = i.pause;
                p.input_crossing(i.input_occupancy, ps.xoff, ps.xon)
                    .is_some()
            }
            PauseMode::Off => false,
        }
    }

    /// The switch's PAUSE mode decides: global (an output at XOFF holds
    /// every other port's upstream) or per input (an input's partition at
    /// XOFF holds that input's upstream).
    #[inline(never)]
    fn switch_pause(&mut self, node: usize, out: u32, inp: u32) {
        let Role::Switch(SwitchState {
            pause: Some(ps), ..
        }) = &self.roles[node]
        else {
            return;
        };
        let (xoff, xon) = (ps.xoff, ps.xon);
        match ps.mode {
            PauseMode::Global => {
                let o = &mut self.ports[out as usize];
                let Some(hold) = o.pause.output_crossing(o.occupancy, xoff, xon) else {
                    return;
                };
                for i in 0..self.node_ports[node].len() {
                    let p = self.node_ports[node][i];
                    if p == out {
                        continue;
                    }
                    if let Some(cmd) = self.ports[p as usize].pause.hold_upstream(hold) {
                        self.send_pause(p, cmd.quanta());
                    }
                }
            }
            PauseMode::PerInput => {
                let p = &mut self.ports[inp as usize];
                if let Some(cmd) = p.pause.input_crossing(p.input_occupancy, xoff, xon) {
                    self.send_pause(inp, cmd.quanta());
                }
            }
            PauseMode::Off => {}
        }
    }

    /// Queue a PAUSE frame on `port`; a newer decision replaces one not yet sent.
    pub(super) fn send_pause(&mut self, port: u32, quanta: u16) {
        self.ports[port as usize].pause.pending = Some(quanta);
        self.try_start(port);
    }

    /// The last bit of a PAUSE frame left `port`: it takes effect at the
    /// peer after the link delay and the peer's response time. An XOFF is
    /// sent again after half its pause time while the hold lasts, if the
    /// switch refreshes.
    pub(super) fn pause_sent(&mut self, port: u32, quanta: u16) {
        let (now, pi) = (self.now, port as usize);
        let peer = self.ports[pi].peer;
        self.schedule_at_peer(
            pi,
            now + self.pause_to_peer[pi],
            Event::PauseRx { port: peer, quanta },
        );
        let p = &mut self.ports[pi];
        p.pause.sender.frames_sent += 1;
        if quanta > 0 {
            p.pause.sender.xoff_sent += 1;
            self.queue_xoff.add(pi, now, 1);
            let node = p.node as usize;
            if let Role::Switch(SwitchState {
                pause: Some(ps), ..
            }) = &self.roles[node]
            {
                if ps.refresh {
                    let half = Time(pause_duration(quanta, p.rate).0 / 2);
                    let generation = p.pause.sender.generation;
                    self.events
                        .schedule(now + half, Event::PauseRefresh { port, generation });
                }
            }
        }
    }

    /// A refresh timer: XOFF again if the hold it was set for lasts.
    pub(super) fn pause_refresh(&mut self, port: u32, generation: u32) {
        let s = &self.ports[port as usize].pause.sender;
        if s.generation == generation && s.holding() {
            self.send_pause(port, XOFF_QUANTA);
        }
    }

    /// The pause timer set with `generation` ran out.
    pub(super) fn pause_expire(&mut self, port: u32, generation: u32) {
        if self.ports[port as usize]
            .pause
            .receiver
            .expire(self.now, generation)
        {
            self.try_start(port);
        }
    }

    pub(super) fn pause_rx(&mut self, port: u32, quanta: u16) {
        let p = &mut self.ports[port as usize];
        match p.pause.receiver.receive(self.now, quanta, p.rate) {
            PauseEffect::HoldUntil(t, generation) => {
                self.events
                    .schedule(t, Event::PauseExpire { port, generation });
                self.watch(port);
            }
            PauseEffect::Resume => self.try_start(port),
        }
    }

    /// The watchdog looks at a paused port (with PFC: every class it has).
    pub(super) fn watch(&mut self, port: u32) {
        if !self.any_pfc {
            return self.watch_element(port);
        }
        for c in 0..self.n_classes {
            self.watch_element(port * 8 + c as u32);
        }
    }

    /// The watchdog looks at one element (`NetView`); a new long pause
    /// gets its cycle search at the end of the window (`search_cycles`).
    pub(super) fn watch_element(&mut self, e: u32) {
        let Some(spec) = self.watchdog_spec else {
            return;
        };
        let net = NetView {
            ports: &self.ports,
            node_ports: &self.node_ports,
            per_class: self.any_pfc,
        };
        if self.watchdog.check(&spec, &net, e, self.now) {
            self.watch_pending.push((e, self.now));
            // A split run searches at its barriers (`parallel`).
            if self.part.is_none() {
                self.watch_at = self.watch_at.min(self.window_end(self.now));
                self.attention = true;
            }
        }
    }

    /// The cycle searches due by `due`, a window end (`Time::MAX`: all, at
    /// the run's end). Returns when the first new deadlock was noticed.
    pub(super) fn search_cycles(&mut self, due: Time) -> Option<Time> {
        let spec = self.watchdog_spec?;
        let mut found = None;
        let mut pending = std::mem::take(&mut self.watch_pending);
        pending.retain(|&(e, noticed)| {
            if self.window_end(noticed) > due {
                return true;
            }
            let net = NetView {
                ports: &self.ports,
                node_ports: &self.node_ports,
                per_class: self.any_pfc,
            };
            if self.watchdog.search(&spec, &net, e, noticed) {
                found = found.or(Some(noticed));
            }
            false
        });
        self.watch_at = pending
            .iter()
            .map(|&(_, noticed)| self.window_end(noticed))
            .min()
            .unwrap_or(Time::MAX);
        self.watch_pending = pending;
        found
    }

    /// The watchdog found a new deadlock, noticed at `noticed`: with
    /// `stop_on_deadlock` the run stops at the end of that window.
    pub(super) fn stop_if_deadlocked(&mut self, noticed: Time) {
        if !self.watchdog_spec.is_some_and(|w| w.stop_on_deadlock) {
            return;
        }
        let d = self.watchdog.deadlocks.last().expect("just found");
        let reason = if self.any_pfc {
            format!(
                "PFC deadlock: a cycle of {} paused (port, class) pairs",
                d.ports.len()
            )
        } else {
            format!("PAUSE deadlock: a cycle of {} paused ports", d.ports.len())
        };
        self.stop.get_or_insert((noticed, reason));
    }
}

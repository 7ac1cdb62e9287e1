//! PAUSE in the running network: generation at switches, reception at
//! transmitters, and the deadlock watchdog.

use super::{event::Event, switch::SwitchState, Role, Simulator};
use crate::flowctl::pause::PauseEffect;
use crate::flowctl::watchdog::PausedPorts;
use crate::net::port::Port;
use crate::scenario::schema::PauseMode;
use crate::units::Time;

/// The ports as the PAUSE watchdog sees them.
pub(super) struct NetView<'a> {
    pub(super) ports: &'a [Port],
    pub(super) node_ports: &'a [Vec<u32>],
}

impl PausedPorts for NetView<'_> {
    fn paused_since(&self, port: u32) -> Option<Time> {
        self.ports[port as usize].pause_in.paused_since()
    }
    fn peer_ports(&self, port: u32) -> &[u32] {
        let peer = self.ports[port as usize].peer as usize;
        &self.node_ports[self.ports[peer].node as usize]
    }
}

impl Simulator {
    /// An output's occupancy changed: PAUSE may hold or release upstream.
    #[inline(always)]
    pub(super) fn output_pause_check(&mut self, node: usize, out: u32) {
        if self.any_pause {
            self.global_pause_check(node, out);
        }
    }

    /// Global mode: an output at XOFF holds every other port's upstream.
    pub(super) fn global_pause_check(&mut self, node: usize, out: u32) {
        let Role::Switch(SwitchState {
            pause: Some(ps), ..
        }) = &self.roles[node]
        else {
            return;
        };
        if ps.mode != PauseMode::Global {
            return;
        }
        let (xoff, xon) = (ps.xoff, ps.xon);
        let o = &self.ports[out as usize];
        let hold = if !o.congested && o.occupancy >= xoff {
            true
        } else if o.congested && o.occupancy <= xon {
            false
        } else {
            return;
        };
        self.ports[out as usize].congested = hold;
        for i in 0..self.node_ports[node].len() {
            let p = self.node_ports[node][i];
            if p == out {
                continue;
            }
            let s = &mut self.ports[p as usize].pause_out;
            if let Some(cmd) = if hold { s.hold() } else { s.release() } {
                self.send_pause(p, cmd.quanta());
            }
        }
    }

    /// An input partition's occupancy changed: PAUSE may hold or release its upstream.
    #[inline(always)]
    pub(super) fn input_pause_check(&mut self, node: usize, inp: u32) {
        if self.any_pause {
            self.per_input_pause_check(node, inp);
        }
    }

    /// Per-input mode: an input's partition at XOFF holds that input's upstream.
    pub(super) fn per_input_pause_check(&mut self, node: usize, inp: u32) {
        let Role::Switch(SwitchState {
            pause: Some(ps), ..
        }) = &self.roles[node]
        else {
            return;
        };
        if ps.mode != PauseMode::PerInput {
            return;
        }
        let (xoff, xon) = (ps.xoff, ps.xon);
        let p = &mut self.ports[inp as usize];
        let cmd = if !p.pause_out.holding() && p.input_occupancy >= xoff {
            p.pause_out.hold()
        } else if p.pause_out.holding() && p.input_occupancy <= xon {
            p.pause_out.release()
        } else {
            None
        };
        if let Some(cmd) = cmd {
            self.send_pause(inp, cmd.quanta());
        }
    }

    /// Queue a PAUSE frame on `port`; a newer decision replaces one not yet sent.
    pub(super) fn send_pause(&mut self, port: u32, quanta: u16) {
        self.ports[port as usize].ctrl_pending = Some(quanta);
        self.try_start(port);
    }

    pub(super) fn pause_rx(&mut self, port: u32, quanta: u16) {
        let p = &mut self.ports[port as usize];
        match p.pause_in.receive(self.now, quanta, p.rate) {
            PauseEffect::HoldUntil(t, generation) => {
                self.events
                    .schedule(t, Event::PauseExpire { port, generation });
                if self.watch(port) && self.watchdog_spec.is_some_and(|w| w.stop_on_deadlock) {
                    let d = self.watchdog.deadlocks.last().expect("just found");
                    let reason =
                        format!("PAUSE deadlock: a cycle of {} paused ports", d.ports.len());
                    self.stop.get_or_insert((self.now, reason));
                }
            }
            PauseEffect::Resume => self.try_start(port),
        }
    }

    /// The watchdog looks at a paused port. True if it found a new deadlock.
    pub(super) fn watch(&mut self, port: u32) -> bool {
        let Some(spec) = self.watchdog_spec else {
            return false;
        };
        let net = NetView {
            ports: &self.ports,
            node_ports: &self.node_ports,
        };
        self.watchdog.check(&spec, &net, port, self.now)
    }
}

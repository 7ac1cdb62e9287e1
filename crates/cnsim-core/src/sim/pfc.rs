//! PFC in the running network: per-(ingress port, class) decisions at
//! switches, sending and receiving PFC frames, and the class timers. The
//! state machines are `flowctl::pfc`'s; this is where the engine applies
//! them, as `sim::pause` does for 802.3x PAUSE.

use super::switch::{record_ingress, SwitchState};
use super::{event::Event, Role, Simulator};
use crate::flowctl::pause::PauseEffect;
use crate::flowctl::pfc::{classes, PfcFrame};
use crate::net::port::Owner;
use crate::results::{PfcDirection, PfcRecord};

impl Simulator {
    /// Something reads the bytes held per ingress (port, class) of a switch
    /// without a shared buffer: static PFC thresholds, or the ingress
    /// series. Without either, nobody does, and a frame does not touch its
    /// input port's classes.
    #[inline]
    pub(super) fn counts_ingress(&self) -> bool {
        self.any_pfc || !self.ingress_row.is_empty()
    }

    /// The bytes switch `node` holds from ingress (`inp`, `class`) changed
    /// by `delta`: count them, and PFC may hold or release that class
    /// upstream. Called only where ports have classes, out of line.
    #[inline(never)]
    pub(super) fn ingress_changed(&mut self, node: usize, inp: u32, class: u8, delta: i64) {
        let pc = self.ports[inp as usize]
            .classes
            .as_deref_mut()
            .expect("called with classes");
        let held = &mut pc.ingress[class as usize];
        *held = held
            .checked_add_signed(delta)
            .expect("no negative ingress bytes");
        let held = *held;
        if !self.ingress_row.is_empty() {
            record_ingress(
                &self.ingress_row,
                &mut self.ingress_occ,
                inp,
                class,
                self.now,
                held,
            );
        }
        if self.any_pfc {
            self.switch_pfc(node, inp, class);
        }
    }

    /// PFC on a switch without a shared buffer: its static thresholds on
    /// the bytes held from ingress (`inp`, `class`). (A shared buffer's MMU
    /// decides in `shared_admit` and `shared_release`.)
    fn switch_pfc(&mut self, node: usize, inp: u32, class: u8) {
        let Role::Switch(SwitchState {
            pfc: Some(spec),
            shared: None,
            ..
        }) = &self.roles[node]
        else {
            return;
        };
        if spec.classes & (1 << class) == 0 {
            return;
        }
        let (xoff, xon) = spec
            .thresholds
            .expect("static thresholds without a shared buffer");
        let pc = self.ports[inp as usize]
            .classes
            .as_deref_mut()
            .expect("PFC ports have classes");
        let hold = pc
            .pfc_sender
            .should_pause(class, pc.ingress[class as usize], xoff, xon);
        self.pfc_hold(inp, class, hold);
    }

    /// Ingress (`inp`, `class`) should be held (`hold`) or not: send PFC
    /// upstream if that changes what the port holds. Inline: it rarely does.
    #[inline]
    pub(super) fn pfc_hold(&mut self, inp: u32, class: u8, hold: bool) {
        let s = &self.ports[inp as usize]
            .classes
            .as_deref()
            .expect("PFC ports have classes")
            .pfc_sender;
        if hold != s.holding(class) {
            self.pfc_change(inp, class, hold);
        }
    }

    #[inline(never)]
    pub(super) fn pfc_change(&mut self, inp: u32, class: u8, hold: bool) {
        let held = self.ports[inp as usize]
            .classes
            .as_deref()
            .expect("PFC ports have classes")
            .pfc_sender
            .holding_mask();
        self.pfc_hold_classes(inp, (held & !(1 << class)) | (u8::from(hold) << class));
    }

    /// PFC is to hold the classes in `want` (bit c: class c) upstream of
    /// `inp` and release the others: the PFC sender decides (and sends
    /// what changed), and a shared buffer's MMU keeps a copy, which its
    /// decisions are compared with. Every change of what a port holds
    /// comes through here.
    fn pfc_hold_classes(&mut self, inp: u32, want: u8) {
        let p = &mut self.ports[inp as usize];
        let shared = matches!(p.owner, Owner::Switch { shared: true, .. });
        let f = p
            .classes
            .as_deref_mut()
            .expect("PFC ports have classes")
            .pfc_sender
            .decide(want);
        if shared {
            self.ingress_cells.set_held(inp, want);
        }
        if let Some(f) = f {
            self.send_pfc(inp, f);
        }
    }

    /// Queue a PFC frame on `port`; it joins one that has not left yet.
    #[inline(never)]
    fn send_pfc(&mut self, port: u32, f: PfcFrame) {
        self.ports[port as usize].queue_pfc(f);
        self.try_start(port);
    }

    /// The last bit of a PFC frame left `port`: each class it speaks for
    /// takes effect at the peer after the link delay and the peer's
    /// response time. Held classes are refreshed at half their pause time.
    #[inline(never)]
    pub(super) fn pfc_sent(&mut self, port: u32) {
        let (now, pi) = (self.now, port as usize);
        let peer = self.ports[pi].peer;
        let rate = self.ports[pi].rate;
        let node = self.ports[pi].node;
        let pc = self.ports[pi]
            .classes
            .as_deref_mut()
            .expect("PFC ports have classes");
        let f = pc.pfc_on_wire;
        let refresh_at = pc.pfc_sender.sent(now, &f, rate);
        let at = now + self.pause_to_peer[pi];
        for class in classes(f.enable) {
            let quanta = f.quanta[class as usize];
            self.schedule_at_peer(
                pi,
                at,
                Event::PfcRx {
                    port: peer,
                    class,
                    quanta,
                },
            );
            self.pfc_log(port, node, class, quanta, PfcDirection::Sent);
            if quanta > 0 {
                self.queue_xoff.add(pi, now, 1);
            }
        }
        let refreshes = matches!(&self.roles[node as usize],
            Role::Switch(SwitchState { pfc: Some(spec), .. }) if spec.refresh);
        if let (Some(t), true) = (refresh_at, refreshes) {
            self.events.schedule(t, Event::PfcRefresh { port });
        }
    }

    /// A refresh timer: XOFF again for the held classes that are due.
    #[inline(never)]
    pub(super) fn pfc_refresh(&mut self, port: u32) {
        let now = self.now;
        // A dynamic threshold may have risen with the pool's free room
        // while the queue held still: a shared buffer's MMU decides again.
        let node = self.ports[port as usize].node as usize;
        if let Role::Switch(SwitchState {
            shared: Some(b), ..
        }) = &self.roles[node]
        {
            let s = &self.ports[port as usize]
                .classes
                .as_deref()
                .expect("PFC ports have classes")
                .pfc_sender;
            let release = classes(s.holding_mask())
                .filter(|&c| b.mmu.pfc_decision(&self.ingress_cells, port, c) == Some(false))
                .fold(0u8, |m, c| m | (1 << c));
            let want = s.holding_mask() & !release;
            self.pfc_hold_classes(port, want);
        }
        let pc = self.ports[port as usize]
            .classes
            .as_deref_mut()
            .expect("PFC ports have classes");
        if let Some(f) = pc.pfc_sender.refresh(now) {
            self.send_pfc(port, f);
        }
    }

    /// A PFC frame's entry for `class` takes effect at `port`'s transmitter.
    #[inline(never)]
    pub(super) fn pfc_rx(&mut self, port: u32, class: u8, quanta: u16) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        let (rate, node) = (p.rate, p.node);
        let effect = p
            .pfc_received(now, &PfcFrame::one(class, quanta), rate)
            .get(class);
        self.pfc_log(port, node, class, quanta, PfcDirection::Received);
        match effect {
            Some(PauseEffect::HoldUntil(t, generation)) => {
                self.events.schedule(
                    t,
                    Event::PfcExpire {
                        port,
                        class,
                        generation,
                    },
                );
                self.watch_element(port * 8 + class as u32);
            }
            Some(PauseEffect::Resume) => self.try_start(port),
            None => {}
        }
    }

    /// The pause timer of `class` set with `generation` ran out.
    #[inline(never)]
    pub(super) fn pfc_expire(&mut self, port: u32, class: u8, generation: u32) {
        let now = self.now;
        if self.ports[port as usize].pfc_expired(class, generation, now) {
            self.try_start(port);
        }
    }

    /// One line of the PFC event table, while it has room.
    #[inline(never)]
    fn pfc_log(&mut self, port: u32, node: u32, class: u8, quanta: u16, direction: PfcDirection) {
        if self.pfc_events.len() < self.pfc_events_limit {
            self.pfc_events.push(PfcRecord {
                time: self.now,
                node,
                port,
                class,
                quanta,
                direction,
            });
        } else {
            self.pfc_events_omitted += 1;
        }
    }
}

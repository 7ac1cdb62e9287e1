//! PAUSE and PFC watchdog: a transmitter (or, with PFC, one class of it)
//! paused without a break for longer than a threshold (a pause storm, or a
//! slow receiver), and a cycle of such — each switch on the cycle waits for
//! the next to drain, which waits for it: the cyclic buffer dependency of a
//! deadlock. The watchdog sees "ports" through `PausedPorts`; with PFC the
//! engine numbers each (port, class) as one.
//!
//! The checks run when a PAUSE frame takes effect (a held port is
//! refreshed every half pause time) and once more at the end of the run,
//! so they add no events. A long pause is noted at once (its port is the
//! receiver's own); the search for its cycle, which follows other
//! switches' ports, runs at the end of the run's window (docs/model.md).

use crate::units::Time;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WatchdogSpec {
    /// A port paused for longer than this, without a break, is reported.
    pub threshold: Time,
    /// Stop the run at the first deadlock (a cycle of long-paused ports).
    pub stop_on_deadlock: bool,
}

/// A transmitter paused for longer than the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongPause {
    pub port: u32,
    pub since: Time,
    pub noticed: Time,
}

/// A cycle of long-paused ports, in order along the cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deadlock {
    pub ports: Vec<u32>,
    pub noticed: Time,
}

/// What the watchdog needs to know of the network.
pub trait PausedPorts {
    /// `Some(since)` if the transmitter of `port` is paused, since then.
    fn paused_since(&self, port: u32) -> Option<Time>;
    /// The `i`-th port of the node at the other end of `port`'s link
    /// (with PFC: in the same class), `None` past the last.
    fn peer_port(&self, port: u32, i: usize) -> Option<u32>;
}

#[derive(Debug, Default)]
pub struct Watchdog {
    pub long_pauses: Vec<LongPause>,
    pub deadlocks: Vec<Deadlock>,
    /// Per port: the start of the pause episode already reported.
    reported: Vec<Option<Time>>,
}

impl Watchdog {
    pub fn new(ports: usize) -> Watchdog {
        Watchdog {
            reported: vec![None; ports],
            ..Watchdog::default()
        }
    }

    /// Take what another partition of a split run reported of `port`.
    pub fn take_reported(&mut self, o: &Watchdog, port: usize) {
        if let (Some(a), Some(b)) = (self.reported.get_mut(port), o.reported.get(port)) {
            *a = *b;
        }
    }

    /// Order the reports as one run gives them whichever way it was split:
    /// by the time they were noticed.
    pub fn sort(&mut self) {
        self.long_pauses.sort_by_key(|l| (l.noticed, l.port));
        self.deadlocks
            .sort_by(|a, b| (a.noticed, &a.ports).cmp(&(b.noticed, &b.ports)));
    }

    /// Check `port` at `now`: true if it has been paused for longer than
    /// the threshold in a pause episode not yet reported (now reported),
    /// whose cycle search (`search`) is then due.
    pub fn check(
        &mut self,
        spec: &WatchdogSpec,
        net: &impl PausedPorts,
        port: u32,
        now: Time,
    ) -> bool {
        let Some(since) = long_paused(spec, net, port, now) else {
            return false;
        };
        if self.reported[port as usize] == Some(since) {
            return false;
        }
        self.reported[port as usize] = Some(since);
        self.long_pauses.push(LongPause {
            port,
            since,
            noticed: now,
        });
        true
    }

    /// Look for a cycle of ports paused for longer than the threshold at
    /// `noticed` through `port`, in the network as `net` shows it (at the
    /// end of the window of `noticed`: a port on the cycle is paused then
    /// since before `noticed`). True if this found a new deadlock.
    pub fn search(
        &mut self,
        spec: &WatchdogSpec,
        net: &impl PausedPorts,
        port: u32,
        noticed: Time,
    ) -> bool {
        let Some(mut ports) = paused_cycle(spec, net, port, noticed) else {
            return false;
        };
        // Store cycles from their smallest port, so that one seen from
        // another of its ports is recognised.
        let first = (0..ports.len()).min_by_key(|&i| ports[i]).unwrap_or(0);
        ports.rotate_left(first);
        if self.deadlocks.iter().any(|d| d.ports == ports) {
            return false;
        }
        self.deadlocks.push(Deadlock { ports, noticed });
        true
    }
}

fn long_paused(spec: &WatchdogSpec, net: &impl PausedPorts, port: u32, now: Time) -> Option<Time> {
    net.paused_since(port)
        .filter(|&since| now.saturating_sub(since) >= spec.threshold)
}

/// A cycle of long-paused ports through `start`: from a paused port to a
/// long-paused port of the node it is paused by, and so on back to
/// `start`. Depth-first, ports in index order, so the answer is
/// deterministic.
pub fn paused_cycle(
    spec: &WatchdogSpec,
    net: &impl PausedPorts,
    start: u32,
    now: Time,
) -> Option<Vec<u32>> {
    let mut path = vec![start];
    let mut next = vec![0usize];
    while let Some(&at) = path.last() {
        let i = next.last_mut().expect("one cursor per port on the path");
        let Some(p) = net.peer_port(at, *i) else {
            path.pop();
            next.pop();
            continue;
        };
        *i += 1;
        if long_paused(spec, net, p, now).is_none() {
            continue;
        }
        if p == start {
            return Some(path);
        }
        if !path.contains(&p) {
            path.push(p);
            next.push(0);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports by node: node n owns ports `nodes[n]`; `peer_node[p]` is the
    /// node at the other end of port p.
    struct Net {
        nodes: Vec<Vec<u32>>,
        peer_node: Vec<usize>,
        paused: Vec<Option<Time>>,
    }

    impl PausedPorts for Net {
        fn paused_since(&self, port: u32) -> Option<Time> {
            self.paused[port as usize]
        }
        fn peer_port(&self, port: u32, i: usize) -> Option<u32> {
            self.nodes[self.peer_node[port as usize]].get(i).copied()
        }
    }

    /// Three switches in a ring: node n has port 2n toward n+1 and port
    /// 2n+1 toward n-1.
    fn ring(paused: &[u32]) -> Net {
        let mut net = Net {
            nodes: (0..3).map(|n| vec![2 * n, 2 * n + 1]).collect(),
            peer_node: (0..6)
                .map(|p| {
                    if p % 2 == 0 {
                        (p / 2 + 1) % 3
                    } else {
                        (p / 2 + 2) % 3
                    }
                })
                .collect(),
            paused: vec![None; 6],
        };
        for &p in paused {
            net.paused[p as usize] = Some(Time::ZERO);
        }
        net
    }

    const SPEC: WatchdogSpec = WatchdogSpec {
        threshold: Time::from_ms(10),
        stop_on_deadlock: false,
    };

    #[test]
    fn a_ring_of_paused_ports_is_a_deadlock() {
        let net = ring(&[0, 2, 4]);
        assert_eq!(
            paused_cycle(&SPEC, &net, 2, Time::from_ms(20)),
            Some(vec![2, 4, 0])
        );
        let mut w = Watchdog::new(6);
        assert!(w.check(&SPEC, &net, 2, Time::from_ms(20)));
        assert!(w.search(&SPEC, &net, 2, Time::from_ms(20)));
        // The same cycle seen from another port is not new; the same
        // episode of a port is reported once.
        assert!(w.check(&SPEC, &net, 4, Time::from_ms(21)));
        assert!(!w.search(&SPEC, &net, 4, Time::from_ms(21)));
        assert!(!w.check(&SPEC, &net, 2, Time::from_ms(22)));
        assert_eq!(w.deadlocks.len(), 1);
        assert_eq!(w.deadlocks[0].noticed, Time::from_ms(20));
        assert_eq!(w.deadlocks[0].ports, vec![0, 2, 4]);
        assert_eq!(w.long_pauses.len(), 2);
    }

    #[test]
    fn a_broken_ring_or_a_short_pause_is_not() {
        let net = ring(&[0, 2]);
        assert_eq!(paused_cycle(&SPEC, &net, 0, Time::from_ms(20)), None);
        let mut w = Watchdog::new(6);
        assert!(w.check(&SPEC, &net, 0, Time::from_ms(20)));
        assert!(!w.search(&SPEC, &net, 0, Time::from_ms(20)));
        assert_eq!(w.long_pauses.len(), 1);
        // Paused for 9 ms only: nothing to report.
        let net = ring(&[0, 2, 4]);
        let mut w = Watchdog::new(6);
        assert!(!w.check(&SPEC, &net, 0, Time::from_ms(9)));
        assert!(w.long_pauses.is_empty());
    }
}

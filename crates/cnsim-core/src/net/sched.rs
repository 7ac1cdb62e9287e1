//! The per-class scheduler of an output port: which traffic class sends the
//! next frame. Strict priority, deficit-weighted round robin (DWRR), or
//! strict classes above DWRR ones.
//!
//! The scheduler sees the queues through `Classes`: each class's head
//! frame size and its DWRR state, which the port keeps beside the class's
//! queue (one cache line per class); and a mask of the classes PFC has
//! paused. It holds no frames and allocates nothing.

use super::mmu::CLASSES;
use crate::units::Bytes;

/// The largest DWRR quantum: a deficit (less than a frame of at most
/// 64 KiB, plus one quantum) then fits in 32 bits.
pub const MAX_QUANTUM: u64 = (u32::MAX - u16::MAX as u32) as u64;

/// How one class is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassSched {
    /// Before every weighted class; among strict classes the higher class
    /// number goes first (802.1Q's strict-priority selection: 7 highest).
    Strict,
    /// DWRR with this quantum (bytes of credit per round, at most
    /// `MAX_QUANTUM`). A quantum of at least the largest frame lets each
    /// visit send at least one frame.
    Weighted(Bytes),
}

/// An output port's scheduling, per class. All `Strict` is strict
/// priority, all `Weighted` is DWRR, a mix is strict classes on top of
/// DWRR ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SchedSpec {
    pub classes: [ClassSched; CLASSES],
}

impl SchedSpec {
    pub const fn strict() -> SchedSpec {
        SchedSpec {
            classes: [ClassSched::Strict; CLASSES],
        }
    }

    /// DWRR over every class with these quanta (bytes).
    pub fn dwrr(quanta: [u64; CLASSES]) -> SchedSpec {
        SchedSpec {
            classes: quanta.map(|q| ClassSched::Weighted(Bytes(q))),
        }
    }

    /// Why the spec cannot be used, if it cannot.
    pub fn validate(&self) -> Result<(), String> {
        match self
            .classes
            .iter()
            .position(|c| *c == ClassSched::Weighted(Bytes(0)))
        {
            Some(c) => Err(format!("class {c} has a zero DWRR quantum")),
            None => Ok(()),
        }
    }

    /// Each class's DWRR state at the start: its quantum and no deficit
    /// (a zero quantum for strict classes).
    pub fn dwrr_state(&self) -> [Dwrr; CLASSES] {
        self.classes.map(|class| match class {
            ClassSched::Strict => Dwrr::default(),
            ClassSched::Weighted(q) => {
                assert!(
                    q.0 > 0 && q.0 <= MAX_QUANTUM,
                    "a DWRR quantum of {q} (validated by the scenario)"
                );
                Dwrr {
                    quantum: q.0 as u32,
                    deficit: 0,
                }
            }
        })
    }
}

/// One class's DWRR state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dwrr {
    /// Bytes of credit per turn; 0 for strict classes.
    pub quantum: u32,
    /// Bytes the class may still send. A class whose queue empties loses
    /// it (DRR's rule: an empty queue leaves the round): the port sets it
    /// to 0 then.
    pub deficit: u32,
}

/// What the scheduler reads and writes of a port's classes.
pub trait Classes {
    /// The size of the head frame of `class`, if it has one.
    fn head(&self, class: u8) -> Option<u32>;
    /// The DWRR state of `class`.
    fn dwrr(&mut self, class: u8) -> &mut Dwrr;
}

/// An output port's scheduler state: which classes are strict, and whose
/// turn it is in DWRR. Three bytes, beside the port's other per-frame
/// state.
#[derive(Debug, Clone, Copy)]
pub struct Scheduler {
    /// Bit c: class c is strict.
    strict: u8,
    /// The weighted class whose turn it is (classes are visited 0, 1, …, 7).
    current: u8,
    /// `current` has had its quantum for this turn.
    credited: bool,
}

impl Scheduler {
    pub fn new(spec: &SchedSpec) -> Scheduler {
        let strict = (0..CLASSES)
            .filter(|&c| spec.classes[c] == ClassSched::Strict)
            .fold(0, |m, c| m | (1 << c));
        Scheduler {
            strict,
            current: 0,
            credited: false,
        }
    }

    /// The class whose head frame goes next, if any may go; bit c of
    /// `blocked` set means class c is paused by PFC. The caller sends the
    /// head of the returned class.
    ///
    /// Strict classes first, highest number first. Otherwise DWRR: each
    /// weighted class in turn gets its quantum added to its deficit and
    /// sends head frames while they fit in it; its turn ends when the head
    /// no longer fits (the deficit carries to its next turn), or when it
    /// has nothing to send.
    ///
    /// A class with nothing queued loses its deficit (as DRR removes an
    /// empty queue from its active list), checked at every pick. A class
    /// paused by PFC is still backlogged, so it keeps its deficit and its
    /// place in the cycle: the round passes over it without crediting it,
    /// so that a pause neither forfeits its unused credit nor lets credit
    /// pile up while it cannot send.
    pub fn pick(&mut self, classes: &mut impl Classes, blocked: u8) -> Option<u8> {
        let mut backlogged = 0u8;
        for c in 0..CLASSES as u8 {
            match classes.head(c) {
                None => classes.dwrr(c).deficit = 0,
                Some(_) => backlogged |= 1 << c,
            }
        }
        self.pick_ready(backlogged, blocked, classes)
            .map(|(c, _)| c)
    }

    /// `pick` for a caller that knows which classes have frames
    /// (`backlogged`, bit c) and clears a class's deficit when its queue
    /// empties (DRR's own rule). Only the classes the round visits are
    /// read. The class picked comes with its head's size.
    #[inline]
    pub fn pick_ready(
        &mut self,
        backlogged: u8,
        blocked: u8,
        classes: &mut impl Classes,
    ) -> Option<(u8, u32)> {
        let head =
            |classes: &mut _, c| Classes::head(classes, c).expect("a backlogged class has a head");
        let ready = backlogged & !blocked;
        let strict = ready & self.strict;
        if strict != 0 {
            let c = 7 - strict.leading_zeros() as u8;
            return Some((c, head(classes, c)));
        }
        let weighted = ready & !self.strict;
        if weighted == 0 {
            return None;
        }
        if weighted & (weighted - 1) == 0 {
            // One weighted class can send (the usual case on a lightly
            // loaded port): the rounds come back to it alone, each with a
            // quantum, until its deficit covers its head. The state is the
            // one `pick_in_rounds` leaves, without its walk of the round.
            let c = weighted.trailing_zeros() as u8;
            let size = head(classes, c);
            let d = classes.dwrr(c);
            let mut deficit = d.deficit;
            if c != self.current || !self.credited {
                deficit += d.quantum;
            }
            while deficit < size {
                deficit += d.quantum;
            }
            d.deficit = deficit - size;
            self.current = c;
            self.credited = true;
            return Some((c, size));
        }
        self.pick_in_rounds(weighted, classes)
    }

    /// DWRR's pick among the weighted classes that can send (`weighted`,
    /// not empty), round by round from the current class.
    fn pick_in_rounds(&mut self, weighted: u8, classes: &mut impl Classes) -> Option<(u8, u32)> {
        let head =
            |classes: &mut _, c| Classes::head(classes, c).expect("a backlogged class has a head");
        // Some weighted class can send: every full cycle credits it a
        // quantum, so this ends. The turn passes straight to the next
        // ready class in cyclic order (the others would be passed over).
        loop {
            let c = self.current;
            if weighted & (1 << c) != 0 {
                let d = classes.dwrr(c);
                if !self.credited {
                    d.deficit += d.quantum;
                    self.credited = true;
                }
                // No credit left (the class has just spent it): the turn
                // ends without the head being read, as no frame is empty.
                let deficit = d.deficit;
                if deficit > 0 {
                    let size = head(classes, c);
                    if size <= deficit {
                        classes.dwrr(c).deficit = deficit - size;
                        return Some((c, size));
                    }
                }
            }
            let after = weighted & !(((2u16 << c) - 1) as u8);
            let next = if after != 0 { after } else { weighted };
            self.current = next.trailing_zeros() as u8;
            self.credited = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Eight class queues of frame sizes, with their DWRR state.
    struct Queues {
        q: [VecDeque<u32>; CLASSES],
        dwrr: [Dwrr; CLASSES],
    }

    impl Classes for Queues {
        fn head(&self, class: u8) -> Option<u32> {
            self.q[class as usize].front().copied()
        }
        fn dwrr(&mut self, class: u8) -> &mut Dwrr {
            &mut self.dwrr[class as usize]
        }
    }

    /// A scheduler for `spec` and empty queues.
    fn port(spec: &SchedSpec) -> (Scheduler, Queues) {
        let q = Queues {
            q: Default::default(),
            dwrr: spec.dwrr_state(),
        };
        (Scheduler::new(spec), q)
    }

    impl Queues {
        fn push(&mut self, class: u8, bytes: u32) {
            self.q[class as usize].push_back(bytes);
        }
        /// Pick and send one frame: its class and size.
        fn send(&mut self, s: &mut Scheduler, blocked: u8) -> Option<(u8, u32)> {
            let c = s.pick(self, blocked)?;
            Some((c, self.q[c as usize].pop_front().unwrap()))
        }
        fn deficit(&self, class: u8) -> u64 {
            self.dwrr[class as usize].deficit as u64
        }
    }

    #[test]
    fn strict_priority_serves_the_highest_class_first() {
        let (mut s, mut q) = port(&SchedSpec::strict());
        for c in [0, 3, 7, 5, 3] {
            q.push(c, 100);
        }
        let order: Vec<u8> = std::iter::from_fn(|| q.send(&mut s, 0).map(|x| x.0)).collect();
        assert_eq!(order, [7, 5, 3, 3, 0]);
        assert_eq!(s.pick(&mut q, 0), None);
    }

    #[test]
    fn a_paused_class_is_skipped_and_the_others_flow() {
        let (mut s, mut q) = port(&SchedSpec::strict());
        for c in [1, 3, 3] {
            q.push(c, 100);
        }
        let paused3 = 1 << 3;
        assert_eq!(q.send(&mut s, paused3), Some((1, 100)));
        assert_eq!(
            q.send(&mut s, paused3),
            None,
            "only the paused class is left"
        );
        assert_eq!(q.send(&mut s, 0), Some((3, 100)));

        // DWRR: a paused class neither sends nor gains credit.
        let (mut s, mut q) = port(&SchedSpec::dwrr([1500; CLASSES]));
        for _ in 0..4 {
            q.push(0, 1000);
            q.push(1, 1000);
        }
        for _ in 0..4 {
            assert_eq!(q.send(&mut s, 1 << 1).map(|x| x.0), Some(0));
        }
        assert_eq!(q.deficit(1), 0);
        assert_eq!(q.send(&mut s, 1 << 1), None);
        assert_eq!(q.send(&mut s, 0).map(|x| x.0), Some(1));
    }

    #[test]
    fn strict_classes_go_before_weighted_ones() {
        let mut spec = SchedSpec::dwrr([3000; CLASSES]);
        spec.classes[6] = ClassSched::Strict;
        let (mut s, mut q) = port(&spec);
        q.push(7, 1000);
        q.push(6, 1000);
        q.push(6, 1000);
        q.push(2, 1000);
        let order: Vec<u8> = std::iter::from_fn(|| q.send(&mut s, 0).map(|x| x.0)).collect();
        assert_eq!(order, [6, 6, 2, 7]);
        assert!(spec.validate().is_ok());
        spec.classes[1] = ClassSched::Weighted(Bytes(0));
        assert!(spec.validate().is_err());
    }

    #[test]
    fn dwrr_with_weights_1_2_5_gives_byte_shares_of_1_2_5_eighths() {
        let base = 1500;
        let weights = [1u64, 2, 5];
        let mut quanta = [base; CLASSES];
        quanta[..3].copy_from_slice(&weights.map(|w| w * base));
        let (mut s, mut q) = port(&SchedSpec::dwrr(quanta));
        // Mixed sizes from 64 to 1500 B, a different cycle per class.
        let sizes = [64u32, 1500, 576, 1500, 200, 1024, 1500, 1300, 90];
        let mut next = [0usize; 3];
        let mut sent = [0u64; 3];
        let mut rounds = 0;
        let mut last = None;
        for _ in 0..200_000 {
            // Keep every class backlogged.
            for c in 0..3 {
                while q.q[c].len() < 2 {
                    q.push(c as u8, sizes[(next[c] * (c + 2)) % sizes.len()]);
                    next[c] += 1;
                }
            }
            let (c, bytes) = q.send(&mut s, 0).unwrap();
            // A round starts when class 0 takes its turn. There each class
            // has sent its quanta of the rounds done less its deficit, so
            // within one frame of its exact entitlement.
            if c == 0 && last != Some(0) {
                let done = rounds;
                rounds += 1;
                for k in 0..3 {
                    let entitled = done * quanta[k];
                    assert!(
                        sent[k] <= entitled && sent[k] + 1500 > entitled,
                        "round {rounds}, class {k}: {sent:?}"
                    );
                    if k > 0 {
                        assert_eq!(sent[k], entitled - q.deficit(k as u8));
                    }
                }
            }
            sent[c as usize] += bytes as u64;
            last = Some(c);
        }
        assert!(rounds > 10_000);
        let total: u64 = sent.iter().sum();
        for k in 0..3 {
            let share = sent[k] as f64 / total as f64;
            assert!(
                (share - weights[k] as f64 / 8.0).abs() < 1e-3,
                "class {k}: {share}"
            );
        }
    }

    /// The pick of a lone weighted class leaves what the walk of the
    /// rounds would: the same class, head and deficits, and the same
    /// scheduler state, whatever the history (sizes, quanta, pauses,
    /// classes emptying).
    mod lone_class {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Push(u8, u32),
            Send(u8),
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                (0u8..4, 64u32..=9000).prop_map(|(c, b)| Op::Push(c, b)),
                (0u8..16).prop_map(Op::Send),
            ]
        }

        /// `pick` as before the lone-class path: the walk of the rounds
        /// for any weighted class.
        fn pick_walking(s: &mut Scheduler, q: &mut Queues, blocked: u8) -> Option<(u8, u32)> {
            let mut backlogged = 0u8;
            for c in 0..CLASSES as u8 {
                match q.head(c) {
                    None => q.dwrr(c).deficit = 0,
                    Some(_) => backlogged |= 1 << c,
                }
            }
            let ready = backlogged & !blocked;
            if ready & s.strict != 0 {
                return s.pick_ready(backlogged, blocked, q);
            }
            let weighted = ready & !s.strict;
            if weighted == 0 {
                return None;
            }
            s.pick_in_rounds(weighted, q)
        }

        proptest! {
            #[test]
            fn agrees_with_the_walk_of_the_rounds(
                quanta in proptest::array::uniform4(500u64..=10_000),
                strict3 in any::<bool>(),
                ops in proptest::collection::vec(op(), 1..300),
            ) {
                let mut spec = SchedSpec::dwrr([1500; CLASSES]);
                for (class, q) in spec.classes.iter_mut().zip(quanta) {
                    *class = ClassSched::Weighted(Bytes(q));
                }
                if strict3 {
                    spec.classes[3] = ClassSched::Strict;
                }
                let (mut s, mut q) = port(&spec);
                let (mut s_ref, mut q_ref) = port(&spec);
                for op in ops {
                    match op {
                        Op::Push(c, b) => {
                            q.push(c, b);
                            q_ref.push(c, b);
                        }
                        Op::Send(blocked) => {
                            let got = s.pick(&mut q, blocked).map(|c| {
                                (c, q.q[c as usize].pop_front().unwrap())
                            });
                            let want = pick_walking(&mut s_ref, &mut q_ref, blocked).map(|(c, _)| {
                                (c, q_ref.q[c as usize].pop_front().unwrap())
                            });
                            prop_assert_eq!(got, want);
                            prop_assert_eq!(q.dwrr, q_ref.dwrr);
                            prop_assert_eq!(
                                (s.current, s.credited),
                                (s_ref.current, s_ref.credited)
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_class_that_empties_loses_its_deficit() {
        let (mut s, mut q) = port(&SchedSpec::dwrr([3000; CLASSES]));
        q.push(1, 2000);
        q.push(2, 1000);
        assert_eq!(q.send(&mut s, 0), Some((1, 2000)));
        assert_eq!(q.deficit(1), 1000);
        // Class 1 is empty at the next pick: its 1000 B of credit go.
        assert_eq!(q.send(&mut s, 0), Some((2, 1000)));
        assert_eq!(q.deficit(1), 0);
        // A backlogged class whose head does not fit keeps its deficit.
        q.push(3, 2000);
        q.push(3, 2000);
        q.push(4, 500);
        assert_eq!(q.send(&mut s, 0), Some((3, 2000)));
        assert_eq!(q.send(&mut s, 0), Some((4, 500)));
        assert_eq!(q.deficit(3), 1000);
    }
}

//! A first-in first-out line of `Copy` values on a ring of a power-of-two
//! size: the event queue's lanes and the frames beside the arrivals' lane,
//! which take and give one value per event.
//!
//! `VecDeque` does the same, but its position arithmetic wraps by
//! comparison (any capacity is allowed) and its `push_back` is out of line;
//! here a mask wraps, and only growth (a doubling, which a run does a few
//! times at its start) leaves the inline path (docs/performance.md, "Lanes
//! on rings of a power-of-two size").

/// The ring is allocated at the first push, filled with copies of that
/// value (no slot is ever uninitialised, so no `unsafe`).
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    /// Empty, or of a power-of-two length.
    ring: Vec<T>,
    /// Position of the first value.
    head: usize,
    len: usize,
}

/// Length of a line's first ring.
const FIRST_RING: usize = 16;

impl<T: Copy> Default for Fifo<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Fifo<T> {
    pub const fn new() -> Self {
        Fifo {
            ring: Vec::new(),
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.ring.len().wrapping_sub(1)
    }

    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        (self.head + i) & self.mask()
    }

    #[inline(always)]
    pub fn push_back(&mut self, value: T) {
        if self.len == self.ring.len() {
            self.grow(value);
        }
        let at = self.at(self.len);
        self.ring[at] = value;
        self.len += 1;
    }

    /// The first value, removed.
    #[inline(always)]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.ring[self.head];
        self.head = self.at(1);
        self.len -= 1;
        Some(value)
    }

    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        (self.len != 0).then(|| &self.ring[self.head])
    }

    /// The values, first to last.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len()).map(move |i| &self.ring[self.at(i)])
    }

    /// A ring twice as long (or the first), with the values in order from
    /// its front; `value` fills the new slots.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, value: T) {
        let size = if self.ring.is_empty() {
            FIRST_RING
        } else {
            2 * self.ring.len()
        };
        let mut ring = vec![value; size];
        for (slot, v) in ring.iter_mut().zip(self.iter()) {
            *slot = *v;
        }
        self.ring = ring;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Random pushes and pops through several growths and wraps: the same
    /// values in the same order as `VecDeque`, the same `front` and `len`
    /// at every step, and the same `iter` every 997 steps.
    #[test]
    fn behaves_as_a_vecdeque() {
        use rand::RngExt;
        let mut rng = crate::engine::rng::stream(11, 0);
        for round in 0..4 {
            let mut fifo = Fifo::new();
            let mut reference = VecDeque::new();
            for i in 0..20_000u32 {
                // Pushes outnumber pops early (growth), then balance (wraps).
                let push_odds = if i < 5_000 { 3 } else { 2 };
                if rng.random_range(0..4) < push_odds {
                    fifo.push_back(i);
                    reference.push_back(i);
                } else {
                    assert_eq!(fifo.pop_front(), reference.pop_front());
                }
                assert_eq!(fifo.len(), reference.len());
                assert_eq!(fifo.is_empty(), reference.is_empty());
                assert_eq!(fifo.front(), reference.front());
                if i % 997 == 0 {
                    assert!(fifo.iter().eq(reference.iter()), "round {round}");
                }
            }
            while let Some(v) = reference.pop_front() {
                assert_eq!(fifo.pop_front(), Some(v));
            }
            assert_eq!(fifo.pop_front(), None);
        }
    }

    /// Growth keeps the order across a wrapped ring.
    #[test]
    fn growth_unwraps_the_ring() {
        let mut fifo = Fifo::new();
        for v in 0..FIRST_RING {
            fifo.push_back(v);
        }
        fifo.pop_front();
        fifo.pop_front();
        for v in FIRST_RING..FIRST_RING + 3 {
            fifo.push_back(v);
        }
        assert_eq!(fifo.ring.len(), 2 * FIRST_RING);
        assert_eq!(fifo.head, 0);
        assert!(fifo.iter().copied().eq(2..FIRST_RING + 3));
    }
}

//! A first-in first-out line of `Copy` values on a ring of a power-of-two
//! size: the event queue's lanes and the frames beside the arrivals' lane,
//! which take and give one value per event, and the output queues of ports
//! and rate limiters. In 32 bytes, as a `VecDeque`.
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
    ring: Box<[T]>,
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
    pub fn new() -> Self {
        Fifo {
            ring: Box::new([]),
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Values the ring holds before it grows: 0 before the first push.
    pub fn capacity(&self) -> usize {
        self.ring.len()
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

    /// `pop_front`, and a line it empties starts again at the front of
    /// its ring. A ring keeps the length of the longest line it has held,
    /// and a short line walking round it touches a cache line that has left
    /// the caches every two values; rewound when empty, it keeps to the
    /// ring's first lines. For queues that an incast fills and that then
    /// run short (docs/performance.md, "Queues that start again at their
    /// buffer's front").
    #[inline(always)]
    pub fn pop_front_rewound(&mut self) -> Option<T> {
        let value = self.pop_front()?;
        // Without a branch: whether a queue empties follows its traffic.
        self.head &= (self.len != 0) as usize * usize::MAX;
        Some(value)
    }

    #[inline(always)]
    pub fn front(&self) -> Option<&T> {
        (self.len != 0).then(|| &self.ring[self.head])
    }

    /// The last value, to change in place.
    #[inline]
    pub fn back_mut(&mut self) -> Option<&mut T> {
        let i = self.len.checked_sub(1)?;
        let at = self.at(i);
        Some(&mut self.ring[at])
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
        let mut ring = vec![value; size].into_boxed_slice();
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

    /// Random pushes and pops through several growths and wraps (the odd
    /// rounds rewinding the ring when it empties, and changing the last
    /// value now and then): the same values in the same order as
    /// `VecDeque`, the same `front` and `len` at every step, and the same
    /// `iter` every 997 steps.
    #[test]
    fn behaves_as_a_vecdeque() {
        use rand::RngExt;
        let mut rng = crate::engine::rng::stream(11, 0);
        for round in 0..4 {
            let rewind = round % 2 == 1;
            let mut fifo = Fifo::new();
            let mut reference = VecDeque::new();
            for i in 0..20_000u32 {
                // Pushes outnumber pops early (growth), then balance (wraps).
                let push_odds = if i < 5_000 { 3 } else { 2 };
                if rng.random_range(0..4) < push_odds {
                    fifo.push_back(i);
                    reference.push_back(i);
                } else if rewind {
                    assert_eq!(fifo.pop_front_rewound(), reference.pop_front());
                } else {
                    assert_eq!(fifo.pop_front(), reference.pop_front());
                }
                if rewind && i % 5 == 0 {
                    if let Some(v) = fifo.back_mut() {
                        *v += 1;
                    }
                    if let Some(v) = reference.back_mut() {
                        *v += 1;
                    }
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

    /// A line that `pop_front_rewound` empties starts again at its ring's
    /// front; one that still holds values stays where it is, and
    /// `pop_front` leaves an emptied line where it was.
    #[test]
    fn an_emptied_line_starts_again_at_its_rings_front() {
        let mut fifo = Fifo::new();
        for v in 0..6 {
            fifo.push_back(v);
        }
        for _ in 0..5 {
            fifo.pop_front_rewound();
        }
        assert_eq!(fifo.head, 5);
        assert_eq!(fifo.pop_front_rewound(), Some(5));
        assert_eq!((fifo.head, fifo.len()), (0, 0));
        assert_eq!(fifo.pop_front_rewound(), None);
        fifo.push_back(7);
        fifo.push_back(8);
        assert_eq!(fifo.pop_front(), Some(7));
        assert_eq!(fifo.pop_front(), Some(8));
        assert_eq!((fifo.head, fifo.len()), (2, 0));
    }
}

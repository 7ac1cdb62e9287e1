//! The event queue: one binary heap ordered by (time, class, sequence number).
//!
//! Events at the same picosecond run by class first (so that, for example, a
//! departure frees buffer space before a simultaneous arrival is admitted),
//! then in the order they were scheduled: ties are deterministic.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Events say which class they belong to; lower classes run first on ties.
pub trait EventClass {
    fn class(&self) -> u8;
}

/// A pending event. The heap moves these around, so they are kept small:
/// events carry indices, never frames (see `sim`), and the ordering is one
/// 128-bit comparison of (time, class, sequence number).
struct Entry<E> {
    time: Time,
    /// Class in the top 8 bits, sequence number below.
    order: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> u128 {
        ((self.time.0 as u128) << 64) | self.order as u128
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<E> Eq for Entry<E> {}
// The heap's sift loops use `<=`; spelling the comparisons out keeps them
// single 128-bit comparisons instead of three-way `cmp`s.
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline]
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }
    #[inline]
    fn le(&self, other: &Self) -> bool {
        other.key() <= self.key()
    }
    #[inline]
    fn gt(&self, other: &Self) -> bool {
        other.key() > self.key()
    }
    #[inline]
    fn ge(&self, other: &Self) -> bool {
        other.key() >= self.key()
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// Sequence numbers use the low 56 bits of `Entry::order`.
const SEQ_BITS: u32 = 56;

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    /// The top entry was handed out by `pop` and no longer counts. Most
    /// handlers schedule at least one event, and the first one overwrites
    /// the top in place: one sift instead of a pop's and a push's. Any other
    /// access removes the taken entry first.
    taken: bool,
}

impl<E: EventClass + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E: EventClass + Copy> EventQueue<E> {
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(cap),
            next_seq: 0,
            taken: false,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        debug_assert!(seq < 1 << SEQ_BITS, "2^56 events");
        self.next_seq += 1;
        let entry = Entry {
            time,
            order: (u64::from(event.class()) << SEQ_BITS) | seq,
            event,
        };
        if self.taken {
            self.taken = false;
            *self
                .heap
                .peek_mut()
                .expect("the taken entry is still there") = entry;
        } else {
            self.heap.push(entry);
        }
    }

    /// The earliest event, removed from the queue.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.settle();
        let top = self.heap.peek()?;
        self.taken = true;
        Some((top.time, top.event))
    }

    #[inline]
    fn settle(&mut self) {
        if self.taken {
            self.taken = false;
            self.heap.pop();
        }
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        self.settle();
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.taken)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl EventClass for char {
        fn class(&self) -> u8 {
            u8::from(self.is_uppercase())
        }
    }

    #[test]
    fn lower_classes_run_first_on_ties() {
        let mut q = EventQueue::default();
        q.schedule(Time(10), 'B');
        q.schedule(Time(10), 'a');
        q.schedule(Time(5), 'C');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['C', 'a', 'B']);
    }

    #[test]
    fn an_event_scheduled_after_a_pop_takes_the_popped_place() {
        let mut q = EventQueue::default();
        for (t, c) in [(10, 'a'), (20, 'b'), (30, 'c')] {
            q.schedule(Time(t), c);
        }
        assert_eq!(q.pop(), Some((Time(10), 'a')));
        assert_eq!(q.len(), 2);
        // Overwrites the popped entry and sifts down past 'b' and 'c'.
        q.schedule(Time(40), 'd');
        q.schedule(Time(15), 'e');
        assert_eq!(q.len(), 4);
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['e', 'b', 'c', 'd']);
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn pops_in_time_order_and_fifo_on_ties() {
        let mut q = EventQueue::default();
        q.schedule(Time(30), 'c');
        q.schedule(Time(10), 'a');
        q.schedule(Time(20), 'b');
        q.schedule(Time(10), 'z');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'z', 'b', 'c']);
    }
}

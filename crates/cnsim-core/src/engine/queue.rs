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

struct Entry<E> {
    time: Time,
    class: u8,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.class == other.class && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.class.cmp(&self.class))
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E: EventClass> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E: EventClass> EventQueue<E> {
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(cap),
            next_seq: 0,
        }
    }

    pub fn schedule(&mut self, time: Time, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            time,
            class: event.class(),
            seq,
            event,
        });
    }

    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Pending events, in no particular order (for end-of-run accounting).
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.heap.iter().map(|e| &e.event)
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

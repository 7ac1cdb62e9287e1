//! The event queue, ordered by (time, tie key).
//!
//! Events at the same picosecond run in the order of their tie key: first
//! their class (so that, for example, a departure frees buffer space before
//! a simultaneous arrival is admitted), then what the event is and where it
//! happens (its kind and element), and last the order in which they were
//! scheduled. The first three do not depend on when or by whom the event
//! was scheduled; the last only decides between events of the same kind at
//! the same element, which one part of the network schedules in one order.
//! So the order of simultaneous events is the same however the work of a
//! run is divided (`docs/parallel.md`).
//!
//! Storage is a 4-ary heap (`dary_heap`: half a binary heap's depth, the
//! children of a node on two cache lines; study F's fabric keeps thousands
//! of events pending) plus up to five FIFO lanes. Many events are scheduled a
//! fixed delay after the current time (a frame's arrival one link delay
//! after it left, a transmitter's completion one frame time after it
//! started), so their keys mostly arrive in increasing order; such an event
//! is appended to the first of its lanes whose last key is not above its
//! own, which then stays sorted, and costs no sift. An event that fits none
//! goes to the heap instead. Where frame times differ (ACKs and data, links
//! of several rates), the completions of each frame time form their own
//! increasing sequence, so such a run opens two more lanes for them
//! (`open_all_lanes`); a run with links of several rates (four frame
//! times or more) whose completions still go to the heap often opens a
//! fifth and places each completion in the lane of its class of frame
//! times, one class per factor of four (`offer_placement_by_delay`). Such
//! runs also keep their far events (timeouts that seldom run out,
//! `EventKey::far`) out of the heap but the earliest: a RoCE flow's
//! retransmission timeout is 64 ms away and outlives most flows, and tens
//! of thousands of them in study F's heap made every sift there walk past
//! them. `pop` takes the least of the heap's top and the lane heads, so
//! the order is exactly the key order whatever goes where.

use super::fifo::Fifo;
use crate::units::Time;
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// Bits of the tie key below the event's own: the order scheduled.
pub const SEQ_BITS: u32 = 24;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// What an event says of its place among events at the same picosecond.
pub trait EventKey {
    /// The event's part of its tie key, lower first: any value whose low
    /// `SEQ_BITS` are zero. The queue adds the order of scheduling there,
    /// modulo 2^24: it decides between events with equal keys, which are
    /// scheduled at the same picosecond (a fixed delay after it) and so
    /// never 2^24 schedulings apart.
    /// Its time is given: a key may depend on it.
    fn tie(&self, time: Time) -> u64;

    /// The FIFO lanes worth trying for this event, in order (none by
    /// default): lanes whose events are usually scheduled in time order.
    /// The event goes to the first whose last key is not above its own.
    /// The first lane must be 0 or 1: while lanes 2 and 3 are closed, the
    /// first is the only one tried.
    fn lanes(&self) -> &'static [usize] {
        &[]
    }

    /// Whether the event is a far one: a timeout that waits long and seldom
    /// runs out (a retransmission timeout, which outlives most flows). With
    /// every lane open, far events but the earliest wait in a heap of their
    /// own, where the sifts of the many near events do not walk past them.
    fn far(&self) -> bool {
        false
    }
}

/// Number of FIFO lanes: 0 and 1 always open, 2 and 3 on request
/// (`EventQueue::open_all_lanes`), 4 with placement by delay
/// (`EventQueue::switch_placement`, once offered).
pub const LANES: usize = 5;

/// The lanes that events placed by their delay take.
const DELAY_LANES: [usize; 4] = [0, 2, 3, 4];

/// No lane holds the delays of this class (`EventQueue::class_lane`).
const NO_LANE: u8 = u8::MAX;

/// The class of a delay placed by delay: its pair of octaves (delays four
/// times apart or more are in different classes).
#[inline]
fn delay_class(delay: Time) -> usize {
    ((63 - (delay.0 | 1).leading_zeros()) / 2) as usize
}

/// A pending event. The heap moves these around, so they are kept small:
/// events carry indices, never frames (see `sim`), and the ordering is one
/// 128-bit comparison of (time, tie key).
#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    /// The event's tie key with the order of scheduling in its low bits.
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
    // Reversed: the heap is a max-heap and we want the earliest event first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

pub struct EventQueue<E> {
    heap: QuaternaryHeap<Entry<E>>,
    /// Sorted by key; `last[l]` is the key of the latest entry appended,
    /// `head[l]` the key of the first (`u128::MAX` when empty: no event's
    /// key is that large, see `schedule`).
    lanes: [Fifo<Entry<E>>; LANES],
    last: [u128; LANES],
    head: [u128; LANES],
    /// Lanes 2 and 3 take events (`open_all_lanes`); else they stay
    /// empty and a pop compares the heads of lanes 0 and 1 only.
    all_open: bool,
    /// Lane 4 is open too, and `schedule_after` places an event by its
    /// delay (`switch_placement`); else lane 4 stays
    /// empty and a pop does not look at it.
    by_delay: bool,
    /// With placement by delay: the lane of `DELAY_LANES` that holds each
    /// class of delays (`delay_class`), if any, and the class each of those
    /// lanes holds. A lane holds one class at a time and passes to another
    /// only while empty.
    class_lane: [u8; 32],
    lane_class: [u8; LANES],
    /// Placement by delay may start (`offer_placement_by_delay`), and the
    /// completions scheduled with `schedule_after` since the last look
    /// (`switch_placement`) and how many of them went to the heap.
    may_place_by_delay: bool,
    after_scheduled: u32,
    after_spilled: u32,
    next_seq: u64,
    /// Far events (`EventKey::far`) of a run with every lane open, all
    /// after the far event in the heap, `promoted` (its key; `u128::MAX`
    /// when there is none, and then this heap is empty): whenever one of
    /// these is the earliest event, the promoted one has come out of the
    /// heap, which put the earliest of these in its place.
    far: QuaternaryHeap<Entry<E>>,
    promoted: u128,
    /// The heap's top entry was handed out by `pop` and no longer counts.
    /// Most handlers schedule at least one event, and the first one that
    /// goes to the heap overwrites the top in place: one sift instead of a
    /// pop's and a push's. Any other access removes the taken entry first.
    taken: bool,
}

impl<E: EventKey + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::with_capacity(1024)
    }
}

impl<E: EventKey + Copy> EventQueue<E> {
    pub fn with_capacity(cap: usize) -> Self {
        EventQueue {
            heap: QuaternaryHeap::with_capacity(cap),
            lanes: std::array::from_fn(|_| Fifo::new()),
            last: [0; LANES],
            head: [u128::MAX; LANES],
            all_open: false,
            by_delay: false,
            class_lane: [NO_LANE; 32],
            lane_class: [NO_LANE; LANES],
            may_place_by_delay: false,
            after_scheduled: 0,
            after_spilled: 0,
            next_seq: 0,
            far: QuaternaryHeap::new(),
            promoted: u128::MAX,
            taken: false,
        }
    }

    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: E) {
        self.schedule_or(time, event, |_| {});
    }

    /// `schedule`, telling whether one of the event's lanes took it; for
    /// the heap, the event is first rewritten by `on_heap`, which must
    /// leave its tie key as it was. (A frame's arrival keeps its frame in
    /// a line beside its lane when the lane takes it, and in a slab
    /// otherwise: the event then names the slot.)
    #[inline(always)]
    pub fn schedule_or(&mut self, time: Time, event: E, on_heap: impl FnOnce(&mut E)) -> bool {
        let entry = self.entry(time, event);
        let tie = entry.order & !SEQ_MASK;
        let key = entry.key();
        // With lanes 2 and 3 closed, an event's first lane is its only one
        // (events name lanes 2 and 3 only after their first).
        let lanes = event.lanes();
        debug_assert!(
            lanes.first().is_none_or(|&l| l < 2),
            "an event's first lane is always open"
        );
        let tried = if self.all_open {
            lanes.len()
        } else {
            lanes.len().min(1)
        };
        for &l in &lanes[..tried] {
            if key >= self.last[l] {
                self.push_lane(l, key, entry);
                return true;
            }
        }
        let mut entry = entry;
        on_heap(&mut entry.event);
        debug_assert_eq!(
            entry.event.tie(time) & !SEQ_MASK,
            tie,
            "on_heap keeps the tie key"
        );
        self.put_in_heap(entry);
        false
    }

    /// `schedule` of an event `delay` after `now`, telling whether a lane
    /// took it. With placement by delay (`switch_placement`) it tries only
    /// the lane that holds its class of delays, or an empty one that then
    /// does, else its lanes as usual. (For a transmission's completion,
    /// whose delay is its frame time.)
    #[inline(always)]
    pub fn schedule_after(&mut self, now: Time, delay: Time, event: E) -> bool {
        if !self.by_delay {
            let laned = self.schedule_or(now + delay, event, |_| {});
            self.after_scheduled = self.after_scheduled.wrapping_add(1);
            self.after_spilled = self.after_spilled.wrapping_add(u32::from(!laned));
            return laned;
        }
        let entry = self.entry(now + delay, event);
        let key = entry.key();
        let class = delay_class(delay);
        let mut l = usize::from(self.class_lane[class]);
        if l == usize::from(NO_LANE) || usize::from(self.lane_class[l]) != class {
            match self.take_empty_lane(class) {
                Some(empty) => l = empty,
                None => {
                    self.put_in_heap(entry);
                    return false;
                }
            }
        }
        // In another class's lane a completion would hold back that
        // lane's own, which would then go to the heap in turn: it goes
        // there itself when its lane is ahead of it.
        if key >= self.last[l] {
            self.push_lane(l, key, entry);
            return true;
        }
        self.put_in_heap(entry);
        false
    }

    /// Append `entry`, of `key`, to lane `l`, whose last key is not above
    /// it.
    #[inline(always)]
    fn push_lane(&mut self, l: usize, key: u128, entry: Entry<E>) {
        self.last[l] = key;
        if self.lanes[l].is_empty() {
            self.head[l] = key;
        }
        self.lanes[l].push_back(entry);
    }

    /// An empty lane of `DELAY_LANES` for `class`, which it holds from now
    /// on (any key may start an empty lane).
    #[cold]
    #[inline(never)]
    fn take_empty_lane(&mut self, class: usize) -> Option<usize> {
        let l = DELAY_LANES
            .into_iter()
            .find(|&l| self.lanes[l].is_empty())?;
        self.last[l] = 0;
        self.class_lane[class] = l as u8;
        self.lane_class[l] = class as u8;
        Some(l)
    }

    /// The queue's entry for `event` at `time`: its tie key with the order
    /// of scheduling.
    #[inline(always)]
    fn entry(&mut self, time: Time, event: E) -> Entry<E> {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let tie = event.tie(time);
        debug_assert_eq!(
            tie & SEQ_MASK,
            0,
            "an event's tie key leaves the low bits free"
        );
        Entry {
            time,
            order: tie | (seq & SEQ_MASK),
            event,
        }
    }

    /// Put an entry that no lane took in the heap, over the taken top if
    /// there is one; or, if it is a far event of a run with every lane
    /// open, in the far heap unless it is the earliest far event.
    #[inline(always)]
    fn put_in_heap(&mut self, entry: Entry<E>) {
        if self.all_open && entry.event.far() {
            let key = entry.key();
            if key > self.promoted {
                self.far.push(entry);
                return;
            }
            // The earliest far event goes to the heap (an earlier promoted
            // one stays there, as any event).
            self.promoted = key;
        }
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
        if self.by_delay {
            self.pop_below::<true>(u128::MAX)
        } else {
            self.pop_below::<false>(u128::MAX)
        }
    }

    /// The earliest event if it is before `end`, removed from the queue.
    #[inline]
    pub fn pop_before(&mut self, end: Time) -> Option<(Time, E)> {
        if self.by_delay {
            self.pop_before_in::<true>(end)
        } else {
            self.pop_before_in::<false>(end)
        }
    }

    /// Whether the queue places events by delay (`switch_placement`).
    pub fn placed_by_delay(&self) -> bool {
        self.by_delay
    }

    /// `pop_before` for a loop that knows `BY_DELAY`, which must be
    /// `placed_by_delay()`: a queue that does not place by delay then pops
    /// without a look at lane 4, which only those that do pay for.
    #[inline(always)]
    pub fn pop_before_in<const BY_DELAY: bool>(&mut self, end: Time) -> Option<(Time, E)> {
        debug_assert_eq!(BY_DELAY, self.by_delay, "the queue's own placement");
        self.pop_below::<BY_DELAY>(u128::from(end.0) << 64)
    }

    #[inline(always)]
    fn pop_below<const BY_DELAY: bool>(&mut self, limit: u128) -> Option<(Time, E)> {
        self.settle();
        let (mut lane, mut lane_key) = if self.head[0] <= self.head[1] {
            (0, self.head[0])
        } else {
            (1, self.head[1])
        };
        if self.all_open {
            for l in 2..4 {
                if self.head[l] < lane_key {
                    (lane, lane_key) = (l, self.head[l]);
                }
            }
            if BY_DELAY && self.head[4] < lane_key {
                (lane, lane_key) = (4, self.head[4]);
            }
        }
        if let Some(top) = self.heap.peek() {
            if top.key() < lane_key {
                if top.key() >= limit {
                    return None;
                }
                let (time, event) = (top.time, top.event);
                if top.key() == self.promoted {
                    self.promote_next();
                } else {
                    self.taken = true;
                }
                return Some((time, event));
            }
        }
        if lane_key >= limit {
            return None;
        }
        let q = &mut self.lanes[lane];
        let e = q.pop_front().expect("a head key means an entry");
        self.head[lane] = q.front().map_or(u128::MAX, Entry::key);
        Some((e.time, e.event))
    }

    /// The promoted far event is out of the heap (its top, handed out):
    /// the earliest far event left, if any, takes its place.
    #[cold]
    #[inline(never)]
    fn promote_next(&mut self) {
        match self.far.pop() {
            Some(next) => {
                self.promoted = next.key();
                *self.heap.peek_mut().expect("the promoted top") = next;
            }
            None => {
                self.promoted = u128::MAX;
                self.taken = true;
            }
        }
    }

    /// Let lanes 2 and 3 take events too: for runs whose events of one kind
    /// come a few different delays after their scheduling (transmissions of
    /// frames of several sizes or at several rates), which one lane would
    /// send to the heap. Where one lane suffices, the two closed ones cost
    /// a pop nothing. Order is the key order either way.
    pub fn open_all_lanes(&mut self) {
        assert!(self.is_empty(), "lanes open before the first event");
        self.all_open = true;
    }

    /// Open every lane, lane 4 too, and place the events scheduled with
    /// `schedule_after` by their delay from the first (the tests' way; a
    /// run is offered it and starts it when needed, `switch_placement`).
    #[cfg(test)]
    fn place_by_delay(&mut self) {
        self.open_all_lanes();
        self.by_delay = true;
    }

    /// Open every lane, and let `switch_placement` start placement by
    /// delay once completions tried lane after lane go to the heap often.
    pub fn offer_placement_by_delay(&mut self) {
        self.open_all_lanes();
        self.may_place_by_delay = true;
    }

    /// With placement by delay offered and not started: start it if more
    /// than one in four of the completions scheduled since the last look
    /// went to the heap (of a few thousand at least), and tell whether it
    /// started. A run looks every so many events; when it started, its
    /// event loop is the other one from then on (`pop_before_in`). Which
    /// lane an event takes never changes the order of events, only their
    /// cost: a run of several rates whose completions fit the lanes tried
    /// in turn pops faster without the fifth lane (study `cc_compare`'s
    /// leaf-spine sends 0.1% of them to the heap, 13% while its flows
    /// start; study F's fabric 39% in the median look).
    pub fn switch_placement(&mut self) -> bool {
        if !self.may_place_by_delay || self.by_delay {
            return false;
        }
        let (scheduled, spilled) = (self.after_scheduled, self.after_spilled);
        (self.after_scheduled, self.after_spilled) = (0, 0);
        self.by_delay = scheduled >= 4096 && spilled > scheduled / 4;
        self.by_delay
    }

    #[inline]
    fn settle(&mut self) {
        if self.taken {
            self.taken = false;
            self.heap.pop();
        }
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        self.settle();
        let first = self.head.iter().copied().min().unwrap_or(u128::MAX);
        let first = self.heap.peek().map_or(first, |top| top.key().min(first));
        (first != u128::MAX).then_some(Time((first >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.taken)
            + self.far.len()
            + self.lanes.iter().map(Fifo::len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A timer that restarts far more often than it runs out (TCP's on almost
/// every segment, DCQCN's increase timer at every rate decrease) keeps one
/// event at or before its deadline rather than one per restart: `pending`
/// holds that event's time, and a deadline that moved later is found when
/// the event comes (its handler clears `pending` and arms again). Returns
/// the time of a new event to schedule, if one is needed.
pub fn lazy_timer(pending: &mut Option<Time>, deadline: Option<Time>) -> Option<Time> {
    let t = deadline?;
    if pending.is_none_or(|at| t < at) {
        *pending = Some(t);
        return Some(t);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upper case after lower case on ties, then in the order scheduled.
    impl EventKey for char {
        fn tie(&self, _: Time) -> u64 {
            u64::from(self.is_uppercase()) << 62
        }
    }

    /// An event that says its lanes.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Laned {
        class: u8,
        lanes: &'static [usize],
        id: u32,
    }

    impl EventKey for Laned {
        fn tie(&self, _: Time) -> u64 {
            u64::from(self.class) << 62
        }
        fn lanes(&self) -> &'static [usize] {
            self.lanes
        }
        /// Every third event without lanes.
        fn far(&self) -> bool {
            self.lanes.is_empty() && self.id % 3 == 0
        }
    }

    /// Random schedules and pops, lanes or not, in and out of order, far
    /// events or not, placed by delay or not, with two, four or five lanes
    /// open: the queue pops exactly what a plain sort by (time, class,
    /// order scheduled) pops.
    #[test]
    fn lanes_and_heap_pop_in_exact_key_order() {
        use rand::RngExt;
        let mut rng = crate::engine::rng::stream(5, 0);
        for round in 0..50 {
            let mut q = EventQueue::with_capacity(4);
            match round % 3 {
                0 => {}
                1 => q.open_all_lanes(),
                _ => q.place_by_delay(),
            }
            let mut reference: Vec<(u64, u8, u32)> = Vec::new();
            let mut now = 0u64;
            let mut id = 0u32;
            let mut far_seen = false;
            let mut lane4_seen = false;
            for _ in 0..2_000 {
                if rng.random_range(0..3) > 0 || reference.is_empty() {
                    // Mostly a fixed delay ahead (in lane order), sometimes not.
                    let delay = match rng.random_range(0..6) {
                        0 => 7,
                        1 => 12,
                        2 => rng.random_range(0..3),
                        3 => rng.random_range(0..40),
                        _ => rng.random_range(0..400),
                    };
                    let ev = Laned {
                        class: rng.random_range(0..3),
                        lanes: [&[][..], &[0], &[1], &[0, 2, 3], &[1, 3, 2]]
                            [rng.random_range(0..5)],
                        id,
                    };
                    reference.push((now + delay, ev.class, id));
                    if rng.random_range(0..2) == 0 {
                        q.schedule_after(Time(now), Time(delay), ev);
                    } else {
                        q.schedule(Time(now + delay), ev);
                    }
                    id += 1;
                    far_seen |= !q.far.is_empty();
                    lane4_seen |= !q.lanes[4].is_empty();
                } else {
                    reference.sort();
                    let (t, _, want) = reference.remove(0);
                    let (got_t, got) = q.pop().expect("not empty");
                    assert_eq!((got_t.0, got.id), (t, want), "round {round}");
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            reference.sort();
            for (t, _, want) in reference {
                assert_eq!(q.peek_time(), Some(Time(t)));
                assert_eq!(q.pop_before(Time(t)), None, "nothing before {t}");
                let (got_t, got) = q.pop().expect("not empty");
                assert_eq!((got_t.0, got.id), (t, want));
            }
            assert!(q.is_empty());
            assert_eq!(q.pop(), None);
            // Only a run with every lane open keeps far events apart.
            assert_eq!(far_seen, round % 3 != 0, "round {round}");
            // Placed by delay, lane 4 takes events; else it stays empty.
            assert_eq!(lane4_seen, round % 3 == 2, "round {round}");
        }
    }

    /// Far events in a run with every lane open: the earliest waits in the
    /// heap and the others apart, an earlier one scheduled later joins the
    /// heap too, and as each comes out the next takes its place; all pop in
    /// time order among near events.
    #[test]
    fn far_events_wait_apart_but_the_earliest() {
        let mut q = EventQueue::with_capacity(4);
        q.open_all_lanes();
        let far = |id: u32| Laned {
            class: 0,
            lanes: &[],
            id: 3 * id,
        };
        let near = |id: u32| Laned {
            class: 0,
            lanes: &[],
            id: 3 * id + 1,
        };
        for (t, id) in [(500, 1), (300, 2), (900, 3)] {
            q.schedule(Time(t), far(id));
        }
        // 300 went to the heap (earlier than 500, which stays there too).
        assert_eq!((q.heap.len(), q.far.len()), (2, 1));
        q.schedule(Time(100), far(4));
        assert_eq!((q.heap.len(), q.far.len()), (3, 1));
        for t in [50, 200, 400, 600, 800, 1000] {
            q.schedule(Time(t), near(t as u32));
        }
        let popped: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|(t, _)| t.0).collect();
        assert_eq!(popped, [50, 100, 200, 300, 400, 500, 600, 800, 900, 1000]);
        assert!(q.is_empty() && q.far.is_empty());
    }

    /// `schedule_or` says whether a lane took the event, and rewrites only
    /// the events that go to the heap: a lane's events pop as scheduled,
    /// the heap's as rewritten, all in key order.
    #[test]
    fn schedule_or_rewrites_only_what_goes_to_the_heap() {
        let mut q = EventQueue::with_capacity(4);
        let ev = |id| Laned {
            class: 0,
            lanes: &[1],
            id,
        };
        let mut rewritten = Vec::new();
        for (t, id) in [(10, 1), (20, 2), (15, 3), (30, 4), (25, 5), (40, 6)] {
            let laned = q.schedule_or(Time(t), ev(id), |e| {
                e.id += 100;
                rewritten.push(id);
            });
            // In order after the lane's last, or not.
            assert_eq!(laned, !rewritten.contains(&id), "event {id}");
        }
        assert_eq!(rewritten, [3, 5]);
        let popped: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e.id).collect();
        assert_eq!(popped, [1, 103, 2, 105, 4, 6]);
    }

    /// An event with its own place: `element` in the key.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Placed {
        class: u8,
        element: u32,
    }

    impl EventKey for Placed {
        fn tie(&self, _: Time) -> u64 {
            (u64::from(self.class) << 62) | (u64::from(self.element) << SEQ_BITS)
        }
        fn lanes(&self) -> &'static [usize] {
            [&[][..], &[0, 2], &[1, 3]][(self.element % 3) as usize]
        }
    }

    /// Events with distinct keys pop in the same order whatever the order
    /// they were scheduled in: what lets parts of a run schedule their
    /// events independently.
    #[test]
    fn ties_do_not_depend_on_the_order_of_scheduling() {
        use rand::seq::SliceRandom;
        let mut rng = crate::engine::rng::stream(7, 0);
        let events: Vec<(u64, Placed)> = (0..600u32)
            .map(|i| {
                let ev = Placed {
                    class: (i % 4) as u8,
                    element: i / 4 % 50,
                };
                // Few distinct times: many ties.
                (u64::from(i % 7), ev)
            })
            .filter({
                let mut seen = std::collections::HashSet::new();
                move |(t, e)| seen.insert((*t, e.class, e.element))
            })
            .collect();
        let mut want: Option<Vec<(u64, u8, u32)>> = None;
        for round in 0..20 {
            let mut order = events.clone();
            order.shuffle(&mut rng);
            let mut q = EventQueue::with_capacity(4);
            if round % 2 == 1 {
                q.open_all_lanes();
            }
            for (t, e) in &order {
                q.schedule(Time(*t), *e);
            }
            let got: Vec<(u64, u8, u32)> = std::iter::from_fn(|| q.pop())
                .map(|(t, e)| (t.0, e.class, e.element))
                .collect();
            let mut sorted = got.clone();
            sorted.sort();
            assert_eq!(got, sorted, "(time, class, element) order");
            assert_eq!(got.len(), events.len());
            match &want {
                None => want = Some(got),
                Some(w) => assert_eq!(&got, w),
            }
        }
    }

    /// Two interleaved sequences of completions a different delay apart:
    /// with lanes 2 and 3 closed the later-scheduled, earlier ones go to
    /// the heap; open, they take lane 2 and the heap stays empty. The pops
    /// are the same.
    #[test]
    fn open_lanes_take_a_second_sequence_of_delays() {
        let mut popped = Vec::new();
        for open in [false, true] {
            let mut q = EventQueue::with_capacity(4);
            if open {
                q.open_all_lanes();
            }
            let mut got = Vec::new();
            for i in 0..100u32 {
                let now = u64::from(i) * 10;
                for (delay, id) in [(84, 2 * i), (5, 2 * i + 1)] {
                    let ev = Laned {
                        class: 0,
                        lanes: &[0, 2, 3],
                        id,
                    };
                    q.schedule(Time(now + delay), ev);
                }
                while q.peek_time().is_some_and(|t| t.0 <= now) {
                    got.push(q.pop().unwrap().1.id);
                }
            }
            assert_eq!(q.heap.is_empty(), open, "open {open}");
            assert_eq!(q.lanes[2].is_empty(), !open, "open {open}");
            got.extend(std::iter::from_fn(|| q.pop().map(|(_, e)| e.id)));
            assert_eq!(got.len(), 200);
            popped.push(got);
        }
        assert_eq!(popped[0], popped[1]);
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

    /// A completion: its delay is its frame time.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Completion(u32);

    impl EventKey for Completion {
        fn tie(&self, _: Time) -> u64 {
            0
        }
        fn lanes(&self) -> &'static [usize] {
            &[0, 2, 3]
        }
    }

    /// Four frame times on four busy transmitters, each starting its next
    /// frame as one ends: study F's (1048-B data and 64-B ACKs at 100 and
    /// 400 Gb/s) and a leaf-spine's (1518-B data and 64-B ACKs at 10 and
    /// 40 Gb/s, which span five classes, the first and last four apart).
    /// Placed by delay, each frame time keeps a lane and none goes to the
    /// heap; tried lane after lane, the completions overtake one another's
    /// lanes and many go there. The pops are the same, in time order.
    #[test]
    fn completions_of_four_frame_times_keep_a_lane_each() {
        for frame_times in [
            [83_840, 20_960, 5_120, 1_280],
            [1_214_400, 303_600, 51_200, 12_800],
        ] {
            let mut popped = Vec::new();
            for by_delay in [false, true] {
                let mut q = EventQueue::with_capacity(4);
                if by_delay {
                    q.place_by_delay();
                } else {
                    q.open_all_lanes();
                }
                for (k, d) in frame_times.iter().enumerate() {
                    q.schedule_after(Time(k as u64 * 7), Time(*d), Completion(k as u32));
                }
                let (mut got, mut to_heap) = (Vec::new(), 0);
                for _ in 0..10_000 {
                    let (t, Completion(k)) = q.pop().expect("always busy");
                    got.push((t, k));
                    let frame_time = Time(frame_times[k as usize]);
                    to_heap += usize::from(!q.schedule_after(t, frame_time, Completion(k)));
                }
                assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
                if by_delay {
                    assert_eq!(to_heap, 0, "every completion in a lane");
                } else {
                    assert!(to_heap > 1_000, "{to_heap} of 10,000 to the heap");
                }
                popped.push(got);
            }
            assert_eq!(popped[0], popped[1]);
        }
    }

    /// A fifth class of delays finds every lane taken and goes to the heap;
    /// once a lane is empty, the next class to come takes it.
    #[test]
    fn a_lane_passes_to_another_class_only_when_empty() {
        let mut q = EventQueue::with_capacity(4);
        q.place_by_delay();
        // Four classes, a lane each.
        for (k, d) in [1u64, 4, 16, 64].into_iter().enumerate() {
            assert!(q.schedule_after(Time::ZERO, Time(d), Completion(k as u32)));
        }
        assert!(
            !q.schedule_after(Time::ZERO, Time(256), Completion(4)),
            "no lane left"
        );
        assert_eq!(q.pop(), Some((Time(1), Completion(0))));
        // Class 0's lane is empty now: class 4 takes it.
        assert!(q.schedule_after(Time::ZERO, Time(300), Completion(5)));
        assert!(
            !q.schedule_after(Time(1), Time(1), Completion(6)),
            "class 0 lost its lane"
        );
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, Completion(k))| k)
            .collect();
        assert_eq!(order, [6, 1, 2, 3, 4, 5]);
    }

    /// Offered placement by delay starts where completions tried lane after
    /// lane often go to the heap (four frame times), then none goes there;
    /// where they fit (one frame time) it never starts.
    #[test]
    fn placement_by_delay_starts_where_completions_spill() {
        for (frame_times, starts) in [
            (vec![83_840, 20_960, 5_120, 1_280], true),
            (vec![83_840], false),
        ] {
            let mut q = EventQueue::with_capacity(4);
            q.offer_placement_by_delay();
            for (k, d) in frame_times.iter().enumerate() {
                q.schedule_after(Time(k as u64 * 7), Time(*d), Completion(k as u32));
            }
            let busy = |q: &mut EventQueue<Completion>, n: usize| {
                let mut to_heap = 0;
                for _ in 0..n {
                    let (t, Completion(k)) = q.pop().expect("always busy");
                    let frame_time = Time(frame_times[k as usize]);
                    to_heap += usize::from(!q.schedule_after(t, frame_time, Completion(k)));
                }
                to_heap
            };
            let before = busy(&mut q, 10_000);
            assert_eq!(
                q.switch_placement(),
                starts,
                "{before} of 10,000 to the heap"
            );
            assert_eq!(q.placed_by_delay(), starts);
            assert!(!q.switch_placement(), "it starts once");
            let after = busy(&mut q, 10_000);
            // The lanes the first placement filled drain first.
            assert!(after < 10, "{after} of 10,000 to the heap after");
        }
    }
}

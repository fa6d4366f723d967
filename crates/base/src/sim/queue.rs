//! The event queue, ordered by (time, sequence). The sequence number makes the order of
//! events at the same nanosecond the order they were scheduled in, so runs are deterministic.
//! Cancelled events are not removed: models tag events with generation counters and ignore
//! stale ones, which keeps scheduling cheap and allocation-free once the queue has grown to
//! its working size.
//!
//! Two parts: the earliest events in a short sorted array (`front`, latest first, so the
//! next event is popped off its end), and the rest in a 4-ary min-heap whose keys all sort
//! after the front's. A simulation of a few CPUs has a few dozen events pending, nearly all
//! in the front: a pop is then a `Vec::pop` and a push a binary search and a short move,
//! where a heap sifts through its levels on every pop. With thousands pending (10,000
//! periodic tasks' timers), the heap holds them and the front refills from it. Four
//! children per heap node halve the depth of a binary heap. The order is the (time,
//! sequence) order whatever the layout, so results are the same bytes as with `std`'s
//! binary heap (a test keeps that heap as the oracle).

use super::Time;

const ARITY: usize = 4;
/// Most events the front holds; a refill moves half as many from the heap. 32 sent most
/// events of 16 periodic tasks on 8 CPUs through the heap (some 50 pending, stale ones
/// included); 64 keeps them in the front: callgrind instructions -1% there and on 1000
/// tasks (periodic16 20 s, periodic1000 2 s), 128 gained 0.1% more for moves twice as long.
const FRONT: usize = 64;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// (time, sequence) as one number: one wide compare instead of two branches.
    #[inline]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

pub struct EventQueue<E> {
    /// The earliest events, sorted by key from the latest to the earliest.
    front: Vec<Entry<E>>,
    /// The other events: every key here sorts after every key in `front`.
    heap: Vec<Entry<E>>,
    next_seq: u64,
    now: Time,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            front: Vec::with_capacity(FRONT + 1),
            heap: Vec::with_capacity(1024),
            next_seq: 0,
            now: 0,
        }
    }

    /// Schedule `event` at `time`, which must not lie in the past.
    pub fn schedule(&mut self, time: Time, event: E) {
        debug_assert!(
            time >= self.now,
            "event scheduled in the past: {time} < {}",
            self.now
        );
        let seq = self.reserve_seq();
        self.schedule_at_seq(time, seq, event);
    }

    /// Take the sequence number the next `schedule` would take, for an event the model
    /// queues later with [`EventQueue::schedule_at_seq`] (a completion it postpones without
    /// queueing it again), so that it sorts where it would have sorted.
    #[inline]
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedule `event` at `time` with `seq`, a number [`EventQueue::reserve_seq`] gave.
    pub fn schedule_at_seq(&mut self, time: Time, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq, "sequence {seq} was not reserved");
        let entry = Entry {
            time: time.max(self.now),
            seq,
            event,
        };
        let key = entry.key();
        // The front takes the entry if it sorts before the front's latest; it then gives
        // its latest to the heap when over its size. Otherwise the entry sorts after the
        // whole front and goes to the heap.
        match self.front.first() {
            Some(latest) if key < latest.key() => {
                let at = self.front.partition_point(|e| e.key() > key);
                self.front.insert(at, entry);
                if self.front.len() > FRONT {
                    let latest = self.front.remove(0);
                    self.heap_push(latest);
                }
            }
            _ => self.heap_push(entry),
        }
    }

    /// Take the earliest event if it is at or before `until`.
    pub fn pop_before(&mut self, until: Time) -> Option<(Time, E)> {
        if self.front.is_empty() {
            self.refill();
        }
        if self.front.last()?.time > until {
            return None;
        }
        let e = self.front.pop().expect("the front has an event");
        self.now = e.time;
        Some((e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.front.len() + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.front.is_empty() && self.heap.is_empty()
    }

    /// Move the heap's earliest events (half a front) into the empty front.
    fn refill(&mut self) {
        debug_assert!(self.front.is_empty());
        while self.front.len() < FRONT / 2 {
            match self.heap_pop() {
                Some(e) => self.front.push(e),
                None => break,
            }
        }
        self.front.reverse();
    }

    /// The heap's sifts move the entries they pass over into the hole and write the sifted
    /// one once, at its place: the same layout as swapping it down level by level, with one
    /// move per level instead of a swap's three.
    fn heap_push(&mut self, entry: Entry<E>) {
        let key = entry.key();
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    fn heap_pop(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some(last);
        };
        // The last entry sifts down from the root.
        let (key, n) = (last.key(), self.heap.len());
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let (mut best, mut best_key) = (first, self.heap[first].key());
            for c in first + 1..(first + ARITY).min(n) {
                let k = self.heap[c].key();
                if k < best_key {
                    (best, best_key) = (c, k);
                }
            }
            if key <= best_key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_come_out_in_schedule_order() {
        let mut q = EventQueue::new();
        q.schedule(10, 'b');
        q.schedule(5, 'a');
        q.schedule(10, 'c');
        q.schedule(10, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_before(u64::MAX).map(|e| e.1)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    }

    /// The binary heap the queue was before: (time, sequence) order through `std`.
    struct Oracle(
        std::collections::BinaryHeap<std::cmp::Reverse<(Time, u64, u32)>>,
        u64,
    );

    /// Random interleavings of schedules and pops, many at equal times: the same events
    /// come out in the same order as from the binary heap.
    #[test]
    fn same_order_as_the_binary_heap() {
        let mut rng = crate::sim::SimRng::new(11);
        let mut q = EventQueue::new();
        let mut o = Oracle(Default::default(), 0);
        let mut now = 0;
        for step in 0..200_000u32 {
            if rng.below(3) > 0 {
                let t = now + rng.below(20);
                q.schedule(t, step);
                o.0.push(std::cmp::Reverse((t, o.1, step)));
                o.1 += 1;
            } else {
                let horizon = now + rng.below(10);
                let want = match o.0.peek() {
                    Some(&std::cmp::Reverse((t, _, ev))) if t <= horizon => {
                        o.0.pop();
                        Some((t, ev))
                    }
                    _ => None,
                };
                let got = q.pop_before(horizon);
                assert_eq!(got, want, "step {step}");
                if let Some((t, _)) = got {
                    now = t;
                }
            }
            assert_eq!(q.len(), o.0.len());
        }
    }

    #[test]
    fn an_event_queued_later_with_a_reserved_sequence_sorts_where_it_was_reserved() {
        let mut q = EventQueue::new();
        let seq = q.reserve_seq();
        q.schedule(10, 'b');
        q.schedule_at_seq(10, seq, 'a');
        q.schedule(10, 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_before(100).map(|(_, e)| e)).collect();
        assert_eq!(order, ['a', 'b', 'c']);
    }

    #[test]
    fn pop_before_respects_the_horizon() {
        let mut q = EventQueue::new();
        q.schedule(10, 1);
        q.schedule(20, 2);
        assert_eq!(q.pop_before(15), Some((10, 1)));
        assert_eq!(q.pop_before(15), None);
        assert_eq!(q.len(), 1);
    }
}

//! The event queue, ordered by (time, sequence). The sequence number makes the order of
//! events at the same nanosecond the order they were scheduled in, so runs are deterministic.
//!
//! An event the model may supersede before it fires (a CPU's tick, its running task's
//! completion) is queued in a *slot*, one pending event per slot, and the model keeps its
//! [`Pending`] handle: it then moves the event ([`EventQueue::requeue`]: it sorts as a new
//! event scheduled at that moment would) or takes it out ([`EventQueue::cancel`]) instead
//! of leaving a stale event behind to be popped and ignored. Other events are only queued
//! and popped; models tag them with generation counters where they can go stale.
//!
//! Two parts: the earliest events in a short sorted ring (`front`, earliest first), and
//! the rest in a 4-ary min-heap whose keys all sort after the front's. A simulation of a
//! few CPUs has a few dozen events pending, nearly all in the front: a pop then takes the
//! ring's first entry, and a push scans from the nearer end of the ring to its place,
//! moving the entries it passes by one (the ring grows at either end), where a heap sifts
//! through its levels on every pop. With thousands pending (10,000 periodic tasks'
//! timers), the heap holds them and the front refills from it. Four children per heap
//! node halve the depth of a binary heap. The order is the (time, sequence) order
//! whatever the layout, so results are the same bytes as with `std`'s binary heap (a test
//! keeps that heap as the oracle). A slotted event is found in the front by the same kind
//! of scan and in the heap through its slot's index, which every write of the heap keeps.

use super::Time;

const ARITY: usize = 4;
/// Most events the front holds; a refill moves half as many from the heap. 32 sent most
/// events of 16 periodic tasks on 8 CPUs through the heap (some 50 pending, stale ones
/// included); 64 keeps them in the front: callgrind instructions -1% there and on 1000
/// tasks (periodic16 20 s, periodic1000 2 s), 128 gained 0.1% more for moves twice as long.
const FRONT: usize = 64;
/// The low bits of an entry's sequence number name its slot (0: none, else slot + 1), so
/// that an entry stays 40 bytes; the scheduling order is in the bits above, unique per
/// event, so the slot never decides an order. 2^44 events, 2^20 - 1 slots.
const SLOT_BITS: u32 = 20;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn key(&self) -> u128 {
        key(self.time, self.seq)
    }
}

/// (time, sequence) as one number: one wide compare instead of two branches.
#[inline]
fn key(time: Time, seq: u64) -> u128 {
    ((time as u128) << 64) | seq as u128
}

/// A slotted event while it is pending: what [`EventQueue::requeue`] and
/// [`EventQueue::cancel`] take. Stale once the event is popped, moved or cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    time: Time,
    seq: u64,
}

impl Pending {
    /// When the event fires.
    pub fn time(&self) -> Time {
        self.time
    }

    fn key(&self) -> u128 {
        key(self.time, self.seq)
    }

    fn slot(&self) -> usize {
        (self.seq & SLOT_MASK) as usize - 1
    }
}

pub struct EventQueue<E> {
    /// The earliest events, sorted by key from the earliest to the latest.
    front: Front<E>,
    /// The other events: every key here sorts after every key in `front`.
    heap: Vec<Entry<E>>,
    /// Where each slot's event was last written in the heap (checked against its key: the
    /// event may have gone to the front or been popped since).
    heap_at: Vec<u32>,
    next_seq: u64,
    now: Time,
}

impl<E: Copy + Default> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy + Default> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            front: Front::new(),
            heap: Vec::with_capacity(1024),
            heap_at: Vec::new(),
            next_seq: 0,
            now: 0,
        }
    }

    /// Schedule `event` at `time`, which must not lie in the past.
    pub fn schedule(&mut self, time: Time, event: E) {
        let seq = self.next_seq(0);
        self.insert(self.entry(time, seq, event));
    }

    /// Make slots `0..n` available to [`EventQueue::schedule_in`].
    pub fn add_slots(&mut self, n: usize) {
        assert!((n as u64) < SLOT_MASK, "{n} slots: at most {SLOT_MASK}");
        self.heap_at.resize(self.heap_at.len().max(n), 0);
    }

    /// Schedule `event` at `time` in `slot`, which has no other event pending: its handle.
    pub fn schedule_in(&mut self, slot: usize, time: Time, event: E) -> Pending {
        debug_assert!(slot < self.heap_at.len(), "slot {slot} was not added");
        let seq = self.next_seq(slot as u64 + 1);
        let entry = self.entry(time, seq, event);
        self.insert(entry);
        Pending {
            time: entry.time,
            seq,
        }
    }

    /// Move the pending event `old` to `time` with `event` as its payload: it sorts where
    /// an event scheduled now at `time` would, and `old` is gone as if cancelled. Its new
    /// handle.
    pub fn requeue(&mut self, old: Pending, time: Time, event: E) -> Pending {
        let seq = self.next_seq(old.seq & SLOT_MASK);
        let entry = self.entry(time, seq, event);
        let key = entry.key();
        let behind_heap = self.heap.first().is_some_and(|h| h.key() < key);
        if let Some(at) = self.front_find(old.key()) {
            if behind_heap {
                // It now sorts after the heap's earliest: the heap takes it.
                self.front.remove(at);
                self.heap_push(entry);
            } else {
                self.front_move(at, entry);
            }
        } else {
            let i = self.heap_find(old);
            if self.front.latest().is_some_and(|f| key < f.key()) {
                // It now sorts before the front's latest: the front takes it.
                self.heap_remove(i);
                self.insert(entry);
            } else if key < old.key() {
                self.sift_up(i, entry);
            } else {
                self.sift_down(i, entry);
            }
        }
        Pending {
            time: entry.time,
            seq,
        }
    }

    /// Take the pending event `old` out of the queue.
    pub fn cancel(&mut self, old: Pending) {
        match self.front_find(old.key()) {
            Some(at) => {
                self.front.remove(at);
            }
            None => {
                let i = self.heap_find(old);
                self.heap_remove(i);
            }
        }
    }

    /// Take the earliest event if it is at or before `until`.
    pub fn pop_before(&mut self, until: Time) -> Option<(Time, E)> {
        if self.front.is_empty() {
            self.refill();
            if self.front.is_empty() {
                return None;
            }
        }
        let e = self.front.earliest();
        if e.time > until {
            return None;
        }
        let (time, event) = (e.time, e.event);
        self.front.drop_earliest();
        self.now = time;
        Some((time, event))
    }

    pub fn len(&self) -> usize {
        self.front.len() + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.front.is_empty() && self.heap.is_empty()
    }

    /// The next sequence number, with `slot_bits` (0 or a slot + 1) below it.
    #[inline]
    fn next_seq(&mut self, slot_bits: u64) -> u64 {
        let seq = (self.next_seq << SLOT_BITS) | slot_bits;
        self.next_seq += 1;
        seq
    }

    fn entry(&self, time: Time, seq: u64, event: E) -> Entry<E> {
        debug_assert!(
            time >= self.now,
            "event scheduled in the past: {time} < {}",
            self.now
        );
        Entry {
            time: time.max(self.now),
            seq,
            event,
        }
    }

    fn insert(&mut self, entry: Entry<E>) {
        // Every entry inserted is the newest (its order number the last one handed out),
        // which lets the front place it by its time alone.
        debug_assert_eq!(entry.seq >> SLOT_BITS, self.next_seq - 1);
        let key = entry.key();
        // The front takes the entry if it sorts before the front's latest; it then gives
        // its latest to the heap when over its size. Otherwise the entry sorts after the
        // whole front and goes to the heap.
        match self.front.latest() {
            Some(latest) if key < latest.key() => {
                self.front.insert(entry);
                if self.front.len() > FRONT {
                    let latest = self.front.pop_latest();
                    self.heap_push(latest);
                }
            }
            _ => self.heap_push(entry),
        }
    }

    /// The index of the front's entry of `key`.
    #[inline]
    fn front_find(&self, key: u128) -> Option<usize> {
        self.front.find(key)
    }

    /// The index of the heap's entry of `p`, which is pending and not in the front.
    fn heap_find(&self, p: Pending) -> usize {
        let i = self.heap_at[p.slot()] as usize;
        assert!(
            self.heap.get(i).is_some_and(|e| e.seq == p.seq),
            "no pending event of slot {}",
            p.slot()
        );
        i
    }

    /// Write `entry` into the front in place of the entry at `at`, shifting the entries
    /// between the two places by one (a moved event rarely passes more than a few).
    fn front_move(&mut self, mut at: usize, entry: Entry<E>) {
        let key = entry.key();
        let (head, len) = (usize::from(self.front.head), self.front.len);
        let ring = &mut self.front.ring;
        // Earliest first: an earlier key moves toward the start, a later one toward the end.
        while at > 0 && ring[(head + at - 1) & RING_MASK].key() > key {
            ring[(head + at) & RING_MASK] = ring[(head + at - 1) & RING_MASK];
            at -= 1;
        }
        while at + 1 < len && ring[(head + at + 1) & RING_MASK].key() < key {
            ring[(head + at) & RING_MASK] = ring[(head + at + 1) & RING_MASK];
            at += 1;
        }
        ring[(head + at) & RING_MASK] = entry;
    }

    /// Move the heap's earliest events (half a front) into the empty front. Out of line:
    /// one pop in many refills, and the pop itself stays short.
    #[inline(never)]
    fn refill(&mut self) {
        debug_assert!(self.front.is_empty());
        while self.front.len() < FRONT / 2 {
            match self.heap_pop() {
                Some(e) => self.front.push_latest(e),
                None => break,
            }
        }
    }

    /// Write `entry` at heap index `i`, and note where its slot's event is.
    #[inline]
    fn heap_set(&mut self, i: usize, entry: Entry<E>) {
        self.heap[i] = entry;
        let slot = entry.seq & SLOT_MASK;
        if slot != 0 {
            self.heap_at[slot as usize - 1] = i as u32;
        }
    }

    /// The heap's sifts move the entries they pass over into the hole and write the sifted
    /// one once, at its place: the same layout as swapping it down level by level, with one
    /// move per level instead of a swap's three.
    ///
    /// The first test is inlined: a new event pushed to the heap is mostly the latest yet.
    #[inline]
    fn heap_push(&mut self, entry: Entry<E>) {
        let i = self.heap.len();
        self.heap.push(entry);
        if i > 0 && entry.key() < self.heap[(i - 1) / ARITY].key() {
            self.sift_up(i, entry);
        } else {
            self.heap_set(i, entry);
        }
    }

    /// Write `entry` at hole `i` or above it, moving down the ancestors that sort after it.
    fn sift_up(&mut self, mut i: usize, entry: Entry<E>) {
        let key = entry.key();
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key() <= key {
                break;
            }
            self.heap_set(i, self.heap[parent]);
            i = parent;
        }
        self.heap_set(i, entry);
    }

    /// Write `entry` at hole `i` or below it, moving up the earliest children that sort
    /// before it.
    fn sift_down(&mut self, mut i: usize, entry: Entry<E>) {
        let key = entry.key();
        while let Some((best, best_key)) = self.earliest_child(i) {
            if key <= best_key {
                break;
            }
            self.heap_set(i, self.heap[best]);
            i = best;
        }
        self.heap_set(i, entry);
    }

    /// The index and key of the earliest child of node `i`, if it has children.
    #[inline]
    fn earliest_child(&self, i: usize) -> Option<(usize, u128)> {
        let (first, n) = (i * ARITY + 1, self.heap.len());
        if first + ARITY <= n {
            // All four children (every node but the last parent's): the earlier of the
            // earliest of each pair, without a loop.
            let children = &self.heap[first..first + ARITY];
            let earlier = |a: (usize, u128), b: (usize, u128)| if b.1 < a.1 { b } else { a };
            let pair = |c: usize| earlier((c, children[c].key()), (c + 1, children[c + 1].key()));
            let (c, k) = earlier(pair(0), pair(2));
            return Some((first + c, k));
        }
        let mut best = (first, self.heap.get(first)?.key());
        for c in first + 1..n {
            let k = self.heap[c].key();
            if k < best.1 {
                best = (c, k);
            }
        }
        Some(best)
    }

    /// The root leaves a hole that moves down along the earliest children to a leaf; the
    /// last entry, which sorts late and so rarely climbs, sifts up from there: one compare
    /// fewer per level than sifting it down from the root, the same heap.
    fn heap_pop(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some(last);
        };
        let mut i = 0;
        while let Some((best, _)) = self.earliest_child(i) {
            self.heap_set(i, self.heap[best]);
            i = best;
        }
        self.sift_up(i, last);
        Some(top)
    }

    /// Take entry `i` out of the heap: the last entry fills its hole, sifted up or down.
    fn heap_remove(&mut self, i: usize) {
        let last = self.heap.pop().expect("the heap holds entry i");
        if i == self.heap.len() {
            return;
        }
        if i > 0 && last.key() < self.heap[(i - 1) / ARITY].key() {
            self.sift_up(i, last);
        } else {
            self.sift_down(i, last);
        }
    }
}

/// The front's entries, earliest first, in a ring: `len` entries from index `head` on,
/// modulo the ring's size. An entry goes in by moving the entries between its place and
/// the nearer end by one (a new timer, due late, moves the few behind it; a wake-up due
/// now the few ahead of it, mostly the events of the same instant on the other CPUs), and
/// the earliest and the latest leave by moving an end. Indices are taken modulo a power of
/// two, so they need no bounds checks. The fronts of 16 and of 1000 periodic tasks on 8
/// CPUs hold about 20 entries on average, and a new entry's place is some 5 entries from
/// the nearer end: a scan that moves the entries as it compares them costs less than a
/// binary search followed by a `memmove` (`Vec::insert`) of all the entries after the
/// place.
struct Front<E> {
    /// The entries, and default ones outside the `len` in use.
    ring: Box<[Entry<E>; RING]>,
    /// The index of the earliest entry.
    head: u8,
    len: usize,
}

/// The ring's size, above the most entries it holds (`FRONT`, and one more before the
/// latest goes to the heap): 256, so that the index of the earliest entry is a `u8`, whose
/// loads and increments need no mask.
const RING: usize = 256;
const RING_MASK: usize = RING - 1;
const _: () = assert!(FRONT < RING);

impl<E: Copy + Default> Front<E> {
    fn new() -> Self {
        let unused = Entry {
            time: 0,
            seq: 0,
            event: E::default(),
        };
        Front {
            ring: Box::new([unused; RING]),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry at index `at` (0 for the earliest), which must hold one.
    #[inline]
    fn get(&self, at: usize) -> &Entry<E> {
        &self.ring[(usize::from(self.head) + at) & RING_MASK]
    }

    /// The earliest entry, of a front that holds one.
    #[inline]
    fn earliest(&self) -> &Entry<E> {
        self.get(0)
    }

    #[inline]
    fn latest(&self) -> Option<&Entry<E>> {
        (self.len > 0).then(|| self.get(self.len - 1))
    }

    /// Take out the earliest entry.
    #[inline]
    fn drop_earliest(&mut self) {
        self.head = self.head.wrapping_add(1);
        self.len -= 1;
    }

    /// The index of the entry of `key`, if there is one: after one compare with the
    /// middle entry, a scan from the nearer end. Inlined into its two callers: a call
    /// cost more than the scan saved (callgrind, periodic1000 +4.5 M).
    #[inline(always)]
    fn find(&self, key: u128) -> Option<usize> {
        let len = self.len;
        if len == 0 {
            return None;
        }
        let (ring, head) = (&self.ring, usize::from(self.head));
        let at = |i: usize| ring[(head + i) & RING_MASK].key();
        // Past the latest entry (the event is in the heap), or the latest itself (a far
        // completion, as of a CPU hog, moved again).
        if key >= at(len - 1) {
            return (key == at(len - 1)).then_some(len - 1);
        }
        let mut i;
        if key <= at(len / 2) {
            i = 0;
            while at(i) < key {
                i += 1;
            }
        } else {
            i = len - 1;
            while at(i) > key {
                i -= 1;
            }
        }
        (at(i) == key).then_some(i)
    }

    #[inline]
    fn pop_latest(&mut self) -> Entry<E> {
        self.len -= 1;
        let at = (usize::from(self.head) + self.len) & RING_MASK;
        self.ring[at]
    }

    /// Append `entry`, which sorts after every entry (the refill).
    fn push_latest(&mut self, entry: Entry<E>) {
        let at = (usize::from(self.head) + self.len) & RING_MASK;
        self.ring[at] = entry;
        self.len += 1;
    }

    /// Put `entry`, which sorts before the latest entry, in its place: after one compare
    /// with the middle entry, the entries between the nearer end and its place move by
    /// one as the scan from that end passes them. `entry` is the newest event (its
    /// sequence number above every entry's), so it sorts after every entry of its time
    /// and before every later one: the times alone place it.
    #[inline]
    fn insert(&mut self, entry: Entry<E>) {
        let time = entry.time;
        let (head, len) = (usize::from(self.head), self.len);
        let ring = &mut self.ring;
        if time < ring[(head + len / 2) & RING_MASK].time {
            // Its place is in the first half: the earlier entries move toward the head.
            let head = (head + RING_MASK) & RING_MASK;
            let mut i = head;
            while ring[(i + 1) & RING_MASK].time <= time {
                ring[i & RING_MASK] = ring[(i + 1) & RING_MASK];
                i += 1;
            }
            ring[i & RING_MASK] = entry;
            self.head = head as u8;
        } else {
            // In the second half (the latest sorts after it): the later entries move back.
            let mut i = head + len;
            while ring[(i - 1) & RING_MASK].time > time {
                ring[i & RING_MASK] = ring[(i - 1) & RING_MASK];
                i -= 1;
            }
            ring[i & RING_MASK] = entry;
        }
        self.len = len + 1;
    }

    /// Take out the entry at index `at`, moving the entries on the shorter side of it by one.
    fn remove(&mut self, at: usize) {
        let (head, len) = (usize::from(self.head), self.len);
        let ring = &mut self.ring;
        if at < len - 1 - at {
            for i in (head..head + at).rev() {
                ring[(i + 1) & RING_MASK] = ring[i & RING_MASK];
            }
            self.head = self.head.wrapping_add(1);
        } else {
            for i in head + at..head + len - 1 {
                ring[i & RING_MASK] = ring[(i + 1) & RING_MASK];
            }
        }
        self.len = len - 1;
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

    /// Random schedules and pops of plain events, and of slotted ones that are moved
    /// (earlier, later, to the same time behind newer events, between the front and the
    /// heap) and cancelled, with a few hundred to a few thousand pending: the events come
    /// out in (time, scheduling order), a moved one where a new one scheduled at its move
    /// would, a cancelled one never.
    #[test]
    fn moved_events_sort_where_new_ones_would() {
        const SLOTS: usize = 64;
        let mut rng = crate::sim::SimRng::new(5);
        let mut q = EventQueue::new();
        q.add_slots(SLOTS);
        // (time, scheduling order) -> event, and each slot's pending handle, order, event.
        let mut oracle = std::collections::BTreeMap::new();
        let mut slots: [Option<(Pending, u64, u32)>; SLOTS] = [None; SLOTS];
        let (mut now, mut order) = (0, 0u64);
        let (mut most, mut in_heap) = (0, 0);
        for step in 0..100_000u32 {
            order += 1;
            let spread = if step % 20_000 < 10_000 { 20 } else { 2000 };
            let slot = rng.below(SLOTS as u64) as usize;
            match (rng.below(8), slots[slot]) {
                (0..=2, _) => {
                    let t = now + rng.below(spread);
                    q.schedule(t, step);
                    oracle.insert((t, order), step);
                }
                (3, None) => {
                    let t = now + rng.below(spread);
                    slots[slot] = Some((q.schedule_in(slot, t, step), order, step));
                    oracle.insert((t, order), step);
                }
                (3 | 4, Some((p, o, _))) => {
                    let t = (p.time() + rng.below(40)).saturating_sub(20).max(now);
                    oracle.remove(&(p.time(), o)).expect("pending");
                    slots[slot] = Some((q.requeue(p, t, step), order, step));
                    oracle.insert((t, order), step);
                }
                (5, Some((p, o, _))) => {
                    oracle.remove(&(p.time(), o)).expect("pending");
                    q.cancel(p);
                    slots[slot] = None;
                }
                _ => {
                    let horizon = now + rng.below(10);
                    let want = match oracle.first_key_value() {
                        Some((&(t, o), &ev)) if t <= horizon => {
                            oracle.remove(&(t, o));
                            Some((t, ev))
                        }
                        _ => None,
                    };
                    let got = q.pop_before(horizon);
                    assert_eq!(got, want, "step {step}");
                    if let Some((t, ev)) = got {
                        now = t;
                        for s in slots.iter_mut() {
                            if s.is_some_and(|(_, _, e)| e == ev) {
                                *s = None;
                            }
                        }
                    }
                }
            }
            assert_eq!(q.len(), oracle.len());
            most = most.max(q.len());
            in_heap += slots
                .iter()
                .flatten()
                .filter(|(p, ..)| q.front_find(p.key()).is_none())
                .count();
        }
        // The heap held thousands, and moved events were found there.
        assert!(most > 4 * FRONT && in_heap > 0, "{most} {in_heap}");
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

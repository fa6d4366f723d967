//! Blocking IPC as the scheduler sees it (fs/pipe.c, net/unix/af_unix.c, the loopback UDP/TCP
//! socket paths, and a futex word): a bounded buffer with a queue of blocked readers and a
//! queue of blocked writers.
//!
//! - A write that fits is queued; a write that does not blocks the writer (pipes, AF_UNIX
//!   and TCP streams) or is dropped (UDP datagrams, futex posts). On TCP, waiting writers are
//!   served in FIFO order: a later write never overtakes a blocked one.
//! - A pipe holds whole pages (`struct pipe_buffer` slots; `round_pipe_size()`: a power of two
//!   of them, at least one). A write merges into the last page if its sub-page part fits there
//!   (`pipe_write()`'s `PIPE_BUF_FLAG_CAN_MERGE` path), else takes new slots; it blocks when
//!   neither is possible. A read that starts from a full pipe wakes one writer
//!   (`wait_event_interruptible_exclusive()` on `wr_wait`); if the read freed no slot, that
//!   writer finds the pipe still full and sleeps again: a spurious wake-up, which the model
//!   makes too (the writer is woken to retry its write). A writer that is not asleep writes
//!   whenever there is room, and one that wrote after waiting wakes the next while the pipe
//!   is not full (`wake_next_writer`).
//! - AF_UNIX wakes its blocked writers only once the send buffer has drained to a quarter:
//!   a consumed skb's `sock_wfree()` calls `unix_write_space()`, which wakes the socket's
//!   waiters (all of them: `sock_wait_for_wmem()` waits non-exclusively) only when
//!   `unix_writable()`, `sk_wmem_alloc << 2 <= sk_sndbuf`, holds. Until then a writer that
//!   is not asleep still writes while `sk_wmem_alloc < sk_sndbuf` (`sock_alloc_send_pskb()`),
//!   overtaking the sleeping ones. The quarter is taken of the payload bytes, exact for
//!   messages of one size (each skb's truesize is then the same).
//! - A read takes one datagram, or up to its maximum of a stream's bytes; on an empty
//!   channel the reader blocks.
//! - Hand-off: when a read frees room (AF_UNIX: drains to its quarter), the first blocked
//!   writers whose messages now fit have them queued at once and are woken with their write
//!   done; a write to a channel with a blocked reader is handed to that reader, who wakes
//!   with its read done. So a woken task finds its condition still true (the pipe's spurious
//!   wake-up aside), and no data is ever lost or duplicated — the same choice the futex module
//!   makes for mutexes (the kernel wakes waiters that retry).
//!
//! The CPU cost of each read and write (`machine::channel_op`) is charged by the kernel to the
//! task that does it, after the operation, also when it had blocked.

use std::collections::VecDeque;

use super::touched::Touched;
use crate::workload::{ChannelKind, ChannelSpec};

pub type TaskId = usize;

/// `sizeof(struct sk_buff)` and `sizeof(struct skb_shared_info)` on arm64/x86-64 (v6.1),
/// both cache-line aligned.
pub const SKB_STRUCT: u64 = 256;
pub const SKB_SHINFO: u64 = 320;

/// Whether the wake-up of a task blocked on a channel of `kind` is sync (`WF_SYNC`: the
/// waker is expected to sleep soon, which `wake_affine()` weighs); `writer` when the woken
/// task waited to write. Pipes wake readers and writers with
/// `wake_up_interruptible_sync_poll()` (`pipe_write()`, `pipe_read()`); every socket wakes
/// its readers so through `sock_def_readable()` (unix, UDP, and TCP, whose loopback receive
/// runs in the sender's softirq), unix sockets their writers too (`unix_write_space()`);
/// TCP's writers are woken by `sk_stream_write_space()` and a futex's waiters by
/// `wake_up_q()`, neither sync. A UDP sender never blocks.
pub fn wake_is_sync(kind: ChannelKind, writer: bool) -> bool {
    match kind {
        ChannelKind::Pipe | ChannelKind::Unix | ChannelKind::Udp => true,
        ChannelKind::Tcp => !writer,
        ChannelKind::Futex => false,
    }
}

/// Bytes one read or write of `bytes` on a channel of `kind` touches, for cache refills:
/// the data, and on a socket the skb that carries it. Queued data is memory of its own
/// (the skbs or pipe pages in flight), so it evicts what the CPU's other tasks had cached.
pub fn op_footprint(kind: ChannelKind, bytes: u64) -> u64 {
    match kind {
        ChannelKind::Pipe => bytes,
        ChannelKind::Unix | ChannelKind::Tcp | ChannelKind::Udp => bytes + SKB_STRUCT + SKB_SHINFO,
        ChannelKind::Futex => 0,
    }
}

/// What happened on a channel, for the results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChannelStats {
    /// Messages written (queued or handed to a reader) and their bytes.
    pub sends: u64,
    pub sent_bytes: u64,
    /// Reads completed and the bytes they took.
    pub recvs: u64,
    pub received_bytes: u64,
    /// Messages dropped because they did not fit (UDP, futex).
    pub drops: u64,
    /// Most bytes (units) ever queued.
    pub max_queued: u64,
    /// Times a writer blocked on a full channel, and a reader on an empty one.
    pub writer_blocks: u64,
    pub reader_blocks: u64,
    /// Pipe writers woken by a read that freed no slot, who sleep again.
    pub spurious_writer_wakeups: u64,
}

/// One channel's state.
#[derive(Debug, Clone)]
pub struct Channel {
    pub kind: ChannelKind,
    pub capacity: u64,
    /// Bytes (stream) or units (datagrams: a message takes its bytes, at least 1) queued.
    queued: u64,
    /// Datagram sizes in arrival order (empty for streams).
    messages: VecDeque<u64>,
    /// A pipe's occupied slots, the oldest first (empty for other kinds), and its slot count.
    bufs: VecDeque<PipeBuf>,
    max_bufs: usize,
    /// Blocked readers with the most bytes each will take.
    readers: VecDeque<(TaskId, u64)>,
    /// Blocked writers with the bytes of their message.
    writers: VecDeque<(TaskId, u64)>,
    pub stats: ChannelStats,
}

/// A pipe buffer's page (`PAGE_SIZE`).
const PAGE_SIZE: u64 = 4096;

/// `round_pipe_size()`: the bytes a pipe asked to hold `bytes` holds, whole pages, a power of
/// two of them, at least one.
pub fn round_pipe_size(bytes: u64) -> u64 {
    bytes.max(PAGE_SIZE).next_power_of_two()
}

/// A task whose blocked operation completed: wake it and charge the operation. With `retry`,
/// the operation did not complete (a pipe writer's spurious wake-up): the task is woken to
/// issue it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub task: TaskId,
    pub chan: usize,
    pub send: bool,
    pub bytes: u64,
    pub retry: bool,
}

/// The unread bytes `start..end` of one pipe page (`struct pipe_buffer`'s offset and len).
#[derive(Debug, Clone, Copy)]
struct PipeBuf {
    start: u64,
    end: u64,
}

/// What a send did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    /// Queued or handed to a reader.
    Sent,
    /// Did not fit and the channel drops what does not fit.
    Dropped,
    /// The writer sleeps until a reader makes room.
    Block,
}

/// Every channel of the workload, plus the list of completed blocked operations the last
/// call produced (reused, so steady state does not allocate).
#[derive(Debug, Clone, Default)]
pub struct Channels {
    pub chans: Vec<Channel>,
    completed: Vec<Completed>,
    /// Channels operated on since the last debug check ([`Channels::check_touched`]).
    touched: Touched,
}

impl Channel {
    fn new(spec: &ChannelSpec) -> Channel {
        let capacity = match spec.kind {
            ChannelKind::Pipe => round_pipe_size(spec.capacity),
            _ => spec.capacity,
        };
        Channel {
            kind: spec.kind,
            capacity,
            queued: 0,
            messages: VecDeque::new(),
            bufs: VecDeque::new(),
            max_bufs: (capacity / PAGE_SIZE) as usize,
            readers: VecDeque::new(),
            writers: VecDeque::new(),
            stats: ChannelStats::default(),
        }
    }

    /// Room a message of `bytes` takes.
    fn units(&self, bytes: u64) -> u64 {
        if self.kind.is_stream() {
            bytes
        } else {
            bytes.max(1)
        }
    }

    /// Whether a write of `bytes` can be done now; `waited`: by a writer woken from its wait
    /// (on a pipe, one that only takes new slots).
    fn fits(&self, bytes: u64, waited: bool) -> bool {
        if self.kind == ChannelKind::Pipe {
            let (_, new_bufs) = self.pipe_plan(bytes, waited);
            return self.bufs.len() + new_bufs <= self.max_bufs;
        }
        self.queued + self.units(bytes) <= self.capacity
    }

    /// Where `pipe_write()` puts `bytes`: the part merged into the last page and the new
    /// slots the rest takes. Only a write's first attempt merges (its sub-page part, if the
    /// pipe is not empty and that fits there); a writer woken from its wait is past that
    /// point and takes new slots.
    fn pipe_plan(&self, bytes: u64, waited: bool) -> (u64, usize) {
        let chars = bytes % PAGE_SIZE;
        let merged = match self.bufs.back() {
            Some(last) if !waited && chars > 0 && last.end + chars <= PAGE_SIZE => chars,
            _ => 0,
        };
        (merged, (bytes - merged).div_ceil(PAGE_SIZE) as usize)
    }

    /// `pipe_full()`: every slot is taken.
    fn pipe_full(&self) -> bool {
        self.kind == ChannelKind::Pipe && self.bufs.len() >= self.max_bufs
    }

    /// Put `bytes` that fit (as [`Channel::fits`] with `waited`) into the buffer.
    fn store(&mut self, bytes: u64, waited: bool) {
        self.queued += self.units(bytes);
        match self.kind {
            ChannelKind::Pipe => {
                let (merged, _) = self.pipe_plan(bytes, waited);
                if let Some(last) = self.bufs.back_mut() {
                    last.end += merged;
                }
                let mut rest = bytes - merged;
                while rest > 0 {
                    let len = rest.min(PAGE_SIZE);
                    self.bufs.push_back(PipeBuf { start: 0, end: len });
                    rest -= len;
                }
            }
            kind if !kind.is_stream() => self.messages.push_back(bytes),
            _ => {}
        }
        self.stats.max_queued = self.stats.max_queued.max(self.queued);
    }

    /// Whether blocked writers may be woken: AF_UNIX's `unix_writable()` (a quarter of the
    /// send buffer or less in use); elsewhere as soon as there is room.
    fn writers_may_wake(&self) -> bool {
        self.kind != ChannelKind::Unix || self.queued.saturating_mul(4) <= self.capacity
    }

    /// Whether a writer that is not asleep must queue behind the sleeping ones: FIFO on TCP;
    /// `pipe_write()` and AF_UNIX's `sock_alloc_send_pskb()` only look at the room.
    fn queues_behind_sleepers(&self) -> bool {
        self.kind == ChannelKind::Tcp && !self.writers.is_empty()
    }

    fn enqueue(&mut self, bytes: u64, waited: bool) {
        self.store(bytes, waited);
        self.stats.sends += 1;
        self.stats.sent_bytes += bytes;
    }

    /// Take one datagram or up to `max` bytes; the channel is not empty.
    fn dequeue(&mut self, max: u64) -> u64 {
        let got = if self.kind.is_stream() {
            let got = max.min(self.queued);
            // A pipe read goes through the pages in order and releases each it empties.
            let mut left = if self.kind == ChannelKind::Pipe {
                got
            } else {
                0
            };
            while left > 0 {
                let first = self
                    .bufs
                    .front_mut()
                    .expect("a pipe's bytes are in its pages");
                let take = left.min(first.end - first.start);
                first.start += take;
                left -= take;
                if first.start == first.end {
                    self.bufs.pop_front();
                }
            }
            got
        } else {
            self.messages
                .pop_front()
                .expect("a non-empty datagram channel has a message")
        };
        self.queued -= self.units(got);
        self.stats.recvs += 1;
        self.stats.received_bytes += got;
        got
    }

    /// Tasks blocked on this channel.
    pub fn waiters(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.readers
            .iter()
            .chain(self.writers.iter())
            .map(|&(t, _)| t)
    }

    /// Bytes (units) queued.
    pub fn queued(&self) -> u64 {
        self.queued
    }
}

impl Channels {
    pub fn new(specs: &[ChannelSpec]) -> Channels {
        Channels {
            chans: specs.iter().map(Channel::new).collect(),
            completed: Vec::new(),
            touched: Touched::default(),
        }
    }

    /// `write()`/`send()` of one message by `task`; `waited`: the retry of a writer woken
    /// without its write done ([`Completed::retry`]).
    pub fn send(&mut self, c: usize, task: TaskId, bytes: u64, waited: bool) -> SendOutcome {
        self.touched.mark(c);
        let ch = &mut self.chans[c];
        if !ch.readers.is_empty() {
            // Readers wait, so the channel is empty: the message goes straight to them (a
            // stream's rest to the next readers, then into the buffer, where it fits since a
            // blocking channel's messages are no bigger than its capacity).
            ch.stats.sends += 1;
            ch.stats.sent_bytes += bytes;
            let mut rest = bytes;
            while let Some((reader, max)) = ch.readers.pop_front() {
                let got = if ch.kind.is_stream() {
                    rest.min(max)
                } else {
                    rest
                };
                rest -= got;
                ch.stats.recvs += 1;
                ch.stats.received_bytes += got;
                self.completed.push(Completed {
                    task: reader,
                    chan: c,
                    send: false,
                    bytes: got,
                    retry: false,
                });
                if rest == 0 {
                    break;
                }
            }
            if rest > 0 {
                ch.store(rest, waited);
            }
            return SendOutcome::Sent;
        }
        if !ch.queues_behind_sleepers() && ch.fits(bytes, waited) {
            ch.enqueue(bytes, waited);
            return SendOutcome::Sent;
        }
        if ch.kind.drops_when_full() {
            ch.stats.drops += 1;
            return SendOutcome::Dropped;
        }
        ch.stats.writer_blocks += 1;
        ch.writers.push_back((task, bytes));
        SendOutcome::Block
    }

    /// `read()`/`recv()` by `task`: the bytes read, or `None` when it blocks.
    pub fn recv(&mut self, c: usize, task: TaskId, max: u64) -> Option<u64> {
        self.touched.mark(c);
        let ch = &mut self.chans[c];
        if ch.queued == 0 {
            debug_assert!(ch.writers.is_empty(), "a writer waits on an empty channel");
            ch.stats.reader_blocks += 1;
            ch.readers.push_back((task, max));
            return None;
        }
        let was_full = ch.pipe_full();
        let got = ch.dequeue(max);
        // Room was made: blocked writers whose messages fit now complete, in order (a pipe's
        // until it is full again: each wakes the next only while it is not).
        if !ch.writers_may_wake() {
            return Some(got);
        }
        while let Some(&(w, bytes)) = ch.writers.front() {
            if !ch.fits(bytes, true) {
                if was_full && ch.kind == ChannelKind::Pipe {
                    // `pipe_read()` wakes the first writer whatever it freed: no slot was, so
                    // the writer will find the pipe full and sleep again.
                    ch.writers.pop_front();
                    ch.stats.spurious_writer_wakeups += 1;
                    self.completed.push(Completed {
                        task: w,
                        chan: c,
                        send: true,
                        bytes,
                        retry: true,
                    });
                }
                break;
            }
            ch.writers.pop_front();
            ch.enqueue(bytes, true);
            self.completed.push(Completed {
                task: w,
                chan: c,
                send: true,
                bytes,
                retry: false,
            });
            if ch.pipe_full() {
                break;
            }
        }
        Some(got)
    }

    /// Whether the last calls completed a blocked operation.
    pub fn has_completed(&self) -> bool {
        !self.completed.is_empty()
    }

    /// The blocked operations the last calls completed (their tasks must be woken); the
    /// caller hands the vector back with `restore_completed` once drained.
    pub fn take_completed(&mut self) -> Vec<Completed> {
        std::mem::take(&mut self.completed)
    }

    pub fn restore_completed(&mut self, mut v: Vec<Completed>) {
        v.clear();
        self.completed = v;
    }

    /// Forget a task that exits while blocked (killed at the end of the run).
    pub fn forget(&mut self, task: TaskId) {
        for (c, ch) in self.chans.iter_mut().enumerate() {
            let waiting = ch.readers.len() + ch.writers.len();
            ch.readers.retain(|&(t, _)| t != task);
            ch.writers.retain(|&(t, _)| t != task);
            if ch.readers.len() + ch.writers.len() != waiting {
                self.touched.mark(c);
            }
        }
    }

    /// The buffer rules of every channel ([`Channel::check_rules`]), with the datagrams and
    /// pipe pages added up: the periodic full check of debug builds, and the unit tests'.
    pub fn check_invariants(&self) {
        for (i, ch) in self.chans.iter().enumerate() {
            ch.check_rules(i);
            ch.check_contents(i);
        }
    }

    /// What a full check walks: the channels, their datagrams or pages and their waiters.
    #[cfg(debug_assertions)]
    pub fn check_items(&self) -> usize {
        let per =
            |c: &Channel| 1 + c.messages.len() + c.bufs.len() + c.readers.len() + c.writers.len();
        self.chans.iter().map(per).sum()
    }

    /// The buffer rules of the channels operated on since the last call, each in O(1), and
    /// the tasks at either end of their wait queues (where operations add and take them)
    /// not on a runqueue (`queued`): the per-event check of debug builds.
    #[cfg(debug_assertions)]
    pub fn check_touched(&mut self, queued: impl Fn(TaskId) -> bool) {
        while let Some(i) = self.touched.pop() {
            let ch = &self.chans[i];
            ch.check_rules(i);
            for q in [&ch.readers, &ch.writers] {
                if let (Some(&(first, _)), Some(&(last, _))) = (q.front(), q.back()) {
                    for t in [first, last] {
                        assert!(!queued(t), "task {t} blocked on channel {i} is queued");
                    }
                }
            }
        }
    }
}

impl Channel {
    /// The rules an operation can break, in O(1): never more queued than the capacity;
    /// readers wait only on an empty channel; writers only while their message does not fit
    /// or (AF_UNIX) the buffer is more than a quarter full; no more read than written; a
    /// pipe within its slots, its end pages neither empty nor overfull; datagrams or pages
    /// exactly when something is queued.
    fn check_rules(&self, i: usize) {
        assert!(
            self.queued <= self.capacity,
            "channel {i}: {} queued over capacity {}",
            self.queued,
            self.capacity
        );
        assert!(
            self.readers.is_empty() || self.queued == 0,
            "channel {i}: a reader waits while {} bytes are queued",
            self.queued
        );
        if let Some(&(_, bytes)) = self.writers.front() {
            assert!(
                !self.fits(bytes, true) || !self.writers_may_wake(),
                "channel {i}: a writer waits though its message fits"
            );
        }
        let s = &self.stats;
        assert!(
            s.received_bytes <= s.sent_bytes,
            "channel {i}: read more than written"
        );
        if self.kind == ChannelKind::Pipe {
            assert!(
                self.bufs.len() <= self.max_bufs,
                "channel {i}: pipe slots overrun"
            );
            assert_eq!(
                self.bufs.is_empty(),
                self.queued == 0,
                "channel {i}: pipe pages do not add up"
            );
            assert!(
                self.bufs
                    .front()
                    .into_iter()
                    .chain(self.bufs.back())
                    .all(|b| b.start < b.end && b.end <= PAGE_SIZE),
                "channel {i}: an empty or overfull pipe page"
            );
        } else if !self.kind.is_stream() {
            assert_eq!(
                self.messages.is_empty(),
                self.queued == 0,
                "channel {i}: datagrams do not add up"
            );
        }
    }

    /// What is queued, added up: datagram sizes, or pipe pages (none empty or overfull).
    fn check_contents(&self, i: usize) {
        if !self.kind.is_stream() {
            let units: u64 = self.messages.iter().map(|&b| b.max(1)).sum();
            assert_eq!(units, self.queued, "channel {i}: datagrams do not add up");
        }
        if self.kind == ChannelKind::Pipe {
            let bytes: u64 = self.bufs.iter().map(|b| b.end - b.start).sum();
            assert_eq!(bytes, self.queued, "channel {i}: pipe pages do not add up");
            assert!(
                self.bufs
                    .iter()
                    .all(|b| b.start < b.end && b.end <= PAGE_SIZE),
                "channel {i}: an empty or overfull pipe page"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chans(kind: ChannelKind, capacity: u64) -> Channels {
        Channels::new(&[ChannelSpec {
            name: "c".into(),
            kind,
            capacity,
        }])
    }

    #[test]
    fn a_pipe_holds_whole_pages_and_small_writes_merge() {
        assert_eq!(round_pipe_size(1), 4096);
        assert_eq!(round_pipe_size(65_536), 65_536);
        assert_eq!(round_pipe_size(65_537), 131_072);
        // One page: forty 100-byte writes merge into it; the 41st fits neither it nor a slot.
        let mut c = chans(ChannelKind::Pipe, 300);
        assert_eq!(c.chans[0].capacity, 4096);
        for _ in 0..40 {
            assert_eq!(c.send(0, 1, 100, false), SendOutcome::Sent);
        }
        assert_eq!(c.send(0, 2, 100, false), SendOutcome::Block);
        assert_eq!(c.chans[0].queued(), 4000);
        c.check_invariants();
    }

    #[test]
    fn a_read_from_a_full_pipe_wakes_a_writer_that_finds_it_still_full() {
        let mut c = chans(ChannelKind::Pipe, 4096);
        for _ in 0..40 {
            c.send(0, 1, 100, false);
        }
        assert_eq!(c.send(0, 2, 100, false), SendOutcome::Block);
        // The read frees no slot: the writer is woken to retry, and sleeps again.
        assert_eq!(c.recv(0, 3, 100), Some(100));
        let done = c.take_completed();
        assert_eq!(
            done,
            vec![Completed {
                task: 2,
                chan: 0,
                send: true,
                bytes: 100,
                retry: true
            }]
        );
        c.restore_completed(done);
        assert_eq!(c.send(0, 2, 100, true), SendOutcome::Block);
        assert_eq!(c.chans[0].stats.spurious_writer_wakeups, 1);
        c.check_invariants();
        // The read that empties the page frees its slot: the writer's write is done.
        for _ in 0..38 {
            assert_eq!(c.recv(0, 3, 100), Some(100));
            let done = c.take_completed();
            assert_eq!(done.len(), 1);
            assert!(done[0].retry);
            c.restore_completed(done);
            assert_eq!(c.send(0, 2, 100, true), SendOutcome::Block);
        }
        assert_eq!(c.recv(0, 3, 100), Some(100));
        let done = c.take_completed();
        assert_eq!((done.len(), done[0].retry), (1, false));
        assert_eq!(c.chans[0].queued(), 100);
        assert_eq!(c.chans[0].stats.spurious_writer_wakeups, 39);
        c.check_invariants();
    }

    #[test]
    fn a_woken_pipe_writer_takes_a_new_slot_and_wakes_the_next_only_while_there_is_room() {
        // Two pages, both full of merged writes; two writers wait.
        let mut c = chans(ChannelKind::Pipe, 8192);
        for _ in 0..80 {
            c.send(0, 1, 100, false);
        }
        assert_eq!(c.send(0, 2, 100, false), SendOutcome::Block);
        assert_eq!(c.send(0, 3, 100, false), SendOutcome::Block);
        let mut reads = 0;
        loop {
            c.recv(0, 4, 100);
            reads += 1;
            let done = c.take_completed();
            let finished: Vec<_> = done.iter().filter(|d| !d.retry).map(|d| d.task).collect();
            let retried: Vec<_> = done.iter().filter(|d| d.retry).map(|d| d.task).collect();
            c.restore_completed(done);
            for t in retried {
                assert_eq!(c.send(0, t, 100, true), SendOutcome::Block);
            }
            if !finished.is_empty() {
                // The first page emptied: one writer took the free slot, and the pipe was
                // full again, so the other still waits (its message would merge, but a woken
                // writer does not merge).
                assert_eq!((reads, finished.len()), (40, 1));
                break;
            }
        }
        assert_eq!(c.chans[0].writers.len(), 1);
        assert_eq!(c.chans[0].queued(), 4000 + 100);
        c.check_invariants();
    }

    #[test]
    fn af_unix_wakes_its_writers_only_at_a_quarter_of_the_send_buffer() {
        // Eight 100-byte messages fill the buffer; `unix_writable()` holds again at two.
        let mut c = chans(ChannelKind::Unix, 800);
        for _ in 0..8 {
            assert_eq!(c.send(0, 1, 100, false), SendOutcome::Sent);
        }
        assert_eq!(c.send(0, 2, 100, false), SendOutcome::Block);
        assert_eq!(c.send(0, 3, 100, false), SendOutcome::Block);
        for left in (3..8).rev() {
            assert_eq!(c.recv(0, 9, 100), Some(100));
            assert!(c.take_completed().is_empty(), "woken with {left} queued");
            c.check_invariants();
        }
        // A writer that is not asleep writes while there is room, ahead of the sleepers.
        assert_eq!(c.send(0, 4, 100, false), SendOutcome::Sent);
        assert_eq!(c.recv(0, 9, 100), Some(100));
        assert!(c.take_completed().is_empty());
        // Two left, a quarter: both sleepers are woken with their writes done, in order.
        assert_eq!(c.recv(0, 9, 100), Some(100));
        let woken: Vec<_> = c.take_completed().iter().map(|d| d.task).collect();
        assert_eq!(woken, vec![2, 3]);
        assert_eq!(c.chans[0].queued(), 400);
        c.check_invariants();
    }

    #[test]
    fn empty_channel_blocks_the_reader_and_a_write_is_handed_to_it() {
        let mut c = chans(ChannelKind::Unix, 1000);
        assert_eq!(c.recv(0, 5, 100), None);
        assert_eq!(c.send(0, 6, 300, false), SendOutcome::Sent);
        let done = c.take_completed();
        // A stream read takes at most its maximum; the rest stays queued.
        assert_eq!(done[0].task, 5);
        assert_eq!(done[0].bytes, 100);
        assert_eq!(c.chans[0].queued(), 200);
        c.check_invariants();
    }

    #[test]
    fn datagrams_that_do_not_fit_are_dropped() {
        let mut c = chans(ChannelKind::Udp, 100);
        assert_eq!(c.send(0, 1, 64, false), SendOutcome::Sent);
        assert_eq!(c.send(0, 1, 64, false), SendOutcome::Dropped);
        assert_eq!(c.recv(0, 2, u64::MAX), Some(64));
        assert_eq!(c.chans[0].stats.drops, 1);
    }

    #[test]
    fn a_zero_capacity_futex_post_reaches_only_a_waiter() {
        let mut c = chans(ChannelKind::Futex, 0);
        assert_eq!(c.send(0, 1, 0, false), SendOutcome::Dropped);
        assert_eq!(c.recv(0, 2, u64::MAX), None);
        assert_eq!(c.send(0, 1, 0, false), SendOutcome::Sent);
        assert_eq!(c.take_completed()[0].task, 2);
        assert_eq!(c.chans[0].stats.max_queued, 0);
        c.check_invariants();
    }
}

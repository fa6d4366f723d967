//! The trace's ring buffer (`kernel/trace/ring_buffer.c`): the simulation records each event
//! in a compact binary form and goes on, and a reader thread turns the records into the
//! trace file, as the kernel records events in binary and leaves the formatting to the tool
//! that reads them (`trace-cmd report`). Formatting a text trace costs about a third of the
//! simulation itself and writing it about as much again; recorded here, both
//! run beside the simulation on a second core.
//!
//! A `Deferred` observer wraps the observer that writes the file (the text or the
//! trace.dat writer): every event reaches it, in order, with the same fields, so the bytes
//! are the same as when it runs on the simulation's thread. Records travel in batches; the
//! strings an event borrows (comms, a trace_marker line) are copied into the batch, and
//! batches circulate between the two threads, so recording allocates nothing once the
//! first few batches exist.

use schedlab_base::CpuSet;
use schedlab_model::kernel::tracepoint::{Fields, Observer, TaskRef, TraceEvent, Tracepoint};
use std::io;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Records in a batch before it is handed over.
const BATCH_RECORDS: usize = 4096;
/// Bytes of copied strings in a batch before it is handed over.
const BATCH_BYTES: usize = 256 << 10;
/// Batches in flight to the reader before a hand-over waits for it.
const DEPTH: usize = 2;

/// A string copied into the batch.
#[derive(Clone, Copy)]
struct Text {
    start: u32,
    len: u32,
}

/// A task as an event names it, its comm copied into the batch.
#[derive(Clone, Copy)]
struct Task {
    comm: Text,
    pid: u32,
    prio: i32,
}

/// An event with its tasks and strings copied into the batch and its span into the batch's
/// list (a `CpuSet` is large and rare in the stream): an index there.
type Event = Tracepoint<Task, Text, usize>;

/// One event as recorded: when, on which CPU, in which task.
#[derive(Clone, Copy)]
struct Record {
    ts: u64,
    cpu: usize,
    current: Option<Task>,
    event: Event,
}

/// Records and the strings and spans they refer to.
struct Batch {
    records: Vec<Record>,
    strings: String,
    spans: Vec<CpuSet>,
}

impl Batch {
    /// An empty batch with room for a full one.
    fn new() -> Batch {
        Batch {
            records: Vec::with_capacity(BATCH_RECORDS),
            strings: String::with_capacity(BATCH_BYTES + 4096),
            spans: Vec::new(),
        }
    }

    fn is_full(&self) -> bool {
        self.records.len() >= BATCH_RECORDS || self.strings.len() >= BATCH_BYTES
    }

    fn clear(&mut self) {
        self.records.clear();
        self.strings.clear();
        self.spans.clear();
    }

    /// Give every record to `out`, in order.
    fn replay(&self, out: &mut dyn Observer) {
        let mut fields = Replay(self);
        for r in &self.records {
            let current = r.current.map(|t| fields.task(t));
            out.event(r.ts, r.cpu, current, &r.event.map(&mut fields));
        }
    }
}

/// Recording: an event's borrowed fields copied into the batch.
impl<'a> Fields<TaskRef<'a>, &'a str, &'a CpuSet> for Batch {
    type Task = Task;
    type Str = Text;
    type Mask = usize;

    #[inline]
    fn task(&mut self, t: TaskRef<'a>) -> Task {
        Task {
            comm: self.str(t.comm),
            pid: t.pid,
            prio: t.prio,
        }
    }

    #[inline]
    fn str(&mut self, s: &'a str) -> Text {
        let start = self.strings.len() as u32;
        self.strings.push_str(s);
        Text {
            start,
            len: s.len() as u32,
        }
    }

    fn mask(&mut self, m: &'a CpuSet) -> usize {
        self.spans.push(*m);
        self.spans.len() - 1
    }
}

/// Replaying: a recorded event's fields read back from its batch.
struct Replay<'b>(&'b Batch);

impl<'b> Fields<Task, Text, usize> for Replay<'b> {
    type Task = TaskRef<'b>;
    type Str = &'b str;
    type Mask = &'b CpuSet;

    fn task(&mut self, t: Task) -> TaskRef<'b> {
        TaskRef {
            comm: self.str(t.comm),
            pid: t.pid,
            prio: t.prio,
        }
    }

    fn str(&mut self, t: Text) -> &'b str {
        &self.0.strings[t.start as usize..(t.start + t.len) as usize]
    }

    fn mask(&mut self, m: usize) -> &'b CpuSet {
        &self.0.spans[m]
    }
}

/// An observer run on a reader thread of its own, fed the recorded events.
pub struct Deferred {
    batch: Batch,
    /// Full batches to the reader; `None` once finished.
    full: Option<SyncSender<Batch>>,
    /// Replayed batches back from the reader, for reuse.
    empty: Receiver<Batch>,
    reader: Option<JoinHandle<io::Result<()>>>,
}

impl Deferred {
    /// Start the thread that feeds `out` (named `name`); `out.finish()` runs there at the end.
    pub fn new<O: Observer + Send + 'static>(mut out: O, name: &str) -> io::Result<Deferred> {
        let (full, to_read) = sync_channel::<Batch>(DEPTH);
        let (give_back, empty) = channel();
        let reader = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for mut batch in to_read {
                    batch.replay(&mut out);
                    batch.clear();
                    // The recorder may be finishing already and take no batch back.
                    let _ = give_back.send(batch);
                }
                out.finish()
            })?;
        Ok(Deferred {
            batch: Batch::new(),
            full: Some(full),
            empty,
            reader: Some(reader),
        })
    }

    /// Hand the batch to the reader and take an empty one.
    fn hand_over(&mut self) {
        let Some(full) = &self.full else {
            self.batch.clear();
            return;
        };
        // Batches circulate: a new one is made only while none has come back, so at most
        // DEPTH + 2 exist (one recording, DEPTH queued, one being read).
        let spare = self.empty.try_recv().unwrap_or_else(|_| Batch::new());
        let batch = std::mem::replace(&mut self.batch, spare);
        if full.send(batch).is_err() {
            // The reader is gone (it panicked): `finish` reports it, and later batches are
            // dropped.
            self.full = None;
        }
    }

    /// Wait for the reader: the observer's result.
    fn join(&mut self) -> io::Result<()> {
        self.full = None;
        match self.reader.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the trace reader thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Observer for Deferred {
    #[inline]
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        let current = current.map(|t| Fields::task(&mut self.batch, t));
        let event = ev.map(&mut self.batch);
        self.batch.records.push(Record {
            ts,
            cpu,
            current,
            event,
        });
        if self.batch.is_full() {
            self.hand_over();
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.batch.records.is_empty() {
            self.hand_over();
        }
        self.join()
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        // An unfinished recorder (a failed run) still waits for its reader, which stops
        // once the sender is gone.
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ftrace;
    use schedlab_model::kernel::tracepoint::{
        EventSelection, PeltFields, UclampFields, PWR_EVENT_EXIT,
    };
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test can read once the reader thread is done.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Every kind of event, with tasks, comms, marks and spans that vary from one to the next.
    fn feed(out: &mut dyn Observer, n: usize) {
        let comms = ["task0-0", "rt-app", "a-long-comm-name", "tâche"];
        let avg = PeltFields {
            load: 1,
            runnable: 2,
            util: 3,
            update_time: 4,
        };
        let clamps = UclampFields {
            util_avg: 5,
            uclamp_avg: 6,
            uclamp_min: 7,
            uclamp_max: 8,
        };
        let span: CpuSet = [0, 3].into_iter().collect();
        for i in 0..n {
            let t = |k: usize| TaskRef {
                comm: comms[(i + k) % comms.len()],
                pid: 1000 + ((i + k) % 7) as u32,
                prio: 100 + (i % 40) as i32,
            };
            let (p, q, cpu) = (t(0), t(1), i % 4);
            let mark = format!(
                "rtapp_loop: event=start thread_loop={i} {}",
                "x".repeat(i % 300)
            );
            let events = [
                TraceEvent::SchedSwitch {
                    prev: p,
                    prev_state: "S",
                    next: q,
                    cpu,
                },
                TraceEvent::SchedWaking { p, target_cpu: cpu },
                TraceEvent::SchedWakeup { p, target_cpu: cpu },
                TraceEvent::SchedWakeupNew { p, target_cpu: cpu },
                TraceEvent::SchedMigrateTask {
                    p,
                    orig_cpu: cpu,
                    dest_cpu: 3 - cpu,
                },
                TraceEvent::SchedProcessFork {
                    parent: p,
                    child: q,
                },
                TraceEvent::SchedProcessExit { p },
                TraceEvent::CpuIdle {
                    state: if i % 2 == 0 { 1 } else { PWR_EVENT_EXIT },
                    cpu,
                },
                TraceEvent::CpuFrequency { khz: 450_000, cpu },
                TraceEvent::SchedPeltSe { cpu, p, avg },
                TraceEvent::SchedPeltCfs { cpu, avg },
                TraceEvent::SchedPeltRt { cpu, avg },
                TraceEvent::SchedPeltDl { cpu, avg },
                TraceEvent::TaskRename { p, oldcomm: q.comm },
                TraceEvent::SchedUtilEstSe {
                    cpu,
                    p,
                    enqueued: 9,
                    ewma: 10,
                    util: 11,
                },
                TraceEvent::SchedUtilEstCfs {
                    cpu,
                    enqueued: 12,
                    ewma: 13,
                    util: 14,
                },
                TraceEvent::SchedCpuCapacity {
                    cpu,
                    capacity: 15,
                    capacity_orig: 16,
                    capacity_curr: 17,
                },
                TraceEvent::UclampUtilSe { cpu, p, clamps },
                TraceEvent::UclampUtilCfs { cpu, clamps },
                TraceEvent::SchedOverutilized {
                    overutilized: i % 3 == 0,
                    span: &span,
                },
                TraceEvent::Print { text: &mark },
            ];
            let current = (i % 5 != 0).then_some(q);
            out.event(i as u64 * 1000, cpu, current, &events[i % events.len()]);
        }
    }

    fn text_trace<W: Write>(out: W) -> Ftrace<W> {
        Ftrace::with_options(out, 4, EventSelection::parse("all").unwrap(), true)
    }

    /// The ring buffer hands the writer every event in order with every field, across many
    /// batches (by record count and by string bytes): the trace is the bytes the writer
    /// makes on the simulation's thread.
    #[test]
    fn the_deferred_trace_is_the_direct_one() {
        let n = 3 * BATCH_RECORDS + 17;
        let mut direct = text_trace(Vec::new());
        feed(&mut direct, n);
        let want = direct.into_inner().unwrap();
        let out = Shared::default();
        let mut deferred = Deferred::new(text_trace(out.clone()), "test-reader").unwrap();
        feed(&mut deferred, n);
        deferred.finish().unwrap();
        assert!(want.len() > 2 * BATCH_BYTES);
        assert!(*out.0.lock().unwrap() == want);
    }

    /// A writer that fails after some bytes, as a full disk does.
    struct Full(usize);

    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.0 < b.len() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_writers_error_is_reported() {
        let mut deferred = Deferred::new(text_trace(Full(100)), "test-reader").unwrap();
        feed(&mut deferred, 2 * BATCH_RECORDS);
        let e = deferred.finish().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    }
}

//! The ftrace text trace, line for line as `trace-cmd report` prints it:
//! `<comm>-<pid> [<cpu>] <secs>.<ns>: <event>: <fields>` with the field formats of the v6.1
//! tracepoints (`include/trace/events/sched.h`, `power.h`, `task.h`) and of LISA's module.
//! The time is the trace clock: the simulated time plus `CLOCK_OFFSET_NS`, as in trace.dat.
//!
//! The file starts `# tracer: nop` (the line every Perfetto build looks for to recognise a
//! text trace; LISA and trace-cmd-style parsers skip `#` lines) and then `cpus=N` (where
//! LISA reads the CPU count). With `counters`, utilisation, clamp and overutilized values
//! also become atrace counter lines (`tracing_mark_write: C|pid|name|value`), which
//! Perfetto's text importer turns into counter tracks: per task `util`, per CPU
//! `cpuN util`, `cpuN util clamped`, `cpuN uclamp_min`, `cpuN uclamp_max`, and
//! `overutilized`, the CPU-wide ones on the idle process (pid 0).
//!
//! Lines are formatted by hand into one reused buffer (`text.rs`), with the tasks' comm, pid
//! and prio fields copied from their kept renderings (`task_text.rs`), and written out 256
//! KiB at a time. The CLI runs this writer on the ring buffer's reader thread
//! (`ring_buffer.rs`).

use super::task_text::{self, TaskTexts, TASK_MAX};
use super::text::{digits, nine_digits, put_first, right, uint, uint_left};
use schedlab_model::kernel::tracepoint::{
    EventSelection, Observer, TaskRef, TraceEvent, IDLE_COMM,
};
use std::io::{self, Write};

/// Bytes gathered before they are written.
const FLUSH_AT: usize = 256 << 10;
/// `<secs>.<ns>: `: at most 11 digits of seconds (`u64::MAX` ns), the dot, nine digits and
/// `: `.
const TIME_MAX: usize = 23;
/// The longest line start put together in one piece: a kept `<comm>-<pid>`, ` [<cpu>] `
/// (at most 20 digits) and the time.
const STAMP_MAX: usize = TASK_MAX + 24 + TIME_MAX;
/// The task a line runs in when no task runs.
const IDLE_TASK: TaskRef<'static> = TaskRef {
    comm: IDLE_COMM,
    pid: 0,
    prio: 120,
};

pub struct Ftrace<W: Write> {
    out: W,
    buf: Vec<u8>,
    /// The selectable events this trace shows (the kernel may emit more, for counters).
    shown: EventSelection,
    counters: bool,
    /// ` [ccc] ` of each CPU below 1000.
    cpu_fields: Vec<[u8; 7]>,
    /// The kept renderings of the tasks named.
    tasks: TaskTexts,
    /// `<secs>.<ns>: ` of the last timestamp rendered, `(ts, bytes, length)`: consecutive
    /// lines often share it.
    time: (u64, [u8; TIME_MAX], usize),
    /// The whole seconds rendered at the start of `time`, and their length with the dot:
    /// they change once a simulated second.
    secs: (u64, usize),
    /// The first write error; later writes are skipped and `finish` reports it.
    error: Option<io::Error>,
}

impl<W: Write> Ftrace<W> {
    /// A trace of every event the kernel emits, without counter lines.
    pub fn new(out: W, nr_cpus: usize) -> Self {
        Ftrace::with_options(out, nr_cpus, all_events(), false)
    }

    /// A trace showing the selectable events of `shown` (others always show), and the
    /// atrace counter lines when `counters`.
    pub fn with_options(out: W, nr_cpus: usize, shown: EventSelection, counters: bool) -> Self {
        let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
        buf.extend_from_slice(b"# tracer: nop\n#\ncpus=");
        uint(&mut buf, nr_cpus as u64);
        buf.push(b'\n');
        Ftrace {
            out,
            buf,
            shown,
            counters,
            cpu_fields: (0..nr_cpus.min(1000)).map(cpu_field).collect(),
            tasks: TaskTexts::new(nr_cpus),
            time: (0, *b"0.000000000: \0\0\0\0\0\0\0\0\0\0", 13),
            secs: (0, 2),
            error: None,
        }
    }

    /// The writer, once flushed (for tests).
    pub fn into_inner(mut self) -> io::Result<W> {
        Observer::finish(&mut self)?;
        Ok(self.out)
    }

    /// `<comm>-<pid> [<cpu>] <secs>.<ns>: ` of the task running on `cpu`.
    fn prefix(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>) {
        let t = current.unwrap_or(IDLE_TASK);
        if ts != self.time.0 {
            self.render_time(ts);
        }
        // The kept `<comm>-<pid>`, ` [ccc] ` and the time are put together in one piece of
        // fixed size; a task not kept is formatted in front of it.
        let mut stamp = [0; STAMP_MAX];
        let mut n = 0;
        if let Some(r) = self.tasks.of(t) {
            let (task, len) = r.task.padded();
            stamp[..TASK_MAX].copy_from_slice(task);
            n = len;
        } else {
            right(&mut self.buf, t.comm, 16);
            self.buf.push(b'-');
            uint_left(&mut self.buf, t.pid.into(), 5);
        }
        if let Some(field) = self.cpu_fields.get(cpu) {
            stamp[n..n + 7].copy_from_slice(field);
            n += 7;
        } else if cpu < 1000 {
            stamp[n..n + 7].copy_from_slice(&cpu_field(cpu));
            n += 7;
        } else {
            stamp[n..n + 2].copy_from_slice(b" [");
            n += 2;
            n += digits(&mut stamp[n..], cpu as u64);
            stamp[n..n + 2].copy_from_slice(b"] ");
            n += 2;
        }
        stamp[n..n + TIME_MAX].copy_from_slice(&self.time.1);
        n += self.time.2;
        put_first(&mut self.buf, &stamp, n);
    }

    /// Render `<secs>.<ns>: ` of `ts` into `time`.
    fn render_time(&mut self, ts: u64) {
        let secs = ts / 1_000_000_000;
        if secs != self.secs.0 {
            let n = digits(&mut self.time.1, secs);
            self.time.1[n] = b'.';
            self.secs = (secs, n + 1);
        }
        let n = self.secs.1;
        nine_digits(&mut self.time.1[n..n + 9], ts % 1_000_000_000);
        self.time.1[n + 9..n + 11].copy_from_slice(b": ");
        self.time.0 = ts;
        self.time.2 = n + 11;
    }

    fn line(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        self.prefix(ts, cpu, current);
        let b = &mut self.buf;
        let tasks = &mut self.tasks;
        match *ev {
            TraceEvent::SchedSwitch {
                prev,
                prev_state,
                next,
                cpu,
            } => {
                b.extend_from_slice(b"sched_switch: ");
                switch_fields(b, tasks, prev, cpu, false);
                b.extend_from_slice(b" prev_state=");
                b.extend_from_slice(prev_state.as_bytes());
                b.extend_from_slice(b" ==> ");
                switch_fields(b, tasks, next, cpu, true);
            }
            TraceEvent::SchedWaking { p, target_cpu } => {
                wakeup(b, tasks, b"sched_waking", p, target_cpu)
            }
            TraceEvent::SchedWakeup { p, target_cpu } => {
                wakeup(b, tasks, b"sched_wakeup", p, target_cpu)
            }
            TraceEvent::SchedWakeupNew { p, target_cpu } => {
                wakeup(b, tasks, b"sched_wakeup_new", p, target_cpu)
            }
            TraceEvent::SchedMigrateTask {
                p,
                orig_cpu,
                dest_cpu,
            } => {
                b.extend_from_slice(b"sched_migrate_task: ");
                comm_pid_prio(b, tasks, p);
                field(b, b" orig_cpu=", orig_cpu as u64);
                field(b, b" dest_cpu=", dest_cpu as u64);
            }
            TraceEvent::SchedProcessFork { parent, child } => {
                b.extend_from_slice(b"sched_process_fork: comm=");
                b.extend_from_slice(parent.comm.as_bytes());
                field(b, b" pid=", parent.pid.into());
                b.extend_from_slice(b" child_comm=");
                b.extend_from_slice(child.comm.as_bytes());
                field(b, b" child_pid=", child.pid.into());
            }
            TraceEvent::SchedProcessExit { p } => {
                b.extend_from_slice(b"sched_process_exit: ");
                comm_pid_prio(b, tasks, p);
            }
            TraceEvent::TaskRename { p, oldcomm } => {
                field(b, b"task_rename: pid=", p.pid.into());
                b.extend_from_slice(b" oldcomm=");
                b.extend_from_slice(oldcomm.as_bytes());
                b.extend_from_slice(b" newcomm=");
                b.extend_from_slice(p.comm.as_bytes());
                b.extend_from_slice(b" oom_score_adj=0");
            }
            TraceEvent::CpuIdle { state, cpu } => {
                // The tracepoint's state is a u32 printed as an unsigned long: exit is
                // 4294967295.
                field(b, b"cpu_idle: state=", state.into());
                field(b, b" cpu_id=", cpu as u64);
            }
            TraceEvent::CpuFrequency { khz, cpu } => {
                field(b, b"cpu_frequency: state=", khz.into());
                field(b, b" cpu_id=", cpu as u64);
            }
            TraceEvent::SchedPeltSe { cpu, p, avg } => {
                field(b, b"sched_pelt_se: cpu=", cpu as u64);
                b.extend_from_slice(b" path=(null) comm=");
                b.extend_from_slice(p.comm.as_bytes());
                field(b, b" pid=", p.pid.into());
                pelt(b, avg);
            }
            TraceEvent::SchedPeltCfs { cpu, avg } => {
                field(b, b"sched_pelt_cfs: cpu=", cpu as u64);
                b.extend_from_slice(b" path=/");
                pelt(b, avg);
            }
            TraceEvent::SchedPeltRt { cpu, avg } => {
                field(b, b"sched_pelt_rt: cpu=", cpu as u64);
                pelt(b, avg);
            }
            TraceEvent::SchedPeltDl { cpu, avg } => {
                field(b, b"sched_pelt_dl: cpu=", cpu as u64);
                pelt(b, avg);
            }
            TraceEvent::SchedUtilEstSe {
                cpu,
                p,
                enqueued,
                ewma,
                util,
            } => {
                field(b, b"sched_util_est_se: cpu=", cpu as u64);
                b.extend_from_slice(b" path=(null) comm=");
                b.extend_from_slice(p.comm.as_bytes());
                field(b, b" pid=", p.pid.into());
                util_est(b, enqueued, ewma, util);
            }
            TraceEvent::SchedUtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            } => {
                field(b, b"sched_util_est_cfs: cpu=", cpu as u64);
                b.extend_from_slice(b" path=/");
                util_est(b, enqueued, ewma, util);
            }
            TraceEvent::UclampUtilSe { cpu, p, clamps: c } => {
                field(b, b"uclamp_util_se: pid=", p.pid.into());
                b.extend_from_slice(b" comm=");
                b.extend_from_slice(p.comm.as_bytes());
                field(b, b" cpu=", cpu as u64);
                clamps(b, c);
            }
            TraceEvent::UclampUtilCfs { cpu, clamps: c } => {
                field(b, b"uclamp_util_cfs: cpu=", cpu as u64);
                clamps(b, c);
            }
            TraceEvent::SchedOverutilized { overutilized, span } => {
                field(b, b"sched_overutilized: overutilized=", overutilized.into());
                b.extend_from_slice(b" span=0x");
                super::text::hex_mask(b, span);
            }
            TraceEvent::Print { text } => {
                b.extend_from_slice(b"print: tracing_mark_write: ");
                b.extend_from_slice(text.as_bytes());
            }
            TraceEvent::SchedCpuCapacity {
                cpu,
                capacity,
                capacity_orig,
                capacity_curr,
            } => {
                field(b, b"sched_cpu_capacity: cpu=", cpu as u64);
                field(b, b" capacity=", capacity);
                field(b, b" capacity_orig=", capacity_orig);
                field(b, b" capacity_curr=", capacity_curr);
            }
        }
        b.push(b'\n');
    }

    /// The atrace counter lines of `ev`, if it carries a counter value.
    fn counter_lines(
        &mut self,
        ts: u64,
        cpu: usize,
        current: Option<TaskRef<'_>>,
        ev: &TraceEvent<'_>,
    ) {
        match *ev {
            TraceEvent::SchedPeltSe { p, avg, .. } => {
                self.counter(ts, cpu, current, p.pid, None, "util", avg.util);
            }
            TraceEvent::SchedPeltCfs { cpu: c, avg } => {
                self.counter(ts, cpu, current, 0, Some(c), "util", avg.util);
            }
            TraceEvent::UclampUtilCfs { cpu: c, clamps } => {
                let values = [
                    ("util clamped", clamps.uclamp_avg),
                    ("uclamp_min", clamps.uclamp_min),
                    ("uclamp_max", clamps.uclamp_max),
                ];
                for (name, v) in values {
                    self.counter(ts, cpu, current, 0, Some(c), name, v);
                }
            }
            TraceEvent::SchedOverutilized { overutilized, .. } => {
                let v = u64::from(overutilized);
                self.counter(ts, cpu, current, 0, None, "overutilized", v);
            }
            _ => {}
        }
    }

    /// `tracing_mark_write: C|pid|[cpuN ]name|value`.
    #[allow(clippy::too_many_arguments)]
    fn counter(
        &mut self,
        ts: u64,
        cpu: usize,
        current: Option<TaskRef<'_>>,
        pid: u32,
        of_cpu: Option<usize>,
        name: &str,
        value: u64,
    ) {
        self.prefix(ts, cpu, current);
        let b = &mut self.buf;
        field(b, b"tracing_mark_write: C|", pid.into());
        b.push(b'|');
        if let Some(c) = of_cpu {
            field(b, b"cpu", c as u64);
            b.push(b' ');
        }
        b.extend_from_slice(name.as_bytes());
        field(b, b"|", value);
        b.push(b'\n');
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        let r = self.out.write_all(&self.buf);
        self.buf.clear();
        r
    }
}

/// ` [ccc] `: a CPU below 1000, three digits wide.
fn cpu_field(cpu: usize) -> [u8; 7] {
    let mut field = *b" [000] ";
    field[2] = b'0' + (cpu / 100) as u8;
    field[3] = b'0' + (cpu / 10 % 10) as u8;
    field[4] = b'0' + (cpu % 10) as u8;
    field
}

/// Every selectable event shown.
fn all_events() -> EventSelection {
    EventSelection::parse("all").expect("`all` parses")
}

// The helpers below are inlined into `line`: a field name known there is copied in a piece
// of constant size, not by a call to `memcpy`.
#[inline(always)]
fn field(b: &mut Vec<u8>, name: &[u8], v: u64) {
    b.extend_from_slice(name);
    uint(b, v);
}

/// sched_switch's `prev_…` (or, with `next`, `next_…`) fields of `t` on `cpu`.
#[inline(always)]
fn switch_fields(b: &mut Vec<u8>, tasks: &mut TaskTexts, t: TaskRef<'_>, cpu: usize, next: bool) {
    match tasks.switching(t, cpu) {
        Some(r) if next => r.next.put(b),
        Some(r) => r.prev.put(b),
        None => {
            let p = if next { "next_" } else { "prev_" };
            let mut name = [0; task_text::SWAPPER_MAX];
            let comm = if t.pid == 0 {
                task_text::swapper(&mut name, cpu)
            } else {
                t.comm
            };
            task_text::fields(b, p, comm, t.pid, t.prio);
        }
    }
}

#[inline(always)]
fn comm_pid_prio(b: &mut Vec<u8>, tasks: &mut TaskTexts, p: TaskRef<'_>) {
    match tasks.of(p) {
        Some(r) => r.fields.put(b),
        None => task_text::fields(b, "", p.comm, p.pid, p.prio),
    }
}

#[inline(always)]
fn wakeup(b: &mut Vec<u8>, tasks: &mut TaskTexts, name: &[u8], p: TaskRef<'_>, target: usize) {
    b.extend_from_slice(name);
    b.extend_from_slice(b": ");
    comm_pid_prio(b, tasks, p);
    // `target_cpu=%03d`.
    b.extend_from_slice(b" target_cpu=");
    if target < 1000 {
        b.extend_from_slice(&cpu_field(target)[2..5]);
    } else {
        uint(b, target as u64);
    }
}

fn pelt(b: &mut Vec<u8>, avg: schedlab_model::kernel::tracepoint::PeltFields) {
    field(b, b" load=", avg.load);
    field(b, b" runnable=", avg.runnable);
    field(b, b" util=", avg.util);
    field(b, b" update_time=", avg.update_time);
}

fn util_est(b: &mut Vec<u8>, enqueued: u32, ewma: u32, util: u64) {
    field(b, b" enqueued=", enqueued.into());
    field(b, b" ewma=", ewma.into());
    field(b, b" util=", util);
}

fn clamps(b: &mut Vec<u8>, c: schedlab_model::kernel::tracepoint::UclampFields) {
    field(b, b" util_avg=", c.util_avg);
    field(b, b" uclamp_avg=", c.uclamp_avg);
    field(b, b" uclamp_min=", c.uclamp_min);
    field(b, b" uclamp_max=", c.uclamp_max);
}

impl<W: Write> Observer for Ftrace<W> {
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        if self.error.is_some() {
            return;
        }
        let ts = ts.saturating_add(super::CLOCK_OFFSET_NS);
        if self.shown.shows(ev) {
            self.line(ts, cpu, current, ev);
        }
        if self.counters {
            self.counter_lines(ts, cpu, current, ev);
        }
        if self.buf.len() >= FLUSH_AT {
            self.error = self.flush_buf().err();
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flush_buf()?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: TaskRef<'static> = TaskRef {
        comm: IDLE_COMM,
        pid: 0,
        prio: 120,
    };
    const T: TaskRef<'static> = TaskRef {
        comm: "thread0-0",
        pid: 101,
        prio: 120,
    };

    /// The time is the simulated time plus `CLOCK_OFFSET_NS` (1 ns).
    #[test]
    fn sched_switch_line_matches_trace_cmd_report() {
        let mut f = Ftrace::new(Vec::new(), 6);
        f.event(
            1_000_500,
            0,
            None,
            &TraceEvent::SchedSwitch {
                prev: IDLE,
                prev_state: "R",
                next: T,
                cpu: 0,
            },
        );
        let out = String::from_utf8(f.into_inner().unwrap()).unwrap();
        assert_eq!(
            out,
            "# tracer: nop\n#\ncpus=6\n          <idle>-0     [000] 0.001000501: sched_switch: \
             prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=thread0-0 \
             next_pid=101 next_prio=120\n"
        );
    }

    #[test]
    fn counters_are_atrace_counter_lines() {
        let mut f = Ftrace::with_options(Vec::new(), 2, EventSelection::default(), true);
        let avg = schedlab_model::kernel::tracepoint::PeltFields {
            load: 10,
            runnable: 20,
            util: 300,
            update_time: 5,
        };
        f.event(
            2_000,
            1,
            Some(T),
            &TraceEvent::SchedPeltSe { cpu: 1, p: T, avg },
        );
        f.event(3_000, 1, Some(T), &TraceEvent::SchedPeltCfs { cpu: 1, avg });
        f.event(
            4_000,
            0,
            None,
            &TraceEvent::SchedOverutilized {
                overutilized: true,
                span: &[0, 1].into_iter().collect(),
            },
        );
        let out = String::from_utf8(f.into_inner().unwrap()).unwrap();
        let lines: Vec<&str> = out.lines().skip(3).collect();
        // The PELT lines are not selected: only their counters show.
        assert_eq!(
            lines,
            [
                "       thread0-0-101   [001] 0.000002001: tracing_mark_write: C|101|util|300",
                "       thread0-0-101   [001] 0.000003001: tracing_mark_write: C|0|cpu1 util|300",
                "          <idle>-0     [000] 0.000004001: sched_overutilized: overutilized=1 \
                 span=0x3",
                "          <idle>-0     [000] 0.000004001: tracing_mark_write: C|0|overutilized|1",
            ]
        );
    }
}

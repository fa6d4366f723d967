//! The ftrace text trace, line for line as `trace-cmd report` prints it:
//! `<comm>-<pid> [<cpu>] <secs>.<ns>: <event>: <fields>` after a `cpus=N` first line, with the
//! field formats of the v6.1 tracepoints (`include/trace/events/sched.h`, `power.h`).

use super::{Observer, TaskRef, TraceEvent, IDLE_COMM, PWR_EVENT_EXIT};
use std::io::{self, Write};

pub struct Ftrace<W: Write> {
    out: W,
    /// The first write error; later writes are skipped and `finish` reports it.
    error: Option<io::Error>,
}

impl<W: Write> Ftrace<W> {
    pub fn new(mut out: W, nr_cpus: usize) -> Self {
        let error = writeln!(out, "cpus={nr_cpus}").err();
        Ftrace { out, error }
    }

    /// The writer, once flushed (for tests).
    pub fn into_inner(mut self) -> io::Result<W> {
        Observer::finish(&mut self)?;
        Ok(self.out)
    }

    fn write(
        &mut self,
        ts: u64,
        cpu: usize,
        current: Option<TaskRef<'_>>,
        ev: &TraceEvent<'_>,
    ) -> io::Result<()> {
        let (comm, pid) = current.map_or((IDLE_COMM, 0), |t| (t.comm, t.pid));
        let o = &mut self.out;
        write!(
            o,
            "{comm:>16}-{pid:<5} [{cpu:03}] {}.{:09}: ",
            ts / 1_000_000_000,
            ts % 1_000_000_000
        )?;
        match *ev {
            TraceEvent::SchedSwitch {
                prev,
                prev_state,
                next,
                cpu,
            } => {
                o.write_all(b"sched_switch: prev_comm=")?;
                write_comm(o, prev, cpu)?;
                write!(o, " prev_pid={} prev_prio={} prev_state={prev_state} ==> next_comm=", prev.pid, prev.prio)?;
                write_comm(o, next, cpu)?;
                writeln!(o, " next_pid={} next_prio={}", next.pid, next.prio)
            }
            TraceEvent::SchedWaking { p, target_cpu } => wakeup(o, "sched_waking", p, target_cpu),
            TraceEvent::SchedWakeup { p, target_cpu } => wakeup(o, "sched_wakeup", p, target_cpu),
            TraceEvent::SchedWakeupNew { p, target_cpu } => wakeup(o, "sched_wakeup_new", p, target_cpu),
            TraceEvent::SchedMigrateTask {
                p,
                orig_cpu,
                dest_cpu,
            } => writeln!(
                o,
                "sched_migrate_task: comm={} pid={} prio={} orig_cpu={orig_cpu} dest_cpu={dest_cpu}",
                p.comm, p.pid, p.prio
            ),
            TraceEvent::SchedProcessFork { parent, child } => writeln!(
                o,
                "sched_process_fork: comm={} pid={} child_comm={} child_pid={}",
                parent.comm, parent.pid, child.comm, child.pid
            ),
            TraceEvent::SchedProcessExit { p } => {
                writeln!(o, "sched_process_exit: comm={} pid={} prio={}", p.comm, p.pid, p.prio)
            }
            TraceEvent::CpuIdle { state, cpu } => {
                // The tracepoint's state is a u32 printed as an unsigned long.
                let state = if state == PWR_EVENT_EXIT { 4294967295u64 } else { state as u64 };
                writeln!(o, "cpu_idle: state={state} cpu_id={cpu}")
            }
            TraceEvent::CpuFrequency { khz, cpu } => writeln!(o, "cpu_frequency: state={khz} cpu_id={cpu}"),
            TraceEvent::SchedPeltSe { cpu, p, avg } => writeln!(
                o,
                "sched_pelt_se: cpu={cpu} path=(null) comm={} pid={} load={} runnable={} util={} update_time={}",
                p.comm, p.pid, avg.load, avg.runnable, avg.util, avg.update_time
            ),
            TraceEvent::SchedPeltCfs { cpu, avg } => writeln!(
                o,
                "sched_pelt_cfs: cpu={cpu} path=/ load={} runnable={} util={} update_time={}",
                avg.load, avg.runnable, avg.util, avg.update_time
            ),
            TraceEvent::SchedUtilEstSe {
                cpu,
                p,
                enqueued,
                ewma,
                util,
            } => writeln!(
                o,
                "sched_util_est_se: cpu={cpu} path=(null) comm={} pid={} enqueued={enqueued} ewma={ewma} util={util}",
                p.comm, p.pid
            ),
            TraceEvent::SchedUtilEstCfs {
                cpu,
                enqueued,
                ewma,
                util,
            } => writeln!(o, "sched_util_est_cfs: cpu={cpu} path=/ enqueued={enqueued} ewma={ewma} util={util}"),
            TraceEvent::UclampUtilSe { cpu, p, clamps: c } => writeln!(
                o,
                "uclamp_util_se: pid={} comm={} cpu={cpu} util_avg={} uclamp_avg={} uclamp_min={} uclamp_max={}",
                p.pid, p.comm, c.util_avg, c.uclamp_avg, c.uclamp_min, c.uclamp_max
            ),
            TraceEvent::UclampUtilCfs { cpu, clamps: c } => writeln!(
                o,
                "uclamp_util_cfs: cpu={cpu} util_avg={} uclamp_avg={} uclamp_min={} uclamp_max={}",
                c.util_avg, c.uclamp_avg, c.uclamp_min, c.uclamp_max
            ),
            TraceEvent::SchedOverutilized { overutilized, span } => writeln!(
                o,
                "sched_overutilized: overutilized={} span=0x{span:x}",
                u8::from(overutilized)
            ),
            TraceEvent::Print { text } => writeln!(o, "print: tracing_mark_write: {text}"),
            TraceEvent::SchedCpuCapacity {
                cpu,
                capacity,
                capacity_orig,
                capacity_curr,
            } => writeln!(
                o,
                "sched_cpu_capacity: cpu={cpu} capacity={capacity} capacity_orig={capacity_orig} capacity_curr={capacity_curr}"
            ),
        }
    }
}

/// The idle task is `swapper/N` in sched_switch.
fn write_comm<W: Write>(o: &mut W, t: TaskRef<'_>, cpu: usize) -> io::Result<()> {
    if t.pid == 0 {
        write!(o, "swapper/{cpu}")
    } else {
        o.write_all(t.comm.as_bytes())
    }
}

fn wakeup<W: Write>(o: &mut W, name: &str, p: TaskRef<'_>, target: usize) -> io::Result<()> {
    writeln!(
        o,
        "{name}: comm={} pid={} prio={} target_cpu={target:03}",
        p.comm, p.pid, p.prio
    )
}

impl<W: Write> Observer for Ftrace<W> {
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        if self.error.is_none() {
            self.error = self.write(ts, cpu, current, ev).err();
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sched_switch_line_matches_trace_cmd_report() {
        let mut f = Ftrace::new(Vec::new(), 6);
        let idle = TaskRef {
            comm: IDLE_COMM,
            pid: 0,
            prio: 120,
        };
        let t = TaskRef {
            comm: "thread0-0",
            pid: 101,
            prio: 120,
        };
        f.event(
            1_000_500,
            0,
            None,
            &TraceEvent::SchedSwitch {
                prev: idle,
                prev_state: "R",
                next: t,
                cpu: 0,
            },
        );
        let out = String::from_utf8(f.into_inner().unwrap()).unwrap();
        assert_eq!(
            out,
            "cpus=6\n          <idle>-0     [000] 0.001000500: sched_switch: prev_comm=swapper/0 \
             prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=thread0-0 next_pid=101 next_prio=120\n"
        );
    }
}

//! The text trace's renderings of the tasks it names, kept so that a line about a task named
//! before copies its fields in pieces of fixed size instead of formatting them again. A
//! task appears in most lines (its `<comm>-<pid>` starts every line it runs in, and
//! `sched_switch` and the wake-up events spell out its comm, pid and prio), and the same few
//! tasks recur: formatting them anew each time was most of the trace's cost.
//!
//! The cache is direct-mapped by pid, so its memory stays bounded however many tasks a run
//! forks. A slot holds the comm, pid and prio it was rendered from and is rendered again
//! when any of them differs (a renice changes the prio; a replayed trace may reuse a pid).
//! A comm longer than the kernel's 15 bytes (only a replayed trace has one) is not kept:
//! the caller formats it directly.

use super::text::{digits, int, put_first, right, uint, uint_left};
use schedlab_model::kernel::tracepoint::TaskRef;

/// Slots for tasks, by pid modulo this.
const SLOTS: usize = 256;
/// The longest comm kept: `TASK_COMM_LEN - 1`, and one more for a replayed trace's.
const COMM_MAX: usize = 16;
/// `<comm>-<pid>` as a line starts: a comm right-aligned in 16, `-`, a `u32` pid left-aligned
/// in 5 (at most 27 bytes).
pub const TASK_MAX: usize = 32;
/// The longest field list: `prev_comm=` and a 16-byte comm, ` prev_pid=` and 10 digits,
/// ` prev_prio=` and an `i32` (at most 68 bytes).
const FIELDS_MAX: usize = 72;

/// Rendered bytes, the first `len` of `N`.
#[derive(Clone, Copy)]
pub struct Fragment<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Fragment<N> {
    const EMPTY: Fragment<N> = Fragment {
        bytes: [0; N],
        len: 0,
    };

    /// Append the rendering to `out`.
    #[inline(always)]
    pub fn put(&self, out: &mut Vec<u8>) {
        put_first(out, &self.bytes, self.len);
    }

    /// The rendering, padded to `N` bytes: for a caller assembling a line in a piece of
    /// fixed size.
    #[inline(always)]
    pub fn padded(&self) -> (&[u8; N], usize) {
        (&self.bytes, self.len)
    }

    /// Keep `rendered` (which must fit).
    fn set(&mut self, rendered: &[u8]) {
        self.bytes[..rendered.len()].copy_from_slice(rendered);
        self.len = rendered.len();
    }
}

/// One task's renderings.
#[derive(Clone, Copy)]
pub struct Rendered {
    /// What it was rendered from; `valid` false: nothing yet.
    valid: bool,
    pid: u32,
    prio: i32,
    comm: Fragment<COMM_MAX>,
    /// `<comm>-<pid>` as a line starts (`%16s-%-5d`).
    pub task: Fragment<TASK_MAX>,
    /// `comm=<comm> pid=<pid> prio=<prio>` (the wake-up, migrate and exit events).
    pub fields: Fragment<FIELDS_MAX>,
    /// `prev_comm=<comm> prev_pid=<pid> prev_prio=<prio>` (sched_switch).
    pub prev: Fragment<FIELDS_MAX>,
    /// `next_comm=<comm> next_pid=<pid> next_prio=<prio>` (sched_switch).
    pub next: Fragment<FIELDS_MAX>,
}

impl Rendered {
    const EMPTY: Rendered = Rendered {
        valid: false,
        pid: 0,
        prio: 0,
        comm: Fragment::EMPTY,
        task: Fragment::EMPTY,
        fields: Fragment::EMPTY,
        prev: Fragment::EMPTY,
        next: Fragment::EMPTY,
    };

    #[inline(always)]
    fn holds(&self, comm: &str, pid: u32, prio: i32) -> bool {
        self.valid
            && self.pid == pid
            && self.prio == prio
            && self.comm.bytes[..self.comm.len] == *comm.as_bytes()
    }

    /// Render `comm`, `pid` and `prio` (`comm` at most `COMM_MAX` bytes), using `scratch`.
    fn render(&mut self, comm: &str, pid: u32, prio: i32, scratch: &mut Vec<u8>) {
        scratch.clear();
        right(scratch, comm, 16);
        scratch.push(b'-');
        uint_left(scratch, pid.into(), 5);
        self.task.set(scratch);
        for (fragment, prefix) in [
            (&mut self.fields, ""),
            (&mut self.prev, "prev_"),
            (&mut self.next, "next_"),
        ] {
            scratch.clear();
            fields(scratch, prefix, comm, pid, prio);
            fragment.set(scratch);
        }
        self.comm.set(comm.as_bytes());
        (self.valid, self.pid, self.prio) = (true, pid, prio);
    }
}

/// `<p>comm=<comm> <p>pid=<pid> <p>prio=<prio>`, formatted directly: for a task the cache
/// does not keep.
pub fn fields(out: &mut Vec<u8>, p: &str, comm: &str, pid: u32, prio: i32) {
    out.extend_from_slice(p.as_bytes());
    out.extend_from_slice(b"comm=");
    out.extend_from_slice(comm.as_bytes());
    out.push(b' ');
    out.extend_from_slice(p.as_bytes());
    out.extend_from_slice(b"pid=");
    uint(out, pid.into());
    out.push(b' ');
    out.extend_from_slice(p.as_bytes());
    out.extend_from_slice(b"prio=");
    int(out, prio.into());
}

/// Room for `swapper/<cpu>` of any CPU.
pub const SWAPPER_MAX: usize = 8 + 20;

/// `swapper/<cpu>`, the idle task's comm in `sched_switch`, written into `name`.
pub fn swapper(name: &mut [u8; SWAPPER_MAX], cpu: usize) -> &str {
    name[..8].copy_from_slice(b"swapper/");
    let n = digits(&mut name[8..], cpu as u64);
    std::str::from_utf8(&name[..8 + n]).expect("ASCII")
}

/// The renderings of the tasks a trace has named, and of each CPU's idle task as
/// `sched_switch` names it (`swapper/N`).
pub struct TaskTexts {
    slots: Vec<Rendered>,
    /// By CPU, for CPUs below `SWAPPERS_MAX`.
    swappers: Vec<Rendered>,
    scratch: Vec<u8>,
}

/// CPUs whose `swapper/N` renderings are kept.
const SWAPPERS_MAX: usize = 1024;

impl TaskTexts {
    pub fn new(nr_cpus: usize) -> TaskTexts {
        TaskTexts {
            slots: vec![Rendered::EMPTY; SLOTS],
            swappers: vec![Rendered::EMPTY; nr_cpus.min(SWAPPERS_MAX)],
            scratch: Vec::with_capacity(2 * FIELDS_MAX),
        }
    }

    /// The renderings of `t`, made now if not kept; None when its comm is too long to keep.
    #[inline]
    pub fn of(&mut self, t: TaskRef<'_>) -> Option<&Rendered> {
        let slot = &mut self.slots[t.pid as usize % SLOTS];
        if !slot.holds(t.comm, t.pid, t.prio) {
            if t.comm.len() > COMM_MAX {
                return None;
            }
            slot.render(t.comm, t.pid, t.prio, &mut self.scratch);
        }
        Some(slot)
    }

    /// The renderings of `t` as `sched_switch` on `cpu` names it: the idle task (pid 0) is
    /// `swapper/<cpu>`. None when not kept (the caller formats it).
    #[inline]
    pub fn switching(&mut self, t: TaskRef<'_>, cpu: usize) -> Option<&Rendered> {
        if t.pid != 0 {
            return self.of(t);
        }
        let slot = self.swappers.get_mut(cpu)?;
        if !(slot.valid && slot.prio == t.prio) {
            let mut name = [0; SWAPPER_MAX];
            slot.render(swapper(&mut name, cpu), 0, t.prio, &mut self.scratch);
        }
        Some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text<const N: usize>(f: &Fragment<N>) -> String {
        let mut v = Vec::new();
        f.put(&mut v);
        String::from_utf8(v).unwrap()
    }

    /// The kept renderings are what the kernel's formats print (`%16s-%-5d`, and the
    /// tracepoints' `comm=%s pid=%d prio=%d`), and a changed comm or prio is rendered anew.
    #[test]
    fn renderings_follow_the_task() {
        let mut c = TaskTexts::new(4);
        let t = TaskRef {
            comm: "thread0-0",
            pid: 101,
            prio: 120,
        };
        let r = c.of(t).unwrap();
        assert_eq!(text(&r.task), "       thread0-0-101  ");
        assert_eq!(text(&r.fields), "comm=thread0-0 pid=101 prio=120");
        assert_eq!(
            text(&r.prev),
            "prev_comm=thread0-0 prev_pid=101 prev_prio=120"
        );
        assert_eq!(
            text(&r.next),
            "next_comm=thread0-0 next_pid=101 next_prio=120"
        );
        let reniced = TaskRef { prio: -1, ..t };
        assert_eq!(
            text(&c.of(reniced).unwrap().fields),
            "comm=thread0-0 pid=101 prio=-1"
        );
        // Another task in the same slot, and a comm the cache does not keep.
        let other = TaskRef {
            comm: "renamed",
            pid: 101 + SLOTS as u32,
            prio: 120,
        };
        assert_eq!(text(&c.of(other).unwrap().task), "         renamed-357  ");
        let long = TaskRef {
            comm: "a-comm-of-seventeen",
            ..t
        };
        assert!(c.of(long).is_none());
        let idle = TaskRef {
            comm: "<idle>",
            pid: 0,
            prio: 120,
        };
        assert_eq!(
            text(&c.switching(idle, 3).unwrap().prev),
            "prev_comm=swapper/3 prev_pid=0 prev_prio=120"
        );
        assert!(c.switching(idle, 4).is_none());
        assert_eq!(
            text(&c.switching(t, 4).unwrap().task),
            "       thread0-0-101  "
        );
    }
}

//! The ftrace text `trace-cmd report` prints (and `--trace` writes): a `cpus=N` header, then
//! one event a line, `COMM-PID [CPU] [FLAGS] SECS.FRAC: EVENT: FIELDS`, with the field formats
//! of the v6.1 tracepoints (`include/trace/events/sched.h`, `task.h`, `power.h`).
//!
//! The reader borrows from the text and allocates nothing per line. Events the replay does not
//! use (`print`, `bprint`, `cpu_idle`, PELT events, …) are returned as `Record::Other`; header
//! and comment lines (`# tracer: nop`, `version = 6`, `CPU 3 is empty`) are skipped; a
//! `CPU:N [LOST M EVENTS]` line is `Record::Lost`.

use schedlab_base::error::InputError;

/// How a task left the CPU (`prev_state` of `sched_switch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: preempted (`R`, `R+`).
    Runnable,
    /// Interruptible sleep (`S`; also `T`, `t`, `P`, `I`).
    Sleeping,
    /// Uninterruptible (`D`): waiting for I/O or a kernel resource.
    Uninterruptible,
    /// Exiting (`X`, `Z`).
    Dead,
    /// Bit 64 (`x` in trace-cmd's sched plugin and in kernels before v4.14): `TASK_DEAD`
    /// (an exit) before v4.14, `TASK_PARKED` (`P`, a parked kthread) since. The timeline
    /// takes it as an exit unless the task runs again.
    DeadOrParked,
}

/// One event the replay uses, with the fields it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    Switch {
        prev_pid: u32,
        prev_comm: &'a str,
        prev_prio: i32,
        prev_state: PrevState,
        next_pid: u32,
        next_comm: &'a str,
        next_prio: i32,
    },
    /// `sched_waking` (`new: false`), `sched_wakeup` or `sched_wakeup_new` (`new: true`).
    Wake {
        waking: bool,
        new: bool,
        pid: u32,
        comm: &'a str,
        prio: i32,
        /// `target_cpu=`: the CPU the task slept on (`sched_waking`) or was queued on
        /// (`sched_wakeup`, `sched_wakeup_new`).
        target_cpu: Option<usize>,
    },
    /// `sched_migrate_task`: `pid` moves from `orig_cpu` to `dest_cpu`.
    Migrate {
        pid: u32,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    /// `sched_overutilized` (LISA's module): the root domain's overutilized state.
    Overutilized {
        on: bool,
    },
    Fork {
        parent_pid: u32,
        child_pid: u32,
        child_comm: &'a str,
    },
    Exit {
        pid: u32,
    },
    Rename {
        pid: u32,
        newcomm: &'a str,
    },
    Frequency {
        cpu: usize,
        khz: u32,
    },
    /// A frequency reported from user space, not a change: devlib writes each CPU's current
    /// frequency into the trace (`print` of `cpu_frequency_devlib: state=K cpu_id=N`, or of
    /// `cpu_frequency: …` in older versions) when the recording starts and ends, which LISA
    /// reads as the frequency before the first `cpu_frequency`.
    FrequencyReport {
        cpu: usize,
        khz: u32,
    },
    /// `cpu_idle`: CPU `cpu` enters idle state `state` (cpuidle's index), or leaves idle
    /// (None: `state=4294967295`, `PWR_EVENT_EXIT`).
    CpuIdle {
        cpu: usize,
        state: Option<u32>,
    },
    /// `CPU:N [LOST M EVENTS]`: what ran on CPU N since is unknown until its next switch.
    Lost {
        cpu: usize,
    },
    Other,
}

/// The head of an event line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The task current on `cpu` (0: the idle task).
    pub pid: u32,
    pub cpu: usize,
    pub ts: u64,
    /// The latency flags say hard or soft interrupt context (`trace-cmd report -l`).
    pub irq: bool,
}

/// A streaming reader over a trace's text.
pub struct Reader<'a> {
    rest: &'a str,
    file: &'a str,
    line: usize,
    nr_cpus: Option<usize>,
}

const LINE_FORMAT: &str = "an event line `COMM-PID [CPU] SECS.FRAC: EVENT: FIELDS`";

impl<'a> Reader<'a> {
    pub fn new(text: &'a str, file: &'a str) -> Self {
        Reader {
            rest: text,
            file,
            line: 0,
            nr_cpus: None,
        }
    }

    /// A reader of lines of a trace whose header said `cpus=nr_cpus`.
    pub fn with_cpus(text: &'a str, file: &'a str, nr_cpus: usize) -> Self {
        Reader {
            rest: text,
            file,
            line: 0,
            nr_cpus: Some(nr_cpus),
        }
    }

    /// The `cpus=N` of the header, once read.
    pub fn nr_cpus(&self) -> Option<usize> {
        self.nr_cpus
    }

    /// The 1-based number of the line last returned.
    pub fn line(&self) -> usize {
        self.line
    }

    fn err(&self, expected: impl Into<String>, found: &str) -> InputError {
        let mut shown: String = found.chars().take(80).collect();
        if shown.len() < found.len() {
            shown.push('…');
        }
        InputError::new(
            self.file,
            format!("line {}", self.line),
            expected,
            format!("`{shown}`"),
        )
    }

    /// The next record, `None` at the end of the text.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<(Head, Record<'a>)>, InputError> {
        loop {
            if self.rest.is_empty() {
                if self.nr_cpus.is_none() {
                    return Err(self.err(
                        "a `cpus=N` line (trace-cmd report's header)",
                        "the end of the file",
                    ));
                }
                return Ok(None);
            }
            // The one long scan of a line: the memchr crate's SIMD search.
            let (line, rest) = match memchr::memchr(b'\n', self.rest.as_bytes()) {
                Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
                None => (self.rest, ""),
            };
            self.rest = rest;
            self.line += 1;
            let line = line.trim_end_matches('\r');
            let t = trim_start(line);
            if t.is_empty() || t.starts_with('#') || t.starts_with("version =") {
                continue;
            }
            if let Some(n) = t.strip_prefix("cpus=") {
                match n.trim().parse::<usize>() {
                    Ok(n) if n > 0 && n <= 4096 => {
                        self.nr_cpus = Some(n);
                        continue;
                    }
                    _ => return Err(self.err("`cpus=N` with N from 1 to 4096", t)),
                }
            }
            if t.starts_with("CPU ") && t.ends_with(" is empty") {
                continue;
            }
            if let Some(r) = t.strip_prefix("CPU:") {
                if r.contains("LOST") {
                    let cpu = r.split(' ').next().and_then(|c| c.parse::<usize>().ok());
                    return match cpu {
                        Some(cpu) => Ok(Some((
                            Head {
                                pid: 0,
                                cpu,
                                ts: 0,
                                irq: false,
                            },
                            Record::Lost { cpu },
                        ))),
                        None => Err(self.err("`CPU:N [LOST M EVENTS]`", t)),
                    };
                }
            }
            let Some(nr_cpus) = self.nr_cpus else {
                return Err(self.err(
                    "a `cpus=N` line before the first event (trace-cmd report's header)",
                    t,
                ));
            };
            let (head, event, fields) = match fast_head(line) {
                Some(h) => h,
                None => self.head(line)?,
            };
            if head.cpu >= nr_cpus {
                return Err(self.err(format!("a CPU number below cpus={nr_cpus}"), line));
            }
            let rec = self.record(event, fields, line)?;
            return Ok(Some((head, rec)));
        }
    }

    /// `COMM-PID [CPU] [FLAGS] SECS.FRAC: ` → the head, the event name and its fields.
    fn head(&self, line: &'a str) -> Result<(Head, &'a str, &'a str), InputError> {
        let bad = || self.err(LINE_FORMAT, line);
        // The CPU bracket: the first " [digits]" (a comm may hold spaces and dashes).
        let mut from = 0;
        let (open, close) = loop {
            let i = find(&line.as_bytes()[from..], b" [").ok_or_else(bad)? + from;
            let after = &line[i + 2..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && after.as_bytes().get(digits) == Some(&b']') {
                break (i, i + 2 + digits);
            }
            from = i + 2;
        };
        let task = trim_start(&line[..open]).trim_end();
        let (_, pid) = task.rsplit_once('-').ok_or_else(bad)?;
        let pid: u32 = pid.parse().map_err(|_| bad())?;
        let cpu: usize = line[open + 2..close].parse().map_err(|_| bad())?;
        let mut rest = trim_start(&line[close + 1..]);
        let mut irq = false;
        // Latency flags (`d.h2.`), when the report was asked for them.
        let first = &rest[..memchr(b' ', rest.as_bytes()).unwrap_or(rest.len())];
        if !first.ends_with(':') && !first.is_empty() {
            irq = matches!(first.as_bytes().get(2), Some(b'h' | b'H' | b's'));
            rest = rest[first.len()..].trim_start();
        }
        let colon = find(rest.as_bytes(), b": ").ok_or_else(bad)?;
        let ts = parse_ts(&rest[..colon]).ok_or_else(bad)?;
        let rest = &rest[colon + 2..];
        let (event, fields) = match memchr(b':', rest.as_bytes()) {
            Some(i) => (&rest[..i], rest[i + 1..].trim_start()),
            None => return Err(bad()),
        };
        if event.is_empty() || memchr(b' ', event.as_bytes()).is_some() {
            return Err(bad());
        }
        Ok((Head { pid, cpu, ts, irq }, event, fields))
    }

    /// The record of `event` with fields `f`: the kernel's own field order in one pass,
    /// else a search for each field.
    fn record(&self, event: &str, f: &'a str, line: &str) -> Result<Record<'a>, InputError> {
        let fast = match event {
            "sched_switch" => fast_switch(f),
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => fast_wake(event, f),
            _ => None,
        };
        match fast {
            Some(r) => Ok(r),
            None => self.general(event, f, line),
        }
    }

    /// Each field found by its name, wherever it is.
    fn general(&self, event: &str, f: &'a str, line: &str) -> Result<Record<'a>, InputError> {
        let need = |what: &str| self.err(format!("`{event}` with {what}"), line);
        Ok(match event {
            "sched_switch" if !f.starts_with("prev_comm=") => {
                // trace-cmd's sched plugin: `COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]`.
                let arrow = find(f.as_bytes(), b" ==> ").ok_or_else(|| {
                    need("prev_comm=, or trace-cmd's `COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]`")
                })?;
                let (prev, next) = (&f[..arrow], &f[arrow + 5..]);
                let (task, state) = prev
                    .rsplit_once(' ')
                    .ok_or_else(|| need("`COMM:PID [PRIO] STATE` before `==>`"))?;
                let (prev_comm, prev_pid, prev_prio) = plugin_task(task)
                    .ok_or_else(|| need("`COMM:PID [PRIO] STATE` before `==>`"))?;
                let (next_comm, next_pid, next_prio) =
                    plugin_task(next).ok_or_else(|| need("`COMM:PID [PRIO]` after `==>`"))?;
                Record::Switch {
                    prev_pid,
                    prev_comm,
                    prev_prio,
                    prev_state: parse_state(state)
                        .ok_or_else(|| need("a state as letters (R, S, D, X…) before `==>`"))?,
                    next_pid,
                    next_comm,
                    next_prio,
                }
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" if !f.starts_with("comm=") => {
                // trace-cmd's sched plugin: `COMM:PID [PRIO] [success|failure] CPU:NNN`.
                let (task, cpu) = match f.rsplit_once(" CPU:") {
                    Some((task, cpu)) => (task, Some(cpu.trim_end())),
                    None => (f, None),
                };
                let task = task
                    .strip_suffix(" success")
                    .or_else(|| task.strip_suffix(" failure"))
                    .unwrap_or(task);
                let (comm, pid, prio) = plugin_task(task)
                    .ok_or_else(|| need("comm= and pid=, or trace-cmd's `COMM:PID [PRIO]`"))?;
                Record::Wake {
                    waking: event == "sched_waking",
                    new: event == "sched_wakeup_new",
                    comm,
                    pid,
                    prio,
                    target_cpu: cpu.and_then(|c| c.parse().ok()),
                }
            }
            "sched_switch" => {
                // The kernel's `TP_printk` puts ` ==> ` between the two tasks; the raw
                // layout (`trace-cmd report -R`, LISA's text traces) has none.
                let (prev, next) = match find(f.as_bytes(), b" ==> ") {
                    Some(arrow) => (&f[..arrow], &f[arrow + 5..]),
                    None => {
                        let at = find_key(f, "next_comm=").ok_or_else(|| {
                            need("prev_comm= … then next_comm= (`==>` between them or not)")
                        })? - "next_comm=".len();
                        (f[..at].trim_end(), &f[at..])
                    }
                };
                let prev_comm = between(prev, "prev_comm=", " prev_pid=")
                    .ok_or_else(|| need("prev_comm= and prev_pid="))?;
                let next_comm = between(next, "next_comm=", " next_pid=")
                    .ok_or_else(|| need("next_comm= and next_pid="))?;
                let state = value(prev, "prev_state=").ok_or_else(|| need("prev_state="))?;
                Record::Switch {
                    prev_pid: int(prev, "prev_pid=").ok_or_else(|| need("a numeric prev_pid="))?,
                    prev_comm,
                    prev_prio: int(prev, "prev_prio=")
                        .ok_or_else(|| need("a numeric prev_prio="))?,
                    prev_state: parse_state(state)
                        .ok_or_else(|| need("prev_state= as letters (R, S, D, X…) or a number"))?,
                    next_pid: int(next, "next_pid=").ok_or_else(|| need("a numeric next_pid="))?,
                    next_comm,
                    next_prio: int(next, "next_prio=")
                        .ok_or_else(|| need("a numeric next_prio="))?,
                }
            }
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => Record::Wake {
                waking: event == "sched_waking",
                new: event == "sched_wakeup_new",
                comm: between(f, "comm=", " pid=").ok_or_else(|| need("comm= and pid="))?,
                pid: int(f, "pid=").ok_or_else(|| need("a numeric pid="))?,
                prio: int(f, "prio=").ok_or_else(|| need("a numeric prio="))?,
                target_cpu: int(f, "target_cpu="),
            },
            "sched_migrate_task" => Record::Migrate {
                pid: int(f, "pid=").ok_or_else(|| need("a numeric pid="))?,
                orig_cpu: int(f, "orig_cpu=").ok_or_else(|| need("a numeric orig_cpu="))?,
                dest_cpu: int(f, "dest_cpu=").ok_or_else(|| need("a numeric dest_cpu="))?,
            },
            "sched_overutilized" => Record::Overutilized {
                on: int::<u32>(f, "overutilized=").ok_or_else(|| need("overutilized="))? != 0,
            },
            "sched_process_fork" => Record::Fork {
                parent_pid: int(f, "pid=").ok_or_else(|| need("a numeric pid="))?,
                child_comm: between(f, "child_comm=", " child_pid=")
                    .ok_or_else(|| need("child_comm= and child_pid="))?,
                child_pid: int(f, "child_pid=").ok_or_else(|| need("a numeric child_pid="))?,
            },
            "sched_process_exit" => Record::Exit {
                pid: int(f, "pid=").ok_or_else(|| need("a numeric pid="))?,
            },
            "task_rename" => Record::Rename {
                pid: int(f, "pid=").ok_or_else(|| need("a numeric pid="))?,
                newcomm: between(f, "newcomm=", " oom_score_adj=")
                    .or_else(|| f.split_once("newcomm=").map(|(_, c)| c.trim_end()))
                    .ok_or_else(|| need("newcomm="))?,
            },
            "cpu_frequency" => Record::Frequency {
                khz: int(f, "state=").ok_or_else(|| need("a numeric state="))?,
                cpu: int(f, "cpu_id=").ok_or_else(|| need("a numeric cpu_id="))?,
            },
            "print" => devlib_frequency(f).unwrap_or(Record::Other),
            "cpu_idle" => Record::CpuIdle {
                state: int::<u64>(f, "state=")
                    .map(|s| u32::try_from(s).ok().filter(|&s| s != u32::MAX))
                    .ok_or_else(|| need("a numeric state="))?,
                cpu: int(f, "cpu_id=").ok_or_else(|| need("a numeric cpu_id="))?,
            },
            _ => Record::Other,
        })
    }
}

/// A `print` (`tracing_mark_write: TEXT`, or `0xADDRs: TEXT` in the raw layout) of devlib's
/// frequency report: `cpu_frequency_devlib: state=K cpu_id=N` or `cpu_frequency: …`.
fn devlib_frequency(f: &str) -> Option<Record<'static>> {
    let (_, text) = f.split_once(": ")?;
    let text = text.trim_start();
    let fields = text
        .strip_prefix("cpu_frequency_devlib:")
        .or_else(|| text.strip_prefix("cpu_frequency:"))?;
    Some(Record::FrequencyReport {
        khz: int(fields, "state=")?,
        cpu: int(fields, "cpu_id=")?,
    })
}

/// `Reader::head` in one pass over the bytes for the layout schedlab and `trace-cmd report`
/// print: `<spaces>COMM-PID<spaces> [CPU] SECS.FRAC: EVENT: FIELDS` (no latency flags, only
/// spaces between columns). Anything else, `None`: the general `Reader::head`, which reads
/// the same of every line this accepts.
fn fast_head(line: &str) -> Option<(Head, &str, &str)> {
    let b = line.as_bytes();
    // The first `[` must open the CPU column (a `[` in a comm: the general path). Twenty
    // bytes or more in: the SIMD scan.
    let open = memchr::memchr(b'[', b)?;
    let close = open
        + 1
        + b[open + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
    if open == 0 || b[open - 1] != b' ' || close == open + 1 || b.get(close) != Some(&b']') {
        return None;
    }
    let cpu = usize::try_from(digits(&b[open + 1..close])?).ok()?;
    // `-PID` and its padding before ` [`.
    let end = open - b[..open].iter().rev().take_while(|&&c| c == b' ').count();
    let start = end
        - b[..end]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
    if start == 0 || b[start - 1] != b'-' {
        return None;
    }
    let pid = u32::try_from(digits(&b[start..end])?).ok()?;
    // `SECS.FRAC: ` after the spaces.
    let at = close + 1 + b[close + 1..].iter().take_while(|&&c| c == b' ').count();
    let dot = at + b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
    let colon = dot
        + 1
        + b.get(dot + 1..)?
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
    if b.get(dot) != Some(&b'.') || b.get(colon..colon + 2) != Some(b": ") {
        return None;
    }
    let frac = &b[dot + 1..colon];
    if frac.len() > 9 {
        return None;
    }
    let ts = digits(&b[at..dot])?
        .checked_mul(1_000_000_000)?
        .checked_add(digits(frac)? * POW10[9 - frac.len()])?;
    // `EVENT:`, a name without spaces, then the fields.
    let rest = &line[colon + 2..];
    let name = rest.bytes().position(|c| c == b':' || c == b' ')?;
    if name == 0 || rest.as_bytes()[name] != b':' {
        return None;
    }
    let head = Head {
        pid,
        cpu,
        ts,
        irq: false,
    };
    Some((head, &rest[..name], rest[name + 1..].trim_start()))
}

/// 10^k, to scale a fraction of k digits to ns.
const POW10: [u64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// `SECS.FRAC` (any number of fraction digits up to 9) as ns.
fn parse_ts(s: &str) -> Option<u64> {
    let dot = memchr(b'.', s.as_bytes())?;
    let (secs, frac) = (&s.as_bytes()[..dot], &s.as_bytes()[dot + 1..]);
    if frac.is_empty() || frac.len() > 9 {
        return None;
    }
    let secs = digits(secs)?;
    let frac_ns = digits(frac)? * POW10[9 - frac.len()];
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// `s.trim_start()`, skipping the spaces that pad trace columns a byte at a time.
fn trim_start(s: &str) -> &str {
    let spaces = s.bytes().take_while(|&b| b == b' ').count();
    s[spaces..].trim_start()
}

/// A run of ASCII digits as a number (none, another byte or an overflow: `None`).
fn digits(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    if s.len() <= 19 {
        // 19 digits cannot overflow a u64: no checks per digit.
        return s.iter().try_fold(0u64, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
        });
    }
    s.iter().try_fold(0u64, |n, &b| {
        if b.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// The first `byte` in `s`, a byte at a time: the spans searched within a line are a few
/// bytes to a few tens (a comm, a number, a column), where a plain loop beats the call and
/// the set-up of the memchr crate's SIMD scan.
fn memchr(byte: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&b| b == byte)
}

/// The first occurrence of `needle` in `hay`: a scan for its first byte that is not a space
/// (trace lines are padded with spaces), then a compare (the needles are short field names).
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let k = needle.iter().position(|&b| b != b' ')?;
    let mut from = k;
    while from + needle.len() - k <= hay.len() {
        let i = from + memchr(needle[k], &hay[from..=hay.len() - (needle.len() - k)])?;
        if hay[i - k..].starts_with(needle) {
            return Some(i - k);
        }
        from = i + 1;
    }
    None
}

/// A cursor over the fields of one event, for the fast paths that expect the fields in the
/// order the kernel's `TP_printk` prints them.
struct Fields<'a> {
    s: &'a str,
}

impl<'a> Fields<'a> {
    /// Skip `lit`.
    fn lit(&mut self, lit: &str) -> Option<()> {
        self.s = self.s.strip_prefix(lit)?;
        Some(())
    }

    /// The text up to `end` (skipped too); a comm may hold spaces.
    fn until(&mut self, end: &str) -> Option<&'a str> {
        let i = find(self.s.as_bytes(), end.as_bytes())?;
        let v = &self.s[..i];
        self.s = &self.s[i + end.len()..];
        Some(v)
    }

    /// A token up to the next space or the end.
    fn token(&mut self) -> &'a str {
        let i = memchr(b' ', self.s.as_bytes()).unwrap_or(self.s.len());
        let v = &self.s[..i];
        self.s = &self.s[i..];
        v
    }

    fn uint<T: TryFrom<u64>>(&mut self) -> Option<T> {
        T::try_from(digits(self.token().as_bytes())?).ok()
    }

    fn int(&mut self) -> Option<i32> {
        let t = self.token();
        let (neg, d) = match t.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, t),
        };
        let v = i32::try_from(digits(d.as_bytes())?).ok()?;
        Some(if neg { -v } else { v })
    }
}

/// `sched_switch` as v6.1 prints it: `prev_comm=C prev_pid=P prev_prio=N prev_state=S ==>
/// next_comm=C next_pid=P next_prio=N`. Anything else: `None`, for the general path.
fn fast_switch(f: &str) -> Option<Record<'_>> {
    let mut c = Fields { s: f };
    c.lit("prev_comm=")?;
    let prev_comm = c.until(" prev_pid=")?;
    let prev_pid = c.uint()?;
    c.lit(" prev_prio=")?;
    let prev_prio = c.int()?;
    c.lit(" prev_state=")?;
    let prev_state = parse_state(c.token())?;
    // ` ==> ` (`TP_printk`) or nothing (the raw `field=value` layout).
    let _ = c.lit(" ==>");
    c.lit(" next_comm=")?;
    let next_comm = c.until(" next_pid=")?;
    let next_pid = c.uint()?;
    c.lit(" next_prio=")?;
    let next_prio = c.int()?;
    c.s.trim_end().is_empty().then_some(Record::Switch {
        prev_pid,
        prev_comm,
        prev_prio,
        prev_state,
        next_pid,
        next_comm,
        next_prio,
    })
}

/// `sched_waking`/`sched_wakeup[_new]` as v6.1 prints them: `comm=C pid=P prio=N
/// target_cpu=NNN` (older kernels add `success=1`, which the general path reads).
fn fast_wake<'a>(event: &str, f: &'a str) -> Option<Record<'a>> {
    let mut c = Fields { s: f };
    c.lit("comm=")?;
    let comm = c.until(" pid=")?;
    let pid = c.uint()?;
    c.lit(" prio=")?;
    let prio = c.int()?;
    c.lit(" target_cpu=")?;
    let target_cpu = c.uint::<usize>()?;
    c.s.trim_end().is_empty().then_some(Record::Wake {
        waking: event == "sched_waking",
        new: event == "sched_wakeup_new",
        pid,
        comm,
        prio,
        target_cpu: Some(target_cpu),
    })
}

/// Where `key` starts a field (at the start or after a space).
fn find_key(s: &str, key: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = find(&s.as_bytes()[from..], key.as_bytes()) {
        let at = from + i;
        if at == 0 || s.as_bytes()[at - 1] == b' ' {
            return Some(at + key.len());
        }
        from = at + key.len();
    }
    None
}

/// The text between `key` and `end` (a comm, which may hold spaces).
fn between<'a>(s: &'a str, key: &str, end: &str) -> Option<&'a str> {
    let start = find_key(s, key)?;
    let len = find(&s.as_bytes()[start..], end.as_bytes())?;
    Some(&s[start..start + len])
}

/// A field's value up to the next space or tab (LISA's trace.txt ends some lines in tabs).
fn value<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let start = find_key(s, key)?;
    let v = &s[start..];
    Some(v.split([' ', '\t']).next().unwrap_or(v))
}

fn int<T: std::str::FromStr>(s: &str, key: &str) -> Option<T> {
    value(s, key)?.parse().ok()
}

/// A task as trace-cmd's sched plugin prints it (libtraceevent's `plugin_sched_switch.c`):
/// `COMM:PID [PRIO]`. A comm may hold `:` and spaces, so the pid follows the last `:`.
fn plugin_task(s: &str) -> Option<(&str, u32, i32)> {
    let (task, prio) = s.trim_end().strip_suffix(']')?.rsplit_once(" [")?;
    let (comm, pid) = task.rsplit_once(':')?;
    Some((comm, pid.parse().ok()?, prio.parse().ok()?))
}

/// `prev_state` as letters (`R`, `R+`, `S`, `D`, `X`, `D|K`…: the kernel's `TP_printk`, or
/// trace-cmd's sched plugin) or as the number the raw layout gives (`trace-cmd report -R`,
/// LISA's text traces; decimal or `0x…`), in either of the kernel's two encodings:
///
/// - v4.14 and later (`TASK_REPORT`, `__trace_sched_switch_state`): one bit of 1 `S`, 2 `D`,
///   4 `T`, 8 `t`, 16 `X`, 32 `Z`, 64 `P`, 128 `I` (an idle kthread, `TASK_IDLE`), and 256
///   (`TASK_REPORT_MAX`) for a preempted task (`R+`).
/// - Before v4.14 (the task's raw `state`): 1 `S`, 2 `D`, 4 `T`, 8 `t`, 16 `Z`, 32 `X`,
///   64 `x` (`TASK_DEAD`), 128 `K` (`TASK_WAKEKILL`: 130 is `D|K`, a killable wait), 256
///   `W`, 512 `P`, 1024 `N` (`TASK_NOLOAD`: `D|N` is `TASK_IDLE`), 2048 `n`, and
///   `TASK_STATE_MAX` (2048 or 4096 by version) for a preempted task.
///
/// Both agree on every value but 64: an exit before v4.14, a parked kthread since
/// (`DeadOrParked`, which the timeline settles by whether the task runs again). trace-cmd's
/// plugin prints bit 64 as `x` and bit 128 as `W` whatever the kernel.
fn parse_state(s: &str) -> Option<PrevState> {
    if let Some(hex) = s.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(state_bits);
    }
    if s.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return digits(s.as_bytes()).map(state_bits);
    }
    Some(match s.as_bytes().first()? {
        b'R' => PrevState::Runnable,
        b'x' => PrevState::DeadOrParked,
        b'S' | b'T' | b't' | b'P' | b'I' | b'W' | b'K' | b'N' | b'n' => PrevState::Sleeping,
        b'D' => PrevState::Uninterruptible,
        b'X' | b'Z' => PrevState::Dead,
        _ => return None,
    })
}

/// A numeric `prev_state` (see `parse_state`).
fn state_bits(n: u64) -> PrevState {
    const NOLOAD: u64 = 1024;
    if n & 2 != 0 {
        // `D|N` is `TASK_IDLE` (before v4.14): an idle kthread's wait, not I/O.
        if n & NOLOAD != 0 {
            PrevState::Sleeping
        } else {
            PrevState::Uninterruptible
        }
    } else if n & (16 | 32) != 0 {
        PrevState::Dead
    } else if n & 64 != 0 {
        PrevState::DeadOrParked
    } else if n & (1 | 4 | 8 | 128 | 512) != 0 {
        PrevState::Sleeping
    } else {
        // 0, or only a preemption mark (256 since v4.14; 2048 or 4096 before).
        PrevState::Runnable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<(Head, Record<'_>), InputError> {
        let mut r = Reader::new(text, "t.txt");
        r.next().map(|x| x.expect("a record"))
    }

    #[test]
    fn trace_cmds_plugin_layout_reads_as_the_format_strings() {
        let (_, r) = one(
            "cpus=1\n  <idle>-0  [000]  0.000015: sched_switch:  swapper/0:0 [120] R ==> my task:2:1000 [120]",
        )
        .unwrap();
        let Record::Switch {
            prev_pid,
            prev_state,
            next_pid,
            next_comm,
            next_prio,
            ..
        } = r
        else {
            panic!("{r:?}")
        };
        assert_eq!((prev_pid, prev_state), (0, PrevState::Runnable));
        assert_eq!((next_comm, next_pid, next_prio), ("my task:2", 1000, 120));
        for (line, cpu) in [
            ("sched_wakeup_new:     a-b:7 [120] CPU:003", Some(3)),
            ("sched_wakeup:     a-b:7 [120] success CPU:003", Some(3)),
            ("sched_wakeup:     a-b:7 [120]", None),
        ] {
            let text = format!("cpus=1\n  x-1  [000]  0.000015: {line}");
            let (_, r) = one(&text).unwrap();
            assert_eq!(
                r,
                Record::Wake {
                    waking: false,
                    new: line.starts_with("sched_wakeup_new"),
                    pid: 7,
                    comm: "a-b",
                    prio: 120,
                    target_cpu: cpu,
                },
                "{line}"
            );
        }
        // The plugin prints bit 64 as `x` whatever the kernel: P (parked) since v4.14,
        // TASK_DEAD before.
        let (_, r) =
            one("cpus=1\n  x-1  [000]  0.1: sched_switch: a:1 [120] x ==> b:2 [120]").unwrap();
        assert!(matches!(
            r,
            Record::Switch {
                prev_state: PrevState::DeadOrParked,
                ..
            }
        ));
    }

    #[test]
    fn schedlab_and_trace_cmd_lines() {
        let (h, r) = one(
            "cpus=6\n# tracer: nop\n          <idle>-0     [000] 0.001000500: sched_switch: \
             prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my task-1 \
             next_pid=101 next_prio=120\n",
        )
        .unwrap();
        assert_eq!((h.pid, h.cpu, h.ts, h.irq), (0, 0, 1_000_500, false));
        assert!(matches!(
            r,
            Record::Switch {
                next_pid: 101,
                next_comm: "my task-1",
                prev_state: PrevState::Runnable,
                ..
            }
        ));
        // Microsecond timestamps, latency flags in hardirq context, the old `success=` field.
        let (h, r) = one(
            "cpus=2\n    kworker/u4:1-77 [001] d.h2. 12.500001: sched_waking: comm=rt-app pid=9 \
             prio=120 success=1 target_cpu=001",
        )
        .unwrap();
        assert_eq!((h.pid, h.cpu, h.ts, h.irq), (77, 1, 12_500_001_000, true));
        assert!(matches!(
            r,
            Record::Wake {
                waking: true,
                pid: 9,
                comm: "rt-app",
                target_cpu: Some(1),
                ..
            }
        ));
    }

    /// The raw layout (`trace-cmd report -R`, LISA's `trace.txt`): no ` ==> `, a numeric
    /// state; read alike by the fast and the general path.
    #[test]
    fn the_raw_layout_reads_as_the_printk_one() {
        let raw = "prev_comm=sh prev_pid=1702 prev_prio=120 prev_state=64 next_comm=swapper/5 \
                   next_pid=0 next_prio=120";
        let printk = "prev_comm=sh prev_pid=1702 prev_prio=120 prev_state=x ==> \
                      next_comm=swapper/5 next_pid=0 next_prio=120";
        let r = Reader::new("", "t.txt");
        let want = Record::Switch {
            prev_pid: 1702,
            prev_comm: "sh",
            prev_prio: 120,
            prev_state: PrevState::DeadOrParked,
            next_pid: 0,
            next_comm: "swapper/5",
            next_prio: 120,
        };
        for f in [raw, printk] {
            assert_eq!(fast_switch(f), Some(want), "{f}");
            assert_eq!(r.general("sched_switch", f, f).unwrap(), want, "{f}");
        }
        // Extra spaces between fields (LISA's trace.txt pads them): the general path.
        let padded = raw.replace(" next_comm", "  next_comm");
        assert_eq!(r.record("sched_switch", &padded, "").unwrap(), want);
    }

    #[test]
    fn devlib_frequency_reports() {
        for (line, want) in [
            (
                "cpus=6\n  shutils-3106  [001]  2084.238797: print:  tracing_mark_write: \
                 cpu_frequency_devlib:        state=450000 cpu_id=5",
                Record::FrequencyReport { cpu: 5, khz: 450_000 },
            ),
            (
                "cpus=6\n  shutils-1703  [001]    76.538557: print:   0xffff00000819ff24s: \
                 cpu_frequency_devlib:        state=950000 cpu_id=0",
                Record::FrequencyReport { cpu: 0, khz: 950_000 },
            ),
            (
                "cpus=6\n  shutils-6977  [002] 259445.764420: print:  tracing_mark_write: \
                 cpu_frequency:        state=1100000 cpu_id=1",
                Record::FrequencyReport { cpu: 1, khz: 1_100_000 },
            ),
            (
                "cpus=6\n  sh-1702  [005]    76.368433: print:  0xffff00000819ff24s: TRACE_MARKER_START",
                Record::Other,
            ),
        ] {
            assert_eq!(one(line).unwrap().1, want, "{line}");
        }
    }

    #[test]
    fn byte_search_finds_the_first_occurrence() {
        for (hay, needle) in [
            ("   <idle>-0   [000] 1.0: x", " ["),
            ("a [b [1]", " ["),
            ("x: y: z", ": "),
            ("pid=1 prev_pid=2", " prev_pid="),
            (" [", " ["),
            ("[ [", " ["),
            ("", " ["),
            ("   ", " ["),
            ("ab", "abc"),
        ] {
            assert_eq!(
                find(hay.as_bytes(), needle.as_bytes()),
                hay.find(needle),
                "{needle:?} in {hay:?}"
            );
        }
    }

    #[test]
    fn the_fast_head_reads_what_the_general_head_reads() {
        let r = Reader::new("", "t.txt");
        for line in [
            "          <idle>-0     [000] 0.001000500: sched_switch: prev_comm=swapper/0",
            "   my task-1-12 [003] 12.5: sched_waking:   comm=a pid=1",
            "kworker/u4:1-77 [001] 0.000000000: print: tracing_mark_write: C|1|x|2",
            "x-4194304 [4095] 99999.123456789: e: ",
        ] {
            let fast = fast_head(line);
            assert!(fast.is_some(), "{line}");
            assert_eq!(fast, r.head(line).ok(), "{line}");
        }
        // Latency flags, a `[` in a comm, a tab, no pid, a bad time: the general path.
        for line in [
            "    kworker/u4:1-77 [001] d.h2. 12.500001: sched_waking: comm=rt-app pid=9",
            "  a[1]-5 [000] 0.1: e: f",
            "  a-5\t[000] 0.1: e: f",
            "  a [000] 0.1: e: f",
            "  a-5 [000] 0.1 : e: f",
            "  a-5 [000] 1.0123456789: e: f",
            "  a-5 [000] 0.1: my event: f",
            "  a-99999999999 [000] 0.1: e: f",
        ] {
            assert_eq!(fast_head(line), None, "{line}");
        }
    }

    #[test]
    fn fast_paths_read_what_the_general_path_reads() {
        let r = Reader::new("", "t.txt");
        for (event, f) in [
            (
                "sched_switch",
                "prev_comm=my task-1 prev_pid=7 prev_prio=-1 prev_state=D|K ==> \
                 next_comm=swapper/3 next_pid=0 next_prio=120",
            ),
            ("sched_waking", "comm=a b pid=12 prio=98 target_cpu=003"),
            (
                "sched_wakeup_new",
                "comm=x pid=4194304 prio=120 target_cpu=000",
            ),
        ] {
            let fast = match event {
                "sched_switch" => fast_switch(f),
                _ => fast_wake(event, f),
            };
            assert_eq!(fast, Some(r.general(event, f, f).unwrap()), "{event}: {f}");
        }
        // Fields in another order or extra fields: the general path.
        assert_eq!(
            fast_wake(
                "sched_wakeup",
                "comm=a pid=1 prio=120 success=1 target_cpu=000"
            ),
            None
        );
        assert!(matches!(
            r.record(
                "sched_wakeup",
                "comm=a pid=1 prio=120 success=1 target_cpu=000",
                ""
            ),
            Ok(Record::Wake {
                pid: 1,
                prio: 120,
                ..
            })
        ));
    }

    #[test]
    fn states_as_letters_or_numbers() {
        for (s, want) in [
            ("R+", PrevState::Runnable),
            ("S", PrevState::Sleeping),
            ("D|K", PrevState::Uninterruptible),
            ("X", PrevState::Dead),
            ("0", PrevState::Runnable),
            ("1", PrevState::Sleeping),
            ("2", PrevState::Uninterruptible),
            ("64", PrevState::DeadOrParked),
            ("x", PrevState::DeadOrParked),
            ("128", PrevState::Sleeping),
            ("256", PrevState::Runnable),
            ("0x100", PrevState::Runnable),
            // Before v4.14: preempted (TASK_STATE_MAX), D|K, D|N (TASK_IDLE), P, X.
            ("4096", PrevState::Runnable),
            ("2048", PrevState::Runnable),
            ("130", PrevState::Uninterruptible),
            ("1026", PrevState::Sleeping),
            ("512", PrevState::Sleeping),
            ("32", PrevState::Dead),
        ] {
            assert_eq!(parse_state(s), Some(want), "{s}");
        }
        assert_eq!(parse_state("?"), None);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = one("cpus=2\n\n<idle>-0 [000] 0.1: sched_switch: prev_comm=x").unwrap_err();
        assert_eq!(e.place, "line 3");
        assert!(e.expected.contains("next_comm="), "{e}");
        let e = one("<idle>-0 [000] 0.1: cpu_idle: state=1 cpu_id=0").unwrap_err();
        assert!(e.expected.contains("cpus="), "{e}");
        let e = one("cpus=2\nnot a trace line").unwrap_err();
        assert!(e.expected.contains("COMM-PID"), "{e}");
        let e = one("cpus=2\n<idle>-0 [007] 0.1: cpu_idle: state=1 cpu_id=0").unwrap_err();
        assert!(e.expected.contains("below cpus=2"), "{e}");
    }
}

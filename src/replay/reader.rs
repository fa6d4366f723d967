//! The ftrace text `trace-cmd report` prints (and `--trace` writes): a `cpus=N` header, then
//! one event a line, `COMM-PID [CPU] [FLAGS] SECS.FRAC: EVENT: FIELDS`, with the field formats
//! of the v6.1 tracepoints (`include/trace/events/sched.h`, `task.h`, `power.h`).
//!
//! The reader borrows from the text and allocates nothing per line. Events the replay does not
//! use (`print`, `bprint`, `cpu_idle`, PELT events, …) are returned as `Record::Other`; header
//! and comment lines (`# tracer: nop`, `version = 6`, `CPU 3 is empty`) are skipped; a
//! `CPU:N [LOST M EVENTS]` line is `Record::Lost`.

use crate::error::InputError;

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
            let (line, rest) = match self.rest.find('\n') {
                Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
                None => (self.rest, ""),
            };
            self.rest = rest;
            self.line += 1;
            let line = line.trim_end_matches('\r');
            let t = line.trim_start();
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
            let (head, event, fields) = self.head(line)?;
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
            let i = line[from..].find(" [").ok_or_else(bad)? + from;
            let after = &line[i + 2..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && after.as_bytes().get(digits) == Some(&b']') {
                break (i, i + 2 + digits);
            }
            from = i + 2;
        };
        let task = line[..open].trim();
        let (_, pid) = task.rsplit_once('-').ok_or_else(bad)?;
        let pid: u32 = pid.parse().map_err(|_| bad())?;
        let cpu: usize = line[open + 2..close].parse().map_err(|_| bad())?;
        let mut rest = line[close + 1..].trim_start();
        let mut irq = false;
        // Latency flags (`d.h2.`), when the report was asked for them.
        let first = rest.split(' ').next().unwrap_or("");
        if !first.ends_with(':') && !first.is_empty() {
            irq = matches!(first.as_bytes().get(2), Some(b'h' | b'H' | b's'));
            rest = rest[first.len()..].trim_start();
        }
        let colon = rest.find(": ").ok_or_else(bad)?;
        let ts = parse_ts(&rest[..colon]).ok_or_else(bad)?;
        let rest = &rest[colon + 2..];
        let (event, fields) = match rest.find(':') {
            Some(i) => (&rest[..i], rest[i + 1..].trim_start()),
            None => return Err(bad()),
        };
        if event.is_empty() || event.contains(' ') {
            return Err(bad());
        }
        Ok((Head { pid, cpu, ts, irq }, event, fields))
    }

    fn record(&self, event: &str, f: &'a str, line: &str) -> Result<Record<'a>, InputError> {
        let need = |what: &str| self.err(format!("`{event}` with {what}"), line);
        Ok(match event {
            "sched_switch" => {
                let arrow = f.find(" ==> ").ok_or_else(|| need("`==>`"))?;
                let (prev, next) = (&f[..arrow], &f[arrow + 5..]);
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
            _ => Record::Other,
        })
    }
}

/// `SECS.FRAC` (any number of fraction digits up to 9) as ns.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Where `key` starts a field (at the start or after a space).
fn find_key(s: &str, key: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(key) {
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
    let len = s[start..].find(end)?;
    Some(&s[start..start + len])
}

/// A field's value up to the next space.
fn value<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let start = find_key(s, key)?;
    let v = &s[start..];
    Some(v.split(' ').next().unwrap_or(v))
}

fn int<T: std::str::FromStr>(s: &str, key: &str) -> Option<T> {
    value(s, key)?.parse().ok()
}

/// `prev_state` as v6.1 prints it (`R`, `R+`, `S`, `D`, `X`, `D|K`…) or as older kernels
/// and raw dumps give it, a number (TASK_REPORT bits: 1 S, 2 D, 4 T, 8 t, 16 X, 32 Z, 64 P,
/// 128 I; 0 and the preemption bit 256 alone: R).
fn parse_state(s: &str) -> Option<PrevState> {
    if let Some(hex) = s.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(state_bits);
    }
    if let Ok(n) = s.parse::<u64>() {
        return Some(state_bits(n));
    }
    Some(match s.as_bytes().first()? {
        b'R' => PrevState::Runnable,
        b'S' | b'T' | b't' | b'P' | b'I' | b'W' | b'K' | b'N' => PrevState::Sleeping,
        b'D' => PrevState::Uninterruptible,
        b'X' | b'Z' => PrevState::Dead,
        _ => return None,
    })
}

fn state_bits(n: u64) -> PrevState {
    let n = n & 0xff;
    if n & 2 != 0 {
        PrevState::Uninterruptible
    } else if n & (16 | 32) != 0 {
        PrevState::Dead
    } else if n == 0 {
        PrevState::Runnable
    } else {
        PrevState::Sleeping
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
            ("64", PrevState::Sleeping),
            ("256", PrevState::Runnable),
        ] {
            assert_eq!(parse_state(s), Some(want), "{s}");
        }
        assert_eq!(parse_state("?"), None);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = one("cpus=2\n\n<idle>-0 [000] 0.1: sched_switch: prev_comm=x").unwrap_err();
        assert_eq!(e.place, "line 3");
        assert!(e.expected.contains("==>"), "{e}");
        let e = one("<idle>-0 [000] 0.1: cpu_idle: state=1 cpu_id=0").unwrap_err();
        assert!(e.expected.contains("cpus="), "{e}");
        let e = one("cpus=2\nnot a trace line").unwrap_err();
        assert!(e.expected.contains("COMM-PID"), "{e}");
        let e = one("cpus=2\n<idle>-0 [007] 0.1: cpu_idle: state=1 cpu_id=0").unwrap_err();
        assert!(e.expected.contains("below cpus=2"), "{e}");
    }
}

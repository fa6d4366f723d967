//! tracefs's `trace` text → the text `schedlab run --trace` writes (the layout of `trace-cmd
//! report`, which the replay reads): schedlab's header (`# tracer: nop`, comments, `cpus=N`)
//! instead of tracefs's, and every event line as tracefs prints it, latency flags included
//! (`trace-cmd report -l` prints them too; the replay reads hard and soft interrupt context
//! from them), except that a `trace_marker` write reads `print: tracing_mark_write: TEXT`
//! as trace-cmd and schedlab print it. `CPU:N [LOST M EVENTS]` lines are kept. A marker's
//! text that held newlines continues on lines of its own: they are joined to it with `\n`.
//! Bytes that are not UTF-8 (a comm can hold any) become U+FFFD.

use std::io::{self, BufRead, Write};

/// What a conversion wrote.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Converted {
    /// Event lines.
    pub events: u64,
    /// `CPU:N [LOST M EVENTS]` lines.
    pub lost_lines: u64,
    /// Per CPU, the time of its last event (ns).
    pub last_ts: Vec<Option<u64>>,
    /// Event lines left out because they came after `cut`.
    pub cut_events: u64,
}

/// The head of a tracefs event line: its CPU, its time in ns and where the event's name
/// starts. `COMM-PID [CPU] FLAGS SECS.FRAC: EVENT: FIELDS`, the comm possibly with spaces.
pub fn head(line: &str) -> Option<(usize, u64, usize)> {
    let b = line.as_bytes();
    // The CPU column: the first ` [digits]` (a comm may hold spaces, dashes, brackets).
    let mut from = 0;
    let (open, close) = loop {
        let i = from + line[from..].find(" [")?;
        let digits = b[i + 2..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && b.get(i + 2 + digits) == Some(&b']') {
            break (i, i + 2 + digits);
        }
        from = i + 2;
    };
    let task = line[..open].trim();
    let (_, pid) = task.rsplit_once('-')?;
    pid.parse::<u32>().ok()?;
    let cpu = line[open + 2..close].parse().ok()?;
    // Flags (`d..2.`) unless the next column is already the time.
    let mut at = close + 1;
    let mut tokens = 0;
    loop {
        let rest = &line[at..];
        let start = at + (rest.len() - rest.trim_start().len());
        let end = start + line[start..].find(' ')?;
        let token = &line[start..end];
        if let Some(ts) = token.strip_suffix(':') {
            let ts = parse_ts(ts)?;
            let event = end + 1;
            line[event..].find(':')?;
            return Some((cpu, ts, event));
        }
        tokens += 1;
        if tokens > 1 {
            return None;
        }
        at = end;
    }
}

/// `SECS.FRAC` as ns.
fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let scale = 10u64.pow(9 - frac.len() as u32);
    let frac: u64 = frac.parse().ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
}

/// Convert tracefs's `trace` text from `input` onto `out` (after the header, which the
/// caller writes), for a machine of `nr_cpus`; events after `cut` (ns) are left out.
pub fn convert<R: BufRead, W: Write>(
    mut input: R,
    out: &mut W,
    nr_cpus: usize,
    cut: Option<u64>,
) -> io::Result<Converted> {
    let mut c = Converted {
        last_ts: vec![None; nr_cpus],
        ..Converted::default()
    };
    let mut raw = Vec::new();
    // The event line being built: written when the next one starts (a marker's text may
    // continue on lines of its own).
    let mut pending = String::new();
    loop {
        raw.clear();
        if input.read_until(b'\n', &mut raw)? == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.starts_with('#') && pending.is_empty() {
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with("CPU:") && line.contains("LOST") {
            flush(out, &mut pending)?;
            c.lost_lines += 1;
            writeln!(out, "{line}")?;
            continue;
        }
        let Some((cpu, ts, event)) = head(line) else {
            if !pending.is_empty() {
                pending.push_str("\\n");
                pending.push_str(line);
            }
            continue;
        };
        flush(out, &mut pending)?;
        if cut.is_some_and(|cut| ts > cut) {
            c.cut_events += 1;
            continue;
        }
        if cpu >= c.last_ts.len() {
            c.last_ts.resize(cpu + 1, None);
        }
        c.last_ts[cpu] = Some(ts);
        c.events += 1;
        if line[event..].starts_with("tracing_mark_write:") {
            pending.push_str(&line[..event]);
            pending.push_str("print: ");
            pending.push_str(&line[event..]);
        } else {
            pending.push_str(line);
        }
    }
    flush(out, &mut pending)?;
    Ok(c)
}

fn flush<W: Write>(out: &mut W, pending: &mut String) -> io::Result<()> {
    if !pending.is_empty() {
        out.write_all(pending.as_bytes())?;
        out.write_all(b"\n")?;
        pending.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "# tracer: nop
#
# entries-in-buffer/entries-written: 4/4   #P:2
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
          <idle>-0       [001] d..2.  4163.667863: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a b next_pid=7 next_prio=120
      with space-7       [001] ...1.  4163.744872: tracing_mark_write: hello
world
           <...>-8       [000] d.h2.  4163.800000: sched_waking: comm=x pid=9 prio=120 target_cpu=000
CPU:0 [LOST 3 EVENTS]
           x[1]-9        [000] d..2.  4164.000001: sched_switch: prev_comm=x prev_pid=9 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";

    #[test]
    fn heads() {
        let l = "      with space-7       [001] ...1.  4163.744872: tracing_mark_write: hello";
        let (cpu, ts, ev) = head(l).unwrap();
        assert_eq!((cpu, ts), (1, 4_163_744_872_000));
        assert!(l[ev..].starts_with("tracing_mark_write"));
        // No flags column.
        let (cpu, ts, _) = head("a-1 [002] 1.5: e: x").unwrap();
        assert_eq!((cpu, ts), (2, 1_500_000_000));
        assert_eq!(head("world"), None);
        assert_eq!(head("a-1 [002] d..2. x 1.5: e: x"), None);
    }

    #[test]
    fn lines_keep_their_columns_and_markers_read_as_print() {
        let mut out = Vec::new();
        let c = convert(TRACE.as_bytes(), &mut out, 2, None).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0]
            .starts_with("          <idle>-0       [001] d..2.  4163.667863: sched_switch:"));
        assert_eq!(
            lines[1],
            "      with space-7       [001] ...1.  4163.744872: print: tracing_mark_write: hello\\nworld"
        );
        assert_eq!(lines[3], "CPU:0 [LOST 3 EVENTS]");
        assert_eq!(c.events, 4);
        assert_eq!(c.lost_lines, 1);
        assert_eq!(
            c.last_ts,
            vec![Some(4_164_000_001_000), Some(4_163_744_872_000)]
        );
        let mut out = Vec::new();
        let c = convert(TRACE.as_bytes(), &mut out, 2, Some(4_163_800_000_000)).unwrap();
        assert_eq!((c.events, c.cut_events), (3, 1));
    }
}

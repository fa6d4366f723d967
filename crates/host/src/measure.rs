//! Measuring on the machine: a command's runs, each with what else the machine did
//! meanwhile — the steal time `/proc/stat` counts and the CPU time of everything that was
//! not the command — and the numbers the benchmarks print, read from their output.

use schedlab::report::validation::{Noise, Spread};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The machine's CPU time in clock ticks (`/proc/stat`'s `cpu` line) and ours.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    /// user + nice + system + irq + softirq over every CPU.
    busy: u64,
    steal: u64,
    /// This process's CPU time and its waited-for children's (`/proc/self/stat` utime,
    /// stime, cutime, cstime).
    ours: u64,
    at: Instant,
}

fn snapshot() -> Snapshot {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu: Vec<u64> = stat
        .lines()
        .find(|l| l.starts_with("cpu "))
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(|f| f.parse().unwrap_or(0))
                .collect()
        })
        .unwrap_or_default();
    let f = |i: usize| cpu.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal guest guest_nice (guest is in user).
    let busy = f(0) + f(1) + f(2) + f(5) + f(6);
    let own = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis, from field 3 (state) on.
    let rest: Vec<u64> = own
        .rsplit_once(')')
        .map(|(_, r)| {
            r.split_whitespace()
                .map(|f| f.parse().unwrap_or(0))
                .collect()
        })
        .unwrap_or_default();
    // utime, stime, cutime, cstime are fields 14–17: 11–14 after the state.
    let ours = (11..15).map(|i| rest.get(i).copied().unwrap_or(0)).sum();
    Snapshot {
        busy,
        steal: f(7),
        ours,
        at: Instant::now(),
    }
}

/// What the machine did during one measured run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Load {
    pub wall_s: f64,
    /// Steal time, s.
    pub steal_s: f64,
    /// CPU time of everything but this process and the children it waited for, s.
    pub others_s: f64,
}

/// Run `f` (which runs and waits for the measured command), and what the machine did
/// meanwhile.
pub fn during<T>(f: impl FnOnce() -> T) -> (T, Load) {
    let a = snapshot();
    let t = f();
    let b = snapshot();
    let hz = ticks_per_second();
    let s = |ticks: u64| ticks as f64 / hz;
    let others = b
        .busy
        .saturating_sub(a.busy)
        .saturating_sub(b.ours.saturating_sub(a.ours));
    (
        t,
        Load {
            wall_s: b.at.duration_since(a.at).as_secs_f64(),
            steal_s: s(b.steal.saturating_sub(a.steal)),
            others_s: s(others),
        },
    )
}

#[cfg(target_os = "linux")]
fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

#[cfg(not(target_os = "linux"))]
fn ticks_per_second() -> f64 {
    100.0
}

/// The CPUs /proc/stat counts over (for the others' share).
pub fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The noise over a row's runs: their steal summed, the others' CPU time as a share of the
/// machine over their wall time.
pub fn noise(loads: &[Load]) -> Noise {
    let wall: f64 = loads.iter().map(|l| l.wall_s).sum();
    let others: f64 = loads.iter().map(|l| l.others_s).sum();
    Noise {
        steal_ms: loads.iter().map(|l| l.steal_s).sum::<f64>() * 1e3,
        others_pct: if wall > 0.0 {
            (others / (wall * online_cpus() as f64) * 100.0).min(100.0)
        } else {
            0.0
        },
    }
}

/// A measurement: one number per run, with each run's load.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    pub values: Vec<f64>,
    pub loads: Vec<Load>,
}

impl Runs {
    pub fn spread(&self) -> Option<Spread> {
        Spread::of(&self.values)
    }

    pub fn noise(&self) -> Noise {
        noise(&self.loads)
    }
}

/// Whether `program` is on the PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            let p = d.join(program);
            p.is_file() && is_executable(&p)
        })
    })
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &Path) -> bool {
    true
}

/// Run `words` to its end, its standard output and error together, and the load meanwhile;
/// Err says why it failed (it could not start, or its status and last line).
pub fn run(words: &[String]) -> Result<(String, Load), String> {
    let (program, args) = words.split_first().ok_or("no command")?;
    let (out, load) = during(|| {
        Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
    });
    let out = out.map_err(|e| format!("`{program}` could not run: {e}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!(
            "`{}` {}: {}",
            words.join(" "),
            out.status,
            last.trim()
        ));
    }
    Ok((text, load))
}

/// The number after `key` on the first line that has it (`Time: 0.108`, `Total time: 0.5
/// [sec]`).
pub fn number_after(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let (_, rest) = l.split_once(key)?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// The number before `unit` on the first line that has it (`3.112050 usecs/op`).
pub fn number_before(text: &str, unit: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let (head, _) = l.split_once(unit)?;
        head.split_whitespace().last()?.parse().ok()
    })
}

/// `perf bench sched pipe`'s µs per round trip (`9.394700 usecs/op`).
pub fn perf_pipe_us(out: &str) -> Option<f64> {
    number_before(out, "usecs/op")
}

/// `perf bench sched messaging`'s total time, s (`Total time: 0.627 [sec]`).
pub fn perf_total_s(out: &str) -> Option<f64> {
    number_after(out, "Total time:")
}

/// hackbench's completion time, s (`Time: 0.083`).
pub fn hackbench_s(out: &str) -> Option<f64> {
    number_after(out, "Time:")
}

/// cyclictest's numbers from its `-h` histogram output: min, p50, p99, max (µs). A
/// percentile beyond the histogram (an overflow) is the maximum, an upper bound.
pub fn cyclictest_numbers(out: &str) -> Option<[f64; 4]> {
    let field = |key: &str| number_after(out, key);
    let (min, max) = (field("# Min Latencies:")?, field("# Max Latencies:")?);
    let overflows = field("# Histogram Overflows:").unwrap_or(0.0) as u64;
    let buckets: Vec<(u64, u64)> = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (b, c) = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
            f.next().is_none().then_some((b, c))
        })
        .collect();
    let n: u64 = buckets.iter().map(|b| b.1).sum::<u64>() + overflows;
    if n == 0 {
        return None;
    }
    let pct = |q: f64| {
        let rank = ((q * n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for &(b, c) in &buckets {
            seen += c;
            if seen >= rank {
                return b as f64;
            }
        }
        max
    };
    Some([min, pct(0.5), pct(0.99), max])
}

/// A command line's words.
pub fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// Run `cmd` `runs` times (at least once) and read a number from each output with `parse`;
/// `what` names the number when an output has none.
pub fn runs_of(
    cmd: &[String],
    runs: usize,
    what: &str,
    parse: impl Fn(&str) -> Option<f64>,
) -> Result<Runs, String> {
    let mut r = Runs::default();
    for _ in 0..runs.max(1) {
        let (out, load) = run(cmd)?;
        let v = parse(&out)
            .ok_or_else(|| format!("`{}` printed no {what}: {}", cmd.join(" "), out.trim()))?;
        r.values.push(v);
        r.loads.push(load);
    }
    Ok(r)
}

/// The median of `values` (0 when there are none).
pub fn median(values: &[f64]) -> f64 {
    Spread::of(values).map_or(0.0, |s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmarks_numbers_read_from_their_output() {
        let perf = "# Running 'sched/pipe' benchmark:\n\n     Total time: 0.062 [sec]\n\n       3.112050 usecs/op\n         321331 ops/sec\n";
        assert_eq!(number_before(perf, "usecs/op"), Some(3.11205));
        assert_eq!(number_after(perf, "Total time:"), Some(0.062));
        let hb = "Running in process mode with 2 groups\nTime: 0.108\n";
        assert_eq!(number_after(hb, "Time:"), Some(0.108));
        assert_eq!(number_after(hb, "Nothing:"), None);
    }

    #[test]
    fn cyclictest_percentiles_come_from_its_histogram() {
        let out = "# /dev/cpu_dma_latency set to 0us\n000000 000000\n000002 000049\n000003 000050\n000004 000000\n# Total: 000000100\n# Min Latencies: 00002\n# Avg Latencies: 00002\n# Max Latencies: 00090\n# Histogram Overflows: 00001\n";
        // 49 + 50 in buckets and one overflow: p50 is bucket 3, p99 bucket 3, p100 beyond.
        assert_eq!(cyclictest_numbers(out), Some([2.0, 3.0, 3.0, 90.0]));
        let over = out.replace("000003 000050", "000003 000040");
        assert_eq!(cyclictest_numbers(&over).map(|n| n[2]), Some(90.0));
        assert_eq!(cyclictest_numbers("nothing"), None);
    }

    #[test]
    fn a_run_of_true_measures_its_load_and_a_failing_one_says_why() {
        if !have("true") || !have("false") {
            return;
        }
        let (_, load) = run(&["true".to_string()]).unwrap();
        assert!(load.wall_s >= 0.0 && load.steal_s >= 0.0 && load.others_s >= 0.0);
        let e = run(&["false".to_string()]).unwrap_err();
        assert!(e.contains("`false`"), "{e}");
        let e = run(&["/nonexistent/x".to_string()]).unwrap_err();
        assert!(e.contains("could not run"), "{e}");
    }
}

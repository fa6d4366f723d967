//! `schedlab host validate`'s table: each row a number measured on the machine schedlab runs
//! on (the median and spread of its runs) beside the same number simulated on that machine's
//! platform (over as many seeds), their ratio and whether it is within 25%. The rows are
//! measured and simulated by `crates/host` (`validate/`); this is the comparison and its
//! rendering, kept with the other reports.

use serde::Serialize;
use std::fmt::Write;

/// How close a simulated number must be to the measured one to count as a match: within
/// 25% of it, as `schedlab reproduce` judges magnitudes.
pub const WITHIN: f64 = 0.25;

/// The median and range of a number over runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Spread {
    /// Of the values (None when there are none); the median of an even count is the mean
    /// of the middle two.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        })
    }
}

/// What the machine did besides the measured command while a row's runs ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Noise {
    /// Steal time over the runs (`/proc/stat`: time the hypervisor ran something else while
    /// this machine's CPUs wanted to run), ms.
    pub steal_ms: f64,
    /// The CPU time everything but the command used, as a share of the machine's CPUs over
    /// the runs' wall time, %.
    pub others_pct: f64,
}

/// One row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The workload family: `rt-app`, `hackbench`, `perf pipe`, `cyclictest`, `replay`.
    pub family: String,
    /// What is compared, with its unit (`example1 thread0 cpu ms`).
    pub name: String,
    /// Measured on the machine, over the runs.
    pub real: Option<Spread>,
    /// Simulated, over the seeds.
    pub sim: Option<Spread>,
    /// A calibration point: the platform's costs were fitted on this very measurement
    /// (`host calibrate`), so it is shown but not counted.
    pub fit: bool,
    /// Why the row could not run (a tool missing, rt-app refusing the file, no tracefs):
    /// shown, not counted.
    pub not_run: Option<String>,
    pub noise: Noise,
}

impl Row {
    /// A row that could not run, and why.
    pub fn not_run(family: &str, name: &str, why: impl Into<String>) -> Row {
        Row {
            family: family.into(),
            name: name.into(),
            real: None,
            sim: None,
            fit: false,
            not_run: Some(why.into()),
            noise: Noise::default(),
        }
    }

    /// Simulated median over measured median; 1 when both are 0.
    pub fn ratio(&self) -> Option<f64> {
        let (r, s) = (self.real?.median, self.sim?.median);
        if r == 0.0 {
            return Some(if s == 0.0 { 1.0 } else { f64::INFINITY });
        }
        Some(s / r)
    }

    /// Whether the simulated median is within 25% of the measured one (None when the row
    /// has no pair of numbers).
    pub fn within(&self) -> Option<bool> {
        self.ratio().map(|q| (q - 1.0).abs() <= WITHIN + 1e-12)
    }

    /// Counted in the summary: it has both numbers and is not a fit.
    pub fn counted(&self) -> bool {
        !self.fit && self.not_run.is_none() && self.within().is_some()
    }
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// The platform file simulated.
    pub platform: String,
    /// Runs of each measurement, and seeds of each simulation.
    pub runs: usize,
    pub rows: Vec<Row>,
    /// What applies to many rows (the rt-app calibration, conversions): printed under the
    /// table.
    pub notes: Vec<String>,
}

impl Validation {
    /// (rows within 25%, rows counted).
    pub fn score(&self) -> (usize, usize) {
        let counted = self.rows.iter().filter(|r| r.counted());
        let m = counted.clone().count();
        let k = counted.filter(|r| r.within() == Some(true)).count();
        (k, m)
    }

    /// The summary line: `host: K of M rows within 25%`.
    pub fn summary(&self) -> String {
        let (k, m) = self.score();
        format!("host: {k} of {m} rows within 25%")
    }
}

/// A number for the table: three significant digits or so.
fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

fn spread(s: &Option<Spread>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.n == 1 || s.min == s.max => num(s.median),
        Some(s) => format!("{} ({}..{})", num(s.median), num(s.min), num(s.max)),
    }
}

/// The table, the notes and the summary line.
pub fn render(v: &Validation) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "host validate on {}: each machine number the median (min..max) of {} run(s), each schedlab number of as many seeds",
        v.platform, v.runs
    );
    let width = v
        .rows
        .iter()
        .map(|r| r.family.chars().count() + 1 + r.name.chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    let _ = writeln!(
        s,
        "{:<width$}  {:>28}  {:>28}  {:>6}  {:>5}  {:>8}  {:>6}",
        "row", "machine", "schedlab", "ratio", "±25%", "steal ms", "others"
    );
    for r in &v.rows {
        let row = format!("{} {}", r.family, r.name);
        if let Some(why) = &r.not_run {
            let _ = writeln!(s, "{row:<width$}  could not run: {why}");
            continue;
        }
        let ratio = r.ratio().map_or("-".into(), |q| {
            if q.is_finite() {
                format!("{q:.2}")
            } else {
                "inf".into()
            }
        });
        let within = match (r.fit, r.within()) {
            (true, _) => "fit",
            (false, Some(true)) => "yes",
            (false, Some(false)) => "no",
            (false, None) => "-",
        };
        let _ = writeln!(
            s,
            "{row:<width$}  {:>28}  {:>28}  {ratio:>6}  {within:>5}  {:>8.0}  {:>5.0}%",
            spread(&r.real),
            spread(&r.sim),
            r.noise.steal_ms,
            r.noise.others_pct,
        );
    }
    for n in &v.notes {
        let _ = writeln!(s, "note: {n}");
    }
    let _ = writeln!(s, "{}", v.summary());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(real: &[f64], sim: &[f64]) -> Row {
        Row {
            family: "f".into(),
            name: "n".into(),
            real: Spread::of(real),
            sim: Spread::of(sim),
            fit: false,
            not_run: None,
            noise: Noise::default(),
        }
    }

    #[test]
    fn the_median_of_an_even_count_is_the_middle_pair_s_mean() {
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 4.0, 4));
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn fits_and_rows_that_did_not_run_are_shown_and_not_counted() {
        let mut fit = row(&[1.0], &[1.0]);
        fit.fit = true;
        let v = Validation {
            platform: "p".into(),
            runs: 1,
            rows: vec![
                row(&[10.0], &[12.5]),
                row(&[10.0], &[12.6]),
                row(&[0.0], &[0.0]),
                fit,
                Row::not_run("f", "m", "no such tool"),
            ],
            notes: vec![],
        };
        assert_eq!(v.score(), (2, 3));
        let text = render(&v);
        assert!(text.ends_with("host: 2 of 3 rows within 25%\n"), "{text}");
        assert!(text.contains("f m  could not run: no such tool"), "{text}");
        assert!(text.contains(" fit "), "{text}");
    }
}

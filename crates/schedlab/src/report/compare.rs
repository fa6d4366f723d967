//! `schedlab compare`: two or more sides (experiments, or one workload under several kernel
//! variants) over N seeds, summarised as mmtests' compare-kernels prints its comparisons — a
//! mean per metric (Hmean for rates, Amean otherwise), its standard deviation, the difference
//! to the first column in percent with mmtests' sign, so that + is always better: `pdiff`
//! (new - base) / base for rates, where higher is better, `pndiff` (base - new) / base for
//! times, energies and counts, where lower is better; from a zero base mmtests prints 100
//! (pdiff) or -99 (pndiff) for any change and 0 for none, and so do we. `*` marks where
//! Welch's t-test (unequal variances, two-sided) finds the difference significant at 95%, the
//! test mmtests uses (`calc_welch_test` in its `bin/lib/VMR/Stat.pm`: Welch's t with the
//! degrees of freedom rounded down, alpha 5%, two-sided). Min, Max and CoeffVar rows on
//! request; the JSON keeps every seed's value.

use super::Results;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use std::fmt::Write;

/// Significance level of the t-test.
const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MeanKind {
    /// Harmonic mean: for rates (IOPS, PIDs/s, ops/s), as mmtests uses for throughput.
    Hmean,
    /// Arithmetic mean: times, energies, counts.
    Amean,
}

/// One metric of one run.
pub struct Sample {
    pub name: String,
    pub kind: MeanKind,
    pub value: f64,
}

/// Counts whose rate the generators also report (`ios` → `iops`): left out of the table.
const COUNTS: &[&str] = &["ios", "ops", "pids"];

/// Whether a generator metric is a rate (Hmean) rather than a time, size or count (Amean).
fn is_rate(key: &str) -> bool {
    key == "iops" || key.ends_with("_per_sec")
}

/// A generator's numeric metrics (nested objects as `a.b`), named `prefix` + key.
fn generator_samples(prefix: &str, v: &serde_json::Value, out: &mut Vec<Sample>) {
    let Some(m) = v.as_object() else {
        return;
    };
    for (k, x) in m {
        let name = format!("{prefix}{k}");
        if let Some(value) = x.as_f64() {
            if !COUNTS.contains(&k.as_str()) {
                let kind = if is_rate(k) {
                    MeanKind::Hmean
                } else {
                    MeanKind::Amean
                };
                out.push(Sample { name, kind, value });
            }
        } else if x.is_object() {
            generator_samples(&format!("{name}."), x, out);
        }
    }
}

/// The metrics `compare` and `sweep` read from a run: the workload generators' own (named
/// `<workload>.<metric>` when an experiment runs several), then energy, wakeup latency,
/// deadline misses and uclamp fast-path operations.
pub fn samples(r: &Results) -> Vec<Sample> {
    let mut out = Vec::new();
    if let Some(w) = &r.workload_metrics {
        if w.get("generator").is_some() {
            generator_samples("", w, &mut out);
        } else if let Some(parts) = w.as_object() {
            for (part, m) in parts {
                generator_samples(&format!("{part}."), m, &mut out);
            }
        }
    }
    let (mut n, mut sum, mut p99) = (0u64, 0f64, 0u64);
    for t in &r.tasks {
        let l = &t.wakeup_latency_ns;
        n += l.count;
        sum += l.mean as f64 * l.count as f64;
        p99 = p99.max(l.p99);
    }
    let misses: u64 = r.tasks.iter().map(|t| t.deadline_misses).sum();
    let amean = |name: &str, value| Sample {
        name: name.to_string(),
        kind: MeanKind::Amean,
        value,
    };
    out.push(amean("energy_mj", r.energy_mj));
    out.push(amean(
        "wakeup_latency_mean_us",
        if n > 0 { sum / n as f64 / 1e3 } else { 0.0 },
    ));
    out.push(amean("wakeup_latency_p99_max_us", p99 as f64 / 1e3));
    out.push(amean("deadline_misses", misses as f64));
    // uclamp's fast-path work (bucket increments, decrements, rescans): the cost the
    // static-key debate of seeds 000/001 is about.
    let ops = r.uclamp_ops;
    out.push(amean("uclamp_ops", (ops.inc + ops.dec + ops.rescan) as f64));
    out
}

/// A metric over all sides.
#[derive(Debug, Clone, Serialize)]
pub struct MetricRow {
    pub metric: String,
    pub mean: MeanKind,
    /// `higher` (rates) or `lower` (times, energies, counts) is better.
    pub better: &'static str,
    /// Per side: the mean and the standard deviation over the runs.
    pub means: Vec<f64>,
    pub stddevs: Vec<f64>,
    /// Per side: the smallest and largest run, and the standard deviation in percent of the
    /// mean (mmtests' CoeffVar; 0 for a zero mean).
    pub mins: Vec<f64>,
    pub maxs: Vec<f64>,
    pub coeff_var_pct: Vec<f64>,
    /// Per side: the difference to the first side, percent, + better (`pct_better`).
    pub diff_pct: Vec<f64>,
    /// Per side: Welch's t-test against the first side at 95% (false for the first).
    pub significant: Vec<bool>,
    /// Per side, per seed (in `seeds` order): the value of each run.
    pub values: Vec<Vec<f64>>,
}

/// The JSON results' format version (`schema/results.schema.json`), in every result.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub sides: Vec<String>,
    pub runs: usize,
    /// The seeds every side ran.
    pub seeds: Vec<u64>,
    /// How `diff_pct` is computed.
    pub rule: &'static str,
    pub metrics: Vec<MetricRow>,
    /// Print the Min, Max and CoeffVar rows too (`--stats`).
    #[serde(skip)]
    pub stats: bool,
}

/// The percent rule, as the table's header states it.
pub const RULE: &str = "% is + when better: (new-base)/base for rates (Hmean), \
    (base-new)/base for the rest (Amean: lower is better); from a zero base 100 or -99, as mmtests";

/// mmtests' percentage difference, + when `new` is better than `base`: `pdiff` when higher
/// is better, `pndiff` when lower is; from a zero base, 100 (pdiff) or -99 (pndiff) for any
/// change, 0 for none.
pub fn pct_better(base: f64, new: f64, higher_is_better: bool) -> f64 {
    if base == 0.0 {
        return match (new == 0.0, higher_is_better) {
            (true, _) => 0.0,
            (false, true) => 100.0,
            (false, false) => -99.0,
        };
    }
    let change = (new - base) / base.abs() * 100.0;
    if higher_is_better {
        change
    } else {
        -change
    }
}

/// Hmean or Amean of `xs` (0 for an Hmean over a non-positive value).
pub fn mean(kind: MeanKind, xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    match kind {
        MeanKind::Amean => xs.iter().sum::<f64>() / n,
        MeanKind::Hmean if xs.iter().any(|&x| x <= 0.0) => 0.0,
        MeanKind::Hmean => n / xs.iter().map(|x| 1.0 / x).sum::<f64>(),
    }
}

/// Sample variance (n - 1).
pub fn variance(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    if xs.len() < 2 {
        return 0.0;
    }
    let m = xs.iter().sum::<f64>() / n;
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
}

/// Welch's two-sided t-test: whether the means of `a` and `b` differ at 95%.
pub fn welch_significant(a: &[f64], b: &[f64]) -> bool {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (ma, mb) = (a.iter().sum::<f64>() / na, b.iter().sum::<f64>() / nb);
    let (sa, sb) = (variance(a) / na, variance(b) / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        // Deterministic on both sides: any difference is real, none is none.
        return ma != mb;
    }
    if a.len() < 2 || b.len() < 2 {
        return false;
    }
    let t = (ma - mb) / se2.sqrt();
    // Welch–Satterthwaite degrees of freedom, rounded down to an integer as mmtests'
    // `calc_welch_test` (bin/lib/VMR/Stat.pm) does before looking up Student's t.
    let df = (se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0)))
        .floor()
        .max(1.0);
    let dist = StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom");
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    p < ALPHA
}

/// Compare the runs of each side (all sides have the same number of runs, seeds 0..n).
pub fn compare(sides: &[(String, Vec<Results>)]) -> Comparison {
    let per_side: Vec<Vec<Vec<Sample>>> = sides
        .iter()
        .map(|(_, runs)| runs.iter().map(samples).collect())
        .collect();
    let names: Vec<(String, MeanKind)> = per_side[0]
        .first()
        .map(|s| s.iter().map(|x| (x.name.clone(), x.kind)).collect())
        .unwrap_or_default();
    let metrics = names
        .into_iter()
        .map(|(name, kind)| {
            let values: Vec<Vec<f64>> = per_side
                .iter()
                .map(|runs| {
                    runs.iter()
                        .filter_map(|s| s.iter().find(|x| x.name == name).map(|x| x.value))
                        .collect()
                })
                .collect();
            let means: Vec<f64> = values.iter().map(|v| mean(kind, v)).collect();
            let stddevs: Vec<f64> = values.iter().map(|v| variance(v).sqrt()).collect();
            let base = means[0];
            let higher = kind == MeanKind::Hmean;
            let fold = |v: &Vec<f64>, f: fn(f64, f64) -> f64| v.iter().copied().reduce(f);
            MetricRow {
                metric: name,
                mean: kind,
                better: if higher { "higher" } else { "lower" },
                mins: values
                    .iter()
                    .map(|v| fold(v, f64::min).unwrap_or(0.0))
                    .collect(),
                maxs: values
                    .iter()
                    .map(|v| fold(v, f64::max).unwrap_or(0.0))
                    .collect(),
                coeff_var_pct: means
                    .iter()
                    .zip(&stddevs)
                    .map(|(m, sd)| if *m != 0.0 { sd / m.abs() * 100.0 } else { 0.0 })
                    .collect(),
                stddevs,
                diff_pct: means.iter().map(|&m| pct_better(base, m, higher)).collect(),
                significant: values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| i > 0 && welch_significant(&values[0], v))
                    .collect(),
                means,
                values,
            }
        })
        .collect();
    Comparison {
        schema_version: SCHEMA_VERSION,
        sides: sides.iter().map(|(n, _)| n.clone()).collect(),
        runs: sides[0].1.len(),
        seeds: sides[0].1.iter().map(|r| r.seed).collect(),
        rule: RULE,
        metrics,
        stats: false,
    }
}

/// The mmtests-style table.
pub fn render(c: &Comparison) -> String {
    let mut s = String::new();
    // A column is as wide as its side's name, at least a value and its percentage.
    let widths: Vec<usize> = c.sides.iter().map(|n| n.chars().count().max(24)).collect();
    let _ = writeln!(s, "# {RULE}");
    let _ = write!(s, "{:<34}", format!("{} runs each", c.runs));
    for (side, w) in c.sides.iter().zip(&widths) {
        let _ = write!(s, " {side:>w$}");
    }
    s.push('\n');
    for m in &c.metrics {
        let label = match m.mean {
            MeanKind::Hmean => "Hmean",
            MeanKind::Amean => "Amean",
        };
        let _ = write!(s, "{label:<7}{:<27}", m.metric);
        for (i, w) in widths.iter().enumerate() {
            let pct = if m.significant[i] {
                format!("*{:7.2}%*", m.diff_pct[i])
            } else {
                format!("({:7.2}%)", m.diff_pct[i])
            };
            let cell = format!("{:>13.2} {pct}", m.means[i]);
            let _ = write!(s, " {cell:>w$}");
        }
        s.push('\n');
        let mut plain = |label: &str, xs: &[f64]| {
            let _ = write!(s, "{label:<7}{:<27}", m.metric);
            for (x, w) in xs.iter().zip(&widths) {
                let cell = format!("{x:>13.2} {:>10}", "");
                let _ = write!(s, " {cell:>w$}");
            }
            s.push('\n');
        };
        plain("Stddev", &m.stddevs);
        if c.stats {
            plain("CoeffVar", &m.coeff_var_pct);
            plain("Min", &m.mins);
            plain("Max", &m.maxs);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_finds_clear_differences_and_not_noise() {
        let a = [10.0, 10.5, 9.5, 10.2, 9.8];
        let b = [12.0, 12.4, 11.7, 12.1, 11.9];
        assert!(welch_significant(&a, &b));
        let c = [10.1, 9.7, 10.4, 9.9, 10.0];
        assert!(!welch_significant(&a, &c));
        // No variance at all: equal means are the same, different ones differ.
        assert!(!welch_significant(&[3.0, 3.0], &[3.0, 3.0]));
        assert!(welch_significant(&[3.0, 3.0], &[4.0, 4.0]));
    }

    #[test]
    fn percent_is_positive_when_better_and_mmtests_values_from_zero() {
        // A rate up 10% is +10; a time up 10% is -10 (pndiff).
        assert!((pct_better(100.0, 110.0, true) - 10.0).abs() < 1e-9);
        assert!((pct_better(100.0, 110.0, false) + 10.0).abs() < 1e-9);
        assert!((pct_better(100.0, 90.0, false) - 10.0).abs() < 1e-9);
        // From zero: any change is 100 (pdiff) or -99 (pndiff), none is 0.
        assert_eq!(pct_better(0.0, 23.7, true), 100.0);
        assert_eq!(pct_better(0.0, 23.7, false), -99.0);
        assert_eq!(pct_better(0.0, 0.0, false), 0.0);
    }

    #[test]
    fn harmonic_mean_of_rates() {
        // Two runs at 100 and 300 ops/s: the same work takes as long as at 150 ops/s.
        assert!((mean(MeanKind::Hmean, &[100.0, 300.0]) - 150.0).abs() < 1e-9);
        assert!((mean(MeanKind::Amean, &[100.0, 300.0]) - 200.0).abs() < 1e-9);
    }
}

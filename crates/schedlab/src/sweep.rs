//! `schedlab sweep`: a workload over a grid of switch values, points in parallel, one row of
//! metrics per point (CSV and JSON). A failing point is reported in its row and the sweep goes
//! on. `--shard I/N` runs the points whose index is I modulo N, so a batch system (a Slurm
//! array, an indexed Kubernetes Job, GNU parallel) can spread a grid over machines; `merge`
//! joins the shards' JSON files.

use crate::experiment::Experiment;
use crate::report::compare::samples;
use crate::{InputError, Outputs};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One point of the grid and what it gave.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Point {
    /// The format version of this JSON (`schema/results.schema.json`).
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    /// Index in the whole grid (row-major over the parameters in the order given).
    pub index: usize,
    /// KEY → VALUE of this point.
    pub params: BTreeMap<String, String>,
    /// Metric → value; empty if the point failed.
    pub metrics: BTreeMap<String, f64>,
    /// "ok", or the error that stopped this point.
    pub status: String,
    /// Whether that error was the input's (exit code 2 when every point has one).
    #[serde(skip)]
    pub input_error: bool,
}

fn schema_version() -> u32 {
    crate::report::compare::SCHEMA_VERSION
}

/// `KEY=V1,V2,…`.
pub fn parse_param(s: &str) -> Result<(String, Vec<String>), InputError> {
    match s.split_once('=') {
        Some((k, vs)) if !k.trim().is_empty() && !vs.trim().is_empty() => Ok((
            k.trim().to_string(),
            vs.split(',').map(|v| v.trim().to_string()).collect(),
        )),
        _ => Err(InputError::new(
            "--param",
            s,
            "KEY=V1,V2,…",
            format!("`{s}`"),
        )),
    }
}

/// `I/N` with I < N.
pub fn parse_shard(s: &str) -> Result<(usize, usize), InputError> {
    let bad = || InputError::new("--shard", s, "I/N with 0 <= I < N", format!("`{s}`"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The most points a sweep's grid may have: 100,000 (a Slurm array's default
/// `MaxArraySize` is 1001 jobs; a hundred thousand runs is days of a cluster already).
pub const MAX_POINTS: u64 = 100_000;

/// Check the grid's size and every point's switches (each key and value, and their
/// combination, as the kernel would take the writes) before any point runs, so a mistake
/// stops the sweep at once with exit code 2.
pub fn validate(
    experiment: &Experiment,
    params: &[(String, Vec<String>)],
) -> Result<(), InputError> {
    let size = params
        .iter()
        .fold(1u64, |n, (_, vs)| n.saturating_mul(vs.len() as u64));
    if size > MAX_POINTS {
        return Err(InputError::new(
            "--param",
            "the grid",
            format!("at most {MAX_POINTS} points"),
            format!("{size} points"),
        ));
    }
    for point in grid(params) {
        let mut e = experiment.clone();
        for (k, v) in &point {
            e.set(&format!("{k}={v}"), "--param")?;
        }
    }
    Ok(())
}

/// The grid's points: every combination of the parameters' values.
pub fn grid(params: &[(String, Vec<String>)]) -> Vec<BTreeMap<String, String>> {
    params.iter().fold(vec![BTreeMap::new()], |acc, (k, vs)| {
        acc.iter()
            .flat_map(|p| {
                vs.iter().map(move |v| {
                    let mut q = p.clone();
                    q.insert(k.clone(), v.clone());
                    q
                })
            })
            .collect()
    })
}

/// What a sweep runs.
pub struct Sweep {
    /// What every point runs, with the switches it starts from.
    pub experiment: Experiment,
    pub seed: u64,
    pub params: Vec<(String, Vec<String>)>,
    /// (index, count): run the points whose grid index is `index` modulo `count`.
    pub shard: (usize, usize),
}

impl Sweep {
    /// How many points this shard runs.
    pub fn len(&self) -> usize {
        (0..grid(&self.params).len())
            .filter(|i| i % self.shard.1 == self.shard.0)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Run the shard's points, calling `tick` after each; results in grid order, whatever the
/// number of threads.
pub fn run(sweep: &Sweep, tick: &(dyn Fn() + Sync)) -> Vec<Point> {
    let Sweep {
        experiment,
        seed,
        params,
        shard,
    } = sweep;
    let points: Vec<(usize, BTreeMap<String, String>)> = grid(params)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % shard.1 == shard.0)
        .collect();
    points
        .into_par_iter()
        .map(|(index, params)| {
            let point = run_point(experiment, *seed, index, params);
            tick();
            point
        })
        .collect()
}

/// Point `index` of a sweep of `experiment`: its switches `params` on top, run with `seed`.
pub fn run_point(
    experiment: &Experiment,
    seed: u64,
    index: usize,
    params: BTreeMap<String, String>,
) -> Point {
    let mut point = experiment.clone();
    let result = params
        .iter()
        .try_for_each(|(k, v)| point.set(&format!("{k}={v}"), "--param"))
        .map_err(crate::Error::from)
        .and_then(|()| point.run(seed, true, &Outputs::default()));
    match result {
        Ok(r) => Point {
            schema_version: schema_version(),
            index,
            params,
            metrics: samples(&r).into_iter().map(|s| (s.name, s.value)).collect(),
            status: "ok".into(),
            input_error: false,
        },
        Err(e) => failed_point(index, params, &e),
    }
}

/// The row of a point that `e` stopped.
pub fn failed_point(index: usize, params: BTreeMap<String, String>, e: &crate::Error) -> Point {
    Point {
        schema_version: schema_version(),
        index,
        params,
        metrics: BTreeMap::new(),
        status: e.to_string(),
        input_error: matches!(e, crate::Error::Input(_)),
    }
}

/// Points as CSV: index, the parameters, status, then the metrics (columns in name order).
pub fn csv(points: &[Point]) -> String {
    let params: Vec<&String> = points
        .first()
        .map(|p| p.params.keys().collect())
        .unwrap_or_default();
    let mut metrics: Vec<&String> = points.iter().flat_map(|p| p.metrics.keys()).collect();
    metrics.sort();
    metrics.dedup();
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from("index");
    for k in params
        .iter()
        .chain(std::iter::once(&&"status".to_string()))
        .chain(metrics.iter())
    {
        out.push(',');
        out.push_str(&quote(k));
    }
    out.push('\n');
    for p in points {
        out.push_str(&p.index.to_string());
        for k in &params {
            out.push(',');
            out.push_str(&quote(&p.params[*k]));
        }
        out.push(',');
        out.push_str(&quote(&p.status));
        for m in &metrics {
            out.push(',');
            if let Some(v) = p.metrics.get(*m) {
                out.push_str(&v.to_string());
            }
        }
        out.push('\n');
    }
    out
}

/// Join shards: all points, in grid order, each once.
pub fn merge(shards: Vec<Vec<Point>>) -> Vec<Point> {
    let mut all: Vec<Point> = shards.into_iter().flatten().collect();
    all.sort_by_key(|p| p.index);
    all.dedup_by_key(|p| p.index);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_every_combination_in_order() {
        let g = grid(&[
            parse_param("a=1,2").unwrap(),
            parse_param("b=x,y,z").unwrap(),
        ]);
        assert_eq!(g.len(), 6);
        assert_eq!((g[0]["a"].as_str(), g[0]["b"].as_str()), ("1", "x"));
        assert_eq!((g[5]["a"].as_str(), g[5]["b"].as_str()), ("2", "z"));
    }

    #[test]
    fn bad_params_and_shards_are_input_errors() {
        assert!(parse_param("novalues").is_err());
        assert!(parse_param("=1,2").is_err());
        assert_eq!(parse_shard("1/3").unwrap(), (1, 3));
        assert!(parse_shard("3/3").is_err());
        assert!(parse_shard("x").is_err());
    }
}

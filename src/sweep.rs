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
    /// Index in the whole grid (row-major over the parameters in the order given).
    pub index: usize,
    /// KEY → VALUE of this point.
    pub params: BTreeMap<String, String>,
    /// Metric → value; empty if the point failed.
    pub metrics: BTreeMap<String, f64>,
    /// "ok", or the error that stopped this point.
    pub status: String,
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
            let mut point = experiment.clone();
            let result = params
                .iter()
                .try_for_each(|(k, v)| point.set(&format!("{k}={v}"), "--param"))
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    point
                        .run(*seed, true, &Outputs::default())
                        .map_err(|e| e.to_string())
                });
            tick();
            let (metrics, status) = match result {
                Ok(r) => (
                    samples(&r).into_iter().map(|s| (s.name, s.value)).collect(),
                    "ok".into(),
                ),
                Err(e) => (BTreeMap::new(), e),
            };
            Point {
                index,
                params,
                metrics,
                status,
            }
        })
        .collect()
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

//! `schedlab._schedlab`: the simulator's library API (`schedlab::api`) for Python. Requests
//! come in as strings and lists, answers go out as JSON text that the Python package
//! (`python/schedlab/__init__.py`) turns into dicts and DataFrames. The GIL is released
//! while anything is simulated, and no panic crosses into Python.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use schedlab::api::{self, CompareRequest, PointSpec, RunRequest, SideOptions, Source};
use schedlab::Error;
use std::collections::BTreeMap;
use std::path::PathBuf;

create_exception!(
    schedlab,
    InputError,
    PyValueError,
    "Bad input: a workload, platform, experiment or switch. Its `file`, `place`, `expected` \
     and `found` say what the command line's exit-2 message says."
);

/// A workload as the Python side describes it: `("arg", path, _)`, `("json", text, name)`
/// or `("default", _, _)`.
type SourceSpec = (String, String, String);

fn source(spec: &SourceSpec) -> PyResult<Source> {
    let (kind, text, name) = spec;
    match kind.as_str() {
        "arg" => Ok(Source::Arg(text.clone())),
        "json" => Ok(Source::Json {
            text: text.clone(),
            name: name.clone(),
        }),
        "default" => Ok(Source::Default),
        _ => Err(PyValueError::new_err(format!(
            "unknown workload kind `{kind}`"
        ))),
    }
}

/// The library's error as the Python exception a user catches.
fn to_py(e: Error) -> PyErr {
    match e {
        Error::Input(e) => Python::with_gil(|py| {
            let err = PyErr::new::<InputError, _>(e.to_string());
            let value = err.value(py);
            for (k, v) in [
                ("file", &e.file),
                ("place", &e.place),
                ("expected", &e.expected),
                ("found", &e.found),
            ] {
                if let Err(set) = value.setattr(k, v) {
                    return set;
                }
            }
            err
        }),
        Error::Io { path, source } => {
            PyOSError::new_err((source.raw_os_error().unwrap_or(0), source.to_string(), path))
        }
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Run `f` without the GIL; a panic becomes a RuntimeError, an error its exception.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    let outcome = py.allow_threads(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    match outcome {
        Ok(r) => r.map_err(to_py),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Err(PyRuntimeError::new_err(format!(
                "schedlab internal error (please report it): {what}"
            )))
        }
    }
}

fn side_options(
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    strict: bool,
) -> SideOptions {
    SideOptions {
        platform,
        duration,
        set,
        strict,
    }
}

fn json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).expect("results serialise")
}

/// Simulate one run: (results JSON, the run's plat_info YAML).
#[pyfunction]
#[pyo3(signature = (workload, platform, duration, set, set_at, governor, seed, reproducible,
    strict, trace, trace_events, trace_format, trace_counters, rtapp_logs, plot))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    workload: SourceSpec,
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    set_at: Vec<String>,
    governor: Option<String>,
    seed: Option<u64>,
    reproducible: bool,
    strict: bool,
    trace: Option<PathBuf>,
    trace_events: Option<String>,
    trace_format: Option<String>,
    trace_counters: bool,
    rtapp_logs: Option<PathBuf>,
    plot: Option<PathBuf>,
) -> PyResult<(String, String)> {
    let req = RunRequest {
        workload: source(&workload)?,
        side: side_options(platform, duration, set, strict),
        governor,
        set_at,
        seed,
        reproducible,
        trace,
        trace_events,
        trace_format,
        trace_counters,
        rtapp_logs,
        plot,
    };
    detached(py, || {
        let (exp, seed, outputs) = req.prepare(&|_| {})?;
        let results = exp.run(seed, req.reproducible, &outputs)?;
        Ok((json(&results), api::run_plat_info(&exp)?))
    })
}

/// Compare sides over seeds: the comparison JSON (`schedlab compare --json`).
#[pyfunction]
#[pyo3(signature = (sides, vs, platform, duration, set, runs, metrics, strict))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    sides: Vec<SourceSpec>,
    vs: Vec<String>,
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    runs: Option<u64>,
    metrics: Vec<String>,
    strict: bool,
) -> PyResult<String> {
    let req = CompareRequest {
        sides: sides.iter().map(source).collect::<PyResult<_>>()?,
        vs,
        side: side_options(platform, duration, set, strict),
        runs,
        metrics,
        stats: false,
    };
    detached(py, || {
        let (sides, seeds) = req.prepare(&|_| {})?;
        Ok(json(&req.run(&sides, &seeds, &|| {})?))
    })
}

#[allow(clippy::too_many_arguments)]
fn sweep_request(
    workload: SourceSpec,
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    params: Vec<String>,
    seed: Option<u64>,
    shard: Option<String>,
    strict: bool,
) -> PyResult<api::SweepRequest> {
    Ok(api::SweepRequest {
        workload: source(&workload)?,
        side: side_options(platform, duration, set, strict),
        params,
        seed,
        shard,
    })
}

/// Run a sweep's points in parallel: (points JSON, the CSV `schedlab sweep` writes).
#[pyfunction]
#[pyo3(signature = (workload, platform, duration, set, params, seed, shard, strict))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    workload: SourceSpec,
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    params: Vec<String>,
    seed: Option<u64>,
    shard: Option<String>,
    strict: bool,
) -> PyResult<(String, String)> {
    let req = sweep_request(
        workload, platform, duration, set, params, seed, shard, strict,
    )?;
    detached(py, || {
        let spec = req.prepare(&|_| {})?;
        let points = schedlab::sweep::run(&spec, &|| {});
        api::check_points(&points)?;
        Ok((json(&points), schedlab::sweep::csv(&points)))
    })
}

/// A point of a sweep as Python gets it: (index, params, seed).
type PointRow = (usize, BTreeMap<String, String>, u64);

/// A sweep's points, checked, each as (index, params, seed).
#[pyfunction]
#[pyo3(signature = (workload, platform, duration, set, params, seed, shard, strict))]
#[allow(clippy::too_many_arguments)]
fn sweep_points(
    py: Python<'_>,
    workload: SourceSpec,
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    params: Vec<String>,
    seed: Option<u64>,
    shard: Option<String>,
    strict: bool,
) -> PyResult<Vec<PointRow>> {
    let req = sweep_request(
        workload, platform, duration, set, params, seed, shard, strict,
    )?;
    detached(py, || {
        Ok(req
            .points()?
            .into_iter()
            .map(|p| (p.index, p.params, p.seed))
            .collect())
    })
}

/// Run one point of a sweep: its JSON row.
#[pyfunction]
#[pyo3(signature = (workload, platform, duration, set, strict, seed, index, params))]
#[allow(clippy::too_many_arguments)]
fn run_point(
    py: Python<'_>,
    workload: SourceSpec,
    platform: Option<String>,
    duration: Option<String>,
    set: Vec<String>,
    strict: bool,
    seed: u64,
    index: usize,
    params: BTreeMap<String, String>,
) -> PyResult<String> {
    let spec = PointSpec {
        workload: source(&workload)?,
        side: side_options(platform, duration, set, strict),
        seed,
        index,
        params,
    };
    detached(py, || Ok(json(&api::run_point(&spec))))
}

/// Join points (JSON rows, from anywhere): (points JSON, CSV), as `schedlab sweep --merge`.
#[pyfunction]
fn merge_points(py: Python<'_>, points: String) -> PyResult<(String, String)> {
    detached(py, || {
        let points = schedlab::sweep::merge(vec![api::parse_points(&points, "points")?]);
        api::check_points(&points)?;
        Ok((json(&points), schedlab::sweep::csv(&points)))
    })
}

/// The built-in platforms: (name, CPUs, description).
#[pyfunction]
fn platforms() -> Vec<(&'static str, usize, String)> {
    api::platforms()
}

/// A platform (preset or file): (its JSON, `schedlab platforms NAME`'s text, plat_info YAML).
#[pyfunction]
fn platform(py: Python<'_>, name: String) -> PyResult<(String, String, String)> {
    detached(py, || {
        let p = schedlab::platform::Platform::resolve(&name)?;
        Ok((json(&p), p.describe(), api::platform_plat_info(&p)))
    })
}

/// A generated rt-app workload (`schedlab gen NAME ARGS…`) as JSON text.
#[pyfunction]
fn gen(py: Python<'_>, name: String, args: Vec<String>) -> PyResult<String> {
    detached(py, || {
        let w = schedlab::gen::generate(&name, &args, "schedlab.gen", &name)?;
        Ok(json(&w))
    })
}

/// The `set` switches: (key, default, type, range, meaning).
#[pyfunction]
fn switches() -> Vec<(String, String, String, String, String)> {
    schedlab::kernel::variant::switches()
        .iter()
        .map(|s| {
            (
                s.key.to_string(),
                s.default.to_string(),
                s.kind.to_string(),
                s.range.to_string(),
                s.meaning.to_string(),
            )
        })
        .collect()
}

#[pymodule]
fn _schedlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    for f in [
        wrap_pyfunction!(run, m)?,
        wrap_pyfunction!(compare, m)?,
        wrap_pyfunction!(sweep, m)?,
        wrap_pyfunction!(sweep_points, m)?,
        wrap_pyfunction!(run_point, m)?,
        wrap_pyfunction!(merge_points, m)?,
        wrap_pyfunction!(platforms, m)?,
        wrap_pyfunction!(platform, m)?,
        wrap_pyfunction!(gen, m)?,
        wrap_pyfunction!(switches, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}

//! `schedlab host validate`: real workloads on this machine and the same workloads in
//! schedlab on its platform, side by side (`schedlab::report::validation` is the table).
//!
//! Everything real runs first, one thing at a time, so that no simulation competes with a
//! measurement for the CPUs; the simulations then run side by side. A row that cannot run (a
//! tool missing, rt-app refusing a file, no tracefs) says why and is not counted. Nothing
//! here fails because the numbers differ: it is a report.
//!
//! - [`rtapp`]: the rt-app examples on rt-app 1.0, recorded, per thread;
//! - [`bench`]: hackbench, `perf bench sched pipe`, cyclictest;
//! - [`replay`]: recorded traces replayed.

mod bench;
mod replay;
mod rtapp;

use crate::calibrate::PIPE_FIT_MARK;
use crate::kernel;
use crate::platform;
use crate::sysfs::Root;
use schedlab::error::InputError;
use schedlab::report::validation::{Row, Spread, Validation};
use schedlab::trace::replay::timeline::CpuInfo;
use schedlab::Error;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const FAMILY_RTAPP: &str = "rt-app";
const FAMILY_HACKBENCH: &str = "hackbench";
const FAMILY_PIPE: &str = "perf pipe";
const FAMILY_CYCLICTEST: &str = "cyclictest";
const FAMILY_REPLAY: &str = "replay";

/// The workload families, in the table's order.
pub const FAMILIES: [&str; 5] = [
    FAMILY_RTAPP,
    FAMILY_HACKBENCH,
    FAMILY_PIPE,
    FAMILY_CYCLICTEST,
    FAMILY_REPLAY,
];

/// What `schedlab host validate` was asked.
pub struct Request {
    /// Smaller sizes and shorter runs (rt-app examples 1 s, cyclictest 1 s).
    pub quick: bool,
    /// Runs of each measurement and seeds of each simulation.
    pub runs: usize,
    /// The platform file to simulate (None: `host platform`'s reading of this machine).
    pub platform: Option<PathBuf>,
    /// The rt-app examples.
    pub examples: PathBuf,
}

/// What the families share.
struct Opts<'a> {
    quick: bool,
    runs: usize,
    /// The platform file simulated.
    platform: PathBuf,
    /// Its costs were fitted on `perf bench sched pipe -T` on one CPU (`host calibrate`).
    fitted: bool,
    /// The CPU `host calibrate` pins the pipe benchmark to (the platform's last).
    pipe_cpu: usize,
    examples: PathBuf,
    /// Scratch space: logs, traces, converted files.
    work: PathBuf,
    log: &'a (dyn Fn(&str) + Sync),
}

/// A family's output: rows already made (a row that could not run), a simulation to run
/// after every measurement, or a note under the table.
enum Item {
    Rows(Vec<Row>),
    Sim(Box<dyn FnOnce() -> Vec<Row> + Send>),
    Note(String),
}

impl Item {
    fn rows(r: Row) -> Item {
        Item::Rows(vec![r])
    }

    fn sim(f: impl FnOnce() -> Vec<Row> + Send + 'static) -> Item {
        Item::Sim(Box::new(f))
    }
}

/// A row of a measurement and its simulation.
fn row(family: &str, name: &str, real: &[f64], sim: &[f64]) -> Row {
    Row {
        family: family.into(),
        name: name.into(),
        real: Spread::of(real),
        sim: Spread::of(sim),
        fit: false,
        not_run: None,
        noise: Default::default(),
    }
}

/// The scratch directory, removed when dropped.
struct Work(PathBuf);

impl Drop for Work {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Measure, simulate and compare; `log` hears what is being measured.
pub fn validate(req: &Request, log: &(dyn Fn(&str) + Sync)) -> Result<Validation, Error> {
    if req.runs == 0 {
        return Err(InputError::new("host validate", "--runs", "at least 1", "0").into());
    }
    let work = Work(std::env::temp_dir().join(format!("schedlab-validate-{}", std::process::id())));
    std::fs::create_dir_all(&work.0).map_err(|e| Error::Io {
        path: work.0.display().to_string(),
        source: e,
    })?;
    let (path, text) = match &req.platform {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                InputError::new(
                    p.display().to_string(),
                    "file",
                    "a readable platform file",
                    e.to_string(),
                )
            })?;
            schedlab::platform::parse_platform(&text, &p.display().to_string())?;
            (std::path::absolute(p).unwrap_or_else(|_| p.clone()), text)
        }
        None => {
            let h = platform::read(Path::new("/"))?;
            let p = work.0.join("host.platform.toml");
            std::fs::write(&p, &h.text).map_err(|e| Error::Io {
                path: p.display().to_string(),
                source: e,
            })?;
            (p, h.text)
        }
    };
    let p = schedlab::platform::load_file(&path)?;
    let info = CpuInfo::from_platform(&p);
    let o = Opts {
        quick: req.quick,
        runs: req.runs,
        fitted: text.lines().any(|l| l == PIPE_FIT_MARK),
        pipe_cpu: p.cpus.len().saturating_sub(1),
        platform: path.clone(),
        examples: req.examples.clone(),
        work: work.0.clone(),
        log,
    };
    // The machine's side, one at a time.
    let mut traces = Vec::new();
    let mut items = rtapp::examples(&o, &info, &mut traces);
    items.extend(bench::hackbench(&o));
    items.extend(bench::perf_pipe(&o));
    items.extend(bench::cyclictest(&o));
    items.extend(replay::record_benchmarks(&o, &mut traces));
    items.extend(replay::replays(&o, traces));
    // schedlab's side, side by side.
    log("simulating");
    let (rows, mut notes) = run_all(items);
    // A scheduler change of this machine's kernel that no upstream kernel has: the rows
    // compare against it where it acts.
    for sysctl in kernel::foreign_sysctls(&mut Root::new(Path::new("/"))) {
        notes.push(format!(
            "this machine's kernel has {sysctl}, a scheduler sysctl no upstream kernel has: \
             where that change acts (placement, migrations), the rows compare with it, not \
             with the kernel schedlab models"
        ));
    }
    let shown = if req.platform.is_some() {
        path.display().to_string()
    } else {
        format!(
            "this machine's platform (`schedlab host platform`, {})",
            p.name
        )
    };
    Ok(Validation {
        platform: shown,
        runs: req.runs,
        rows: order(rows),
        notes,
    })
}

/// The rows by family, in [`FAMILIES`]' order, each family's in the order made.
fn order(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|r| FAMILIES.iter().position(|f| *f == r.family));
    rows
}

/// Run the simulations on every CPU; the rows and notes in the items' order.
fn run_all(items: Vec<Item>) -> (Vec<Row>, Vec<String>) {
    let n = items.len();
    let slots: Vec<Mutex<Option<Item>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let done: Vec<Mutex<(Vec<Row>, Option<String>)>> =
        (0..n).map(|_| Mutex::new((Vec::new(), None))).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = crate::measure::online_cpus().min(n).max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let item = slots[i].lock().expect("slot").take();
                let out = match item {
                    Some(Item::Rows(r)) => (r, None),
                    Some(Item::Sim(f)) => (f(), None),
                    Some(Item::Note(t)) => (Vec::new(), Some(t)),
                    None => (Vec::new(), None),
                };
                *done[i].lock().expect("slot") = out;
            });
        }
    });
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for d in done {
        let (r, note) = d.into_inner().expect("slot");
        rows.extend(r);
        notes.extend(note);
    }
    (rows, notes)
}

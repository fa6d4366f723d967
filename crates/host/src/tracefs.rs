//! tracefs for `schedlab host record`: found (or mounted), and a trace instance of our own
//! (`instances/schedlab-PID`) with its own ring buffer, events, clock and switches. The
//! machine's own tracing (the top-level buffer and its settings, other instances) is never
//! written: removing the instance when done, on every path out (`Drop`), restores tracefs as
//! it was found, and a tracefs we mounted is unmounted. `trace_marker` writes reach the
//! instance through its `copy_trace_marker` option (v6.17+); on older kernels they stay in the
//! top-level buffer, and the trace has none (said on standard error).

use crate::sys;
use schedlab::error::InputError;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted, by the kernel's convention and its older debugfs place.
const PLACES: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The events recorded by default: the scheduler's, idle, interrupts and timers; `print`
/// stands for `trace_marker` writes (rt-app's lines).
pub const DEFAULT_EVENTS: &[&str] = &[
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exit",
    "cpu_idle",
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_entry",
    "softirq_exit",
    "hrtimer_expire_entry",
    "print",
];

/// A tracefs, and whether we mounted it.
pub struct Tracefs {
    pub dir: PathBuf,
    mounted: bool,
}

/// The one-line error of a tracefs that cannot be used.
fn unusable(dir: &Path, found: impl Into<String>) -> InputError {
    InputError::new(
        "tracefs",
        dir.display().to_string(),
        "a tracefs this user can write (mounted, and run as root)",
        found,
    )
}

impl Tracefs {
    /// The tracefs at `dir` (`--tracefs`), else the machine's: at one of its usual places,
    /// or, as root, mounted at the first.
    pub fn open(dir: Option<&Path>) -> Result<Tracefs, InputError> {
        if let Some(dir) = dir {
            return match sys::is_tracefs(dir) {
                Ok(true) => Ok(Tracefs {
                    dir: dir.to_path_buf(),
                    mounted: false,
                }),
                Ok(false) => Err(unusable(dir, "a directory that is not a tracefs")),
                Err(e) => Err(unusable(dir, e)),
            };
        }
        for place in PLACES {
            if sys::is_tracefs(Path::new(place)) == Ok(true) {
                return Ok(Tracefs {
                    dir: PathBuf::from(place),
                    mounted: false,
                });
            }
        }
        let place = Path::new(PLACES[0]);
        if !sys::is_root() {
            return Err(unusable(
                place,
                "no tracefs mounted, and mounting one needs root",
            ));
        }
        sys::mount("tracefs", place).map_err(|e| {
            unusable(
                place,
                format!("no tracefs mounted, and mounting one failed ({e})"),
            )
        })?;
        Ok(Tracefs {
            dir: place.to_path_buf(),
            mounted: true,
        })
    }

    /// Whether we mounted it (and unmount it when dropped).
    pub fn mounted(&self) -> bool {
        self.mounted
    }

    /// The events this kernel has, by name: `name` → `subsystem/name`.
    pub fn event_path(&self, name: &str) -> Option<String> {
        if let Some((sys, ev)) = name.split_once(':').or_else(|| name.split_once('/')) {
            let p = format!("{sys}/{ev}");
            return self
                .dir
                .join("events")
                .join(&p)
                .join("enable")
                .exists()
                .then_some(p);
        }
        let mut subsystems: Vec<_> = std::fs::read_dir(self.dir.join("events"))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        subsystems.sort();
        subsystems
            .into_iter()
            .map(|s| format!("{s}/{name}"))
            .find(|p| self.dir.join("events").join(p).join("enable").exists())
    }

    /// The top-level buffer's clock (`[local] global …` → `local`).
    pub fn clock(&self) -> Option<String> {
        let t = std::fs::read_to_string(self.dir.join("trace_clock")).ok()?;
        let start = t.find('[')? + 1;
        let end = start + t[start..].find(']')?;
        Some(t[start..end].to_string())
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if self.mounted {
            if let Err(e) = sys::unmount(&self.dir) {
                eprintln!(
                    "schedlab: could not unmount the tracefs mounted at {} ({e}): umount it",
                    self.dir.display()
                );
            }
        }
    }
}

/// A trace instance of our own; removed when dropped.
pub struct Instance {
    pub dir: PathBuf,
    pub name: String,
}

/// One CPU's losses (`per_cpu/cpuN/stats`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    /// Overwritten (`overrun`: a full buffer in overwrite mode).
    pub overrun: u64,
    /// Not recorded (`dropped events`: a full buffer that does not overwrite).
    pub dropped: u64,
}

impl Instance {
    /// `instances/NAME` created in `tfs`.
    pub fn create(tfs: &Tracefs, name: &str) -> Result<Instance, InputError> {
        let dir = tfs.dir.join("instances").join(name);
        std::fs::create_dir(&dir)
            .map_err(|e| unusable(&tfs.dir, format!("mkdir instances/{name}: {e}")))?;
        Ok(Instance {
            dir,
            name: name.to_string(),
        })
    }

    /// Write `value` to the instance's `file`.
    pub fn write(&self, file: &str, value: &str) -> Result<(), InputError> {
        std::fs::write(self.dir.join(file), value).map_err(|e| {
            InputError::new(
                "tracefs",
                self.dir.join(file).display().to_string(),
                format!("a file that takes `{value}`"),
                e.to_string(),
            )
        })
    }

    pub fn has(&self, file: &str) -> bool {
        self.dir.join(file).exists()
    }

    /// Each CPU's losses.
    pub fn lost(&self) -> Vec<(usize, Lost)> {
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.dir.join("per_cpu")) else {
            return out;
        };
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(cpu) = name.strip_prefix("cpu").and_then(|n| n.parse().ok()) else {
                continue;
            };
            let text = std::fs::read_to_string(e.path().join("stats")).unwrap_or_default();
            let value = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0)
            };
            out.push((
                cpu,
                Lost {
                    overrun: value("overrun:"),
                    dropped: value("dropped events:"),
                },
            ));
        }
        out.sort_by_key(|(c, _)| *c);
        out
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        // A reader that has just closed a file of it may keep it busy for a moment.
        let mut last = None;
        for _ in 0..20 {
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => return,
                Err(e) => last = Some(e),
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if let Some(e) = last {
            eprintln!(
                "schedlab: could not remove the trace instance {} ({e}): rmdir it",
                self.dir.display()
            );
        }
    }
}

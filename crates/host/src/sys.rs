//! The few system calls the host commands make beyond std's, through rustix (safe
//! wrappers; no `unsafe` here): mounting debugfs and tracefs, telling a tracefs from another
//! directory, the user id, and forwarding a signal to the traced command. Elsewhere than
//! Linux each says it cannot.

use std::path::Path;

/// Whether the program runs as root.
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[cfg(target_os = "linux")]
pub fn mount(fs: &str, dir: &Path) -> Result<(), String> {
    rustix::mount::mount(fs, dir, fs, rustix::mount::MountFlags::empty(), None)
        .map_err(|e| e.to_string())
}

#[cfg(target_os = "linux")]
pub fn unmount(dir: &Path) -> Result<(), String> {
    rustix::mount::unmount(dir, rustix::mount::UnmountFlags::empty()).map_err(|e| e.to_string())
}

/// `TRACEFS_MAGIC` (include/uapi/linux/magic.h).
#[cfg(target_os = "linux")]
const TRACEFS_MAGIC: i64 = 0x7472_6163;

/// Whether `dir` is the root of a tracefs: `Err` when it cannot be looked at.
#[cfg(target_os = "linux")]
pub fn is_tracefs(dir: &Path) -> Result<bool, String> {
    let s = rustix::fs::statfs(dir).map_err(|e| e.to_string())?;
    #[allow(clippy::unnecessary_cast)]
    Ok(s.f_type as i64 == TRACEFS_MAGIC && dir.join("instances").is_dir())
}

#[cfg(not(target_os = "linux"))]
pub fn mount(_: &str, _: &Path) -> Result<(), String> {
    Err("not Linux".into())
}

#[cfg(not(target_os = "linux"))]
pub fn unmount(_: &Path) -> Result<(), String> {
    Err("not Linux".into())
}

#[cfg(not(target_os = "linux"))]
pub fn is_tracefs(_: &Path) -> Result<bool, String> {
    Err("tracefs is Linux's".into())
}

/// Send signal `sig` (a number signal-hook gave) to process `pid`.
pub fn forward(pid: u32, sig: i32) {
    let (Some(pid), Some(sig)) = (
        i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw),
        rustix::process::Signal::from_named_raw(sig),
    ) else {
        return;
    };
    let _ = rustix::process::kill_process(pid, sig);
}

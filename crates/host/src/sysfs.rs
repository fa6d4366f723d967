//! Reading a machine's sysfs and procfs files under a root (`/`, or a snapshot's directory
//! for tests): each file's text, or a note of why it could not be read. Notes name the
//! file by its path on the machine (`/sys/…`), whatever the root.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The files of one machine, and the notes of what could not be read.
pub struct Root {
    base: PathBuf,
    /// Where debugfs is read when it is not at `sys/kernel/debug` under the base (a private
    /// mount of the live machine's, `platform.rs`).
    debugfs: Option<PathBuf>,
    pub notes: Vec<String>,
}

impl Root {
    pub fn new(base: &Path) -> Root {
        Root {
            base: base.to_path_buf(),
            debugfs: None,
            notes: Vec::new(),
        }
    }

    /// Read debugfs (`/sys/kernel/debug/…`) from `dir` instead.
    pub fn debugfs_at(&mut self, dir: &Path) {
        self.debugfs = Some(dir.to_path_buf());
    }

    /// Whether this is the machine the program runs on.
    pub fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    /// Where `/path` of the machine is here.
    pub fn path(&self, path: &str) -> PathBuf {
        let rel = path.trim_start_matches('/');
        if let (Some(dir), Some(rest)) = (&self.debugfs, rel.strip_prefix("sys/kernel/debug")) {
            return dir.join(rest.trim_start_matches('/'));
        }
        self.base.join(rel)
    }

    pub fn exists(&self, path: &str) -> bool {
        self.path(path).exists()
    }

    /// `/path`'s bytes; a missing file is `None` without a note when `optional`, anything
    /// else that fails is `None` with a note.
    fn bytes(&mut self, path: &str, optional: bool) -> Option<Vec<u8>> {
        match std::fs::read(self.path(path)) {
            Ok(b) => Some(b),
            Err(e) if optional && e.kind() == ErrorKind::NotFound => None,
            Err(e) => {
                self.note(format!("{path}: not readable ({e})"));
                None
            }
        }
    }

    /// `/path`'s text, trimmed; `None` and a note when it cannot be read.
    pub fn read(&mut self, path: &str) -> Option<String> {
        self.bytes(path, false).map(text)
    }

    /// As [`read`](Self::read), without a note when the file does not exist.
    pub fn read_optional(&mut self, path: &str) -> Option<String> {
        self.bytes(path, true).map(text)
    }

    /// `/path`'s raw bytes (a gzip file), noted when unreadable, silent when missing.
    pub fn read_bytes_optional(&mut self, path: &str) -> Option<Vec<u8>> {
        self.bytes(path, true)
    }

    /// `/path` parsed as `T` (an integer), with a note when it is not one.
    pub fn parse<T: std::str::FromStr>(&mut self, path: &str, optional: bool) -> Option<T> {
        let t = if optional {
            self.read_optional(path)?
        } else {
            self.read(path)?
        };
        match t.parse() {
            Ok(v) => Some(v),
            Err(_) => {
                self.note(format!("{path}: `{}` is not a number", one_line(&t)));
                None
            }
        }
    }

    /// `/path` as a CPU list (`0-3,8`), with a note when it is not one.
    pub fn cpulist(&mut self, path: &str, optional: bool) -> Option<Vec<usize>> {
        let t = if optional {
            self.read_optional(path)?
        } else {
            self.read(path)?
        };
        match parse_cpulist(&t) {
            Some(l) => Some(l),
            None => {
                self.note(format!("{path}: `{}` is not a CPU list", one_line(&t)));
                None
            }
        }
    }

    /// The names in directory `/path` that start with `prefix` and end in a number, by
    /// that number (`cpu0`, `cpu1`, … `cpu10`); none when it cannot be listed.
    pub fn numbered(&mut self, path: &str, prefix: &str) -> Vec<(usize, String)> {
        let Ok(entries) = std::fs::read_dir(self.path(path)) else {
            return Vec::new();
        };
        let mut out: Vec<(usize, String)> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let n = name.strip_prefix(prefix)?.parse().ok()?;
                Some((n, name))
            })
            .collect();
        out.sort();
        out
    }

    /// The file names in directory `/path`, sorted; none when it cannot be listed.
    pub fn list(&mut self, path: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.path(path)) else {
            return Vec::new();
        };
        let mut out: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        out.sort();
        out
    }

    pub fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// `s` on one line, short enough for a comment.
pub fn one_line(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(60)
        .collect();
    s.trim().to_string()
}

/// The kernel's cpulist format (`0-3,8,10-11`; empty: none), ascending, each CPU once.
pub fn parse_cpulist(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let a: usize = part.trim().parse().ok()?;
                (a, a)
            }
        };
        if b < a || b >= 1 << 16 {
            return None;
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// CPU ids in the kernel's cpulist style: `0,3-5`.
pub fn cpulist(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists_read_and_write() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist(""), Some(vec![]));
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("a"), None);
        assert_eq!(cpulist(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }

    #[test]
    fn a_file_that_cannot_be_read_is_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys")).unwrap();
        std::fs::write(dir.path().join("sys/n"), "x7\n").unwrap();
        let mut r = Root::new(dir.path());
        assert_eq!(r.read("/sys/n").as_deref(), Some("x7"));
        assert_eq!(r.parse::<u32>("/sys/n", false), None);
        assert_eq!(r.read_optional("/sys/missing"), None);
        assert_eq!(r.read("/sys/missing"), None);
        assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
        assert!(
            r.notes[1].starts_with("/sys/missing: not readable"),
            "{:?}",
            r.notes
        );
    }
}

//! Output files written so that a failed run leaves nothing half-written: a file is written
//! under a temporary name beside it and renamed over it once complete; a directory's files
//! (rt-app logs, plots) go into a temporary directory inside it and are moved in once all are
//! complete. Whatever was not committed is removed when the guard is dropped, and so are the
//! directories created for it (`--plot DIR` of a run that fails leaves no `DIR`). A path that
//! already exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in
//! place: there is nothing to rename over and nothing to leave behind.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells temporary names apart within one process (runs in parallel write side by side).
static NEXT: AtomicU64 = AtomicU64::new(0);

fn temp_name(final_name: &str) -> String {
    format!(
        ".{final_name}.schedlab-{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// An output being written; `commit` puts it in place, dropping it uncommitted removes it.
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    /// Where it is written until committed; None: written in place.
    temp: Option<PathBuf>,
    is_dir: bool,
    /// The directories created to hold it, deepest first: removed (when empty) if it is
    /// not committed.
    created: Vec<PathBuf>,
}

impl Staged {
    /// A file to write at `path`, opened for writing under its temporary name.
    pub fn file(path: &Path) -> io::Result<(Staged, File)> {
        let in_place = path.exists() && !path.is_file();
        if in_place {
            let f = File::create(path)?;
            return Ok((Staged::untracked(path, false), f));
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| io::Error::other("not a file name"))?;
        let temp = path.with_file_name(temp_name(&name));
        let f = File::create(&temp)?;
        Ok((
            Staged {
                target: path.to_path_buf(),
                temp: Some(temp),
                is_dir: false,
                created: Vec::new(),
            },
            f,
        ))
    }

    /// A directory to write files into: created if needed, its files staged in a temporary
    /// directory inside it (`path()`).
    pub fn dir(path: &Path) -> io::Result<Staged> {
        if path.exists() && !path.is_dir() {
            return Err(io::Error::other("exists and is not a directory"));
        }
        let created: Vec<PathBuf> = path
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .take_while(|a| std::fs::symlink_metadata(a).is_err())
            .map(Path::to_path_buf)
            .collect();
        let mut staged = Staged {
            target: path.to_path_buf(),
            temp: None,
            is_dir: true,
            created,
        };
        // From here on a failure removes what was created.
        std::fs::create_dir_all(path)?;
        let temp = path.join(temp_name("out"));
        std::fs::create_dir(&temp)?;
        staged.temp = Some(temp);
        Ok(staged)
    }

    fn untracked(path: &Path, is_dir: bool) -> Staged {
        Staged {
            target: path.to_path_buf(),
            temp: None,
            is_dir,
            created: Vec::new(),
        }
    }

    /// Where to write now.
    pub fn path(&self) -> &Path {
        self.temp.as_deref().unwrap_or(&self.target)
    }

    /// The final path (for messages).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Put the output in place.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(temp) = self.temp.clone() else {
            return Ok(());
        };
        if self.is_dir {
            let mut names: Vec<PathBuf> = std::fs::read_dir(&temp)?
                .map(|e| e.map(|e| e.path()))
                .collect::<io::Result<_>>()?;
            names.sort();
            for from in names {
                let name = from.file_name().expect("a directory entry has a name");
                std::fs::rename(&from, self.target.join(name))?;
            }
            std::fs::remove_dir(&temp)?;
            self.created.clear();
        } else {
            // Renaming over a regular file makes ext4 (`auto_da_alloc`, on by default) start
            // writing the new file back inside rename(2): 0.2-0.3 s for a 600 MB trace, a
            // third of the run that made it. Removing the old file first spares that; the
            // path is then missing for the moment between the two calls.
            let replaces = std::fs::symlink_metadata(&self.target).is_ok_and(|m| m.is_file());
            if replaces {
                std::fs::remove_file(&self.target)?;
            }
            if let Err(e) = std::fs::rename(&temp, &self.target) {
                if replaces {
                    // The old file is gone: keep the new one where it is.
                    self.temp = None;
                    let at = temp.display();
                    return Err(io::Error::new(
                        e.kind(),
                        format!("{e} (the output is at {at})"),
                    ));
                }
                return Err(e);
            }
        }
        self.temp = None;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            // Best effort: what is removed here was never visible under its final name.
            let _ = if self.is_dir {
                std::fs::remove_dir_all(&temp)
            } else {
                std::fs::remove_file(&temp)
            };
        }
        // The directories made for an output that did not come: only if still empty (an
        // uncommitted output leaves them so, unless something else wrote there meanwhile).
        for dir in self.created.drain(..) {
            if std::fs::remove_dir(&dir).is_err() {
                break;
            }
        }
    }
}

/// Write `bytes` to `path` all at once (temporary name, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (staged, mut f) = Staged::file(path)?;
    f.write_all(bytes)?;
    f.flush()?;
    drop(f);
    staged.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_uncommitted_file_leaves_nothing_and_a_committed_one_is_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        {
            let (s, mut f) = Staged::file(&path).unwrap();
            f.write_all(b"half").unwrap();
            drop(s);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomic(&path, b"whole").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A file written again replaces the old one whole.
        write_atomic(&path, b"again").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"again");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_staged_directory_moves_its_files_in_on_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("logs");
        let s = Staged::dir(&out).unwrap();
        std::fs::write(s.path().join("a.log"), "x").unwrap();
        drop(s);
        assert!(!out.exists(), "the directory made for it is gone too");
        let s = Staged::dir(&out).unwrap();
        std::fs::write(s.path().join("a.log"), "x").unwrap();
        s.commit().unwrap();
        let names: Vec<_> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.log")]);
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(Staged::dir(&file).is_err());
    }

    #[test]
    fn directories_made_for_an_uncommitted_output_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b/plots");
        let s = Staged::dir(&out).unwrap();
        std::fs::write(s.path().join("x.svg"), "x").unwrap();
        drop(s);
        assert!(
            !dir.path().join("a").exists(),
            "every directory it made is gone"
        );
        // A directory that was there stays; a committed output keeps what it made.
        std::fs::create_dir(dir.path().join("a")).unwrap();
        drop(Staged::dir(&out).unwrap());
        assert!(dir.path().join("a").is_dir() && !dir.path().join("a/b").exists());
        let s = Staged::dir(&out).unwrap();
        s.commit().unwrap();
        assert!(out.is_dir());
    }
}

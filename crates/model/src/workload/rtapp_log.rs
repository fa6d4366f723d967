//! rt-app's per-thread logs (`<logdir>/<log_basename>-<thread>.log`): the header, then one
//! row per phase iteration as rt-app's `log_timing` writes it. Files are opened at a
//! thread's first row and closed when it exits, so memory and open files follow the live
//! threads, not the simulated time.

use crate::workload::{log_header, LoopRecord};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct RtappLogs {
    dir: PathBuf,
    basename: String,
    /// Per task id: the open log, if the thread has written a row and not exited.
    files: Vec<Option<BufWriter<File>>>,
    line: String,
    error: Option<io::Error>,
}

impl RtappLogs {
    pub fn new(dir: &Path, basename: &str) -> io::Result<RtappLogs> {
        std::fs::create_dir_all(dir)?;
        Ok(RtappLogs {
            dir: dir.to_path_buf(),
            basename: basename.to_string(),
            files: Vec::new(),
            line: String::new(),
            error: None,
        })
    }

    /// Append `rows` of thread `task` (named `name`).
    pub fn write(&mut self, task: usize, name: &str, rows: &[LoopRecord]) {
        if rows.is_empty() || self.error.is_some() {
            return;
        }
        if let Err(e) = self.try_write(task, name, rows) {
            self.error = Some(e);
        }
    }

    fn try_write(&mut self, task: usize, name: &str, rows: &[LoopRecord]) -> io::Result<()> {
        if self.files.len() <= task {
            self.files.resize_with(task + 1, || None);
        }
        if self.files[task].is_none() {
            let path = self.dir.join(format!("{}-{name}.log", self.basename));
            let mut f = BufWriter::new(File::create(path)?);
            f.write_all(log_header().as_bytes())?;
            self.files[task] = Some(f);
        }
        let f = self.files[task].as_mut().expect("opened above");
        for r in rows {
            self.line.clear();
            // Writing into a String cannot fail.
            let _ = r.fmt_line(&mut self.line);
            f.write_all(self.line.as_bytes())?;
        }
        Ok(())
    }

    /// The thread exited: flush and close its log.
    pub fn close(&mut self, task: usize) {
        if let Some(Some(mut f)) = self.files.get_mut(task).map(Option::take) {
            if let Err(e) = f.flush() {
                self.error.get_or_insert(e);
            }
        }
    }

    /// Flush every open log; the first error met during the run, if any.
    pub fn finish(&mut self) -> io::Result<()> {
        for t in 0..self.files.len() {
            self.close(t);
        }
        self.error.take().map_or(Ok(()), Err)
    }
}

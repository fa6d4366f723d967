//! Where a text trace's bytes go: a `Sink` takes a filled buffer and gives it back empty.
//! Any writer is a sink (it writes the buffer and clears it). A `Spool` hands the buffer to
//! a writer thread and gives back one the thread has emptied, so the simulation formats the
//! next megabyte while the last one is copied into the page cache: a long trace's
//! `write(2)` calls, a third of its cost, run beside the simulation on a second core
//! instead of after it. The bytes and their order are the same; so is the first write
//! error, which the next hand-over or `finish` reports.

use std::io::{self, Write};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Filled buffers in flight to the writer thread before a hand-over waits for it.
const DEPTH: usize = 2;

pub trait Sink {
    /// Take `buf`'s bytes, leaving `buf` empty (its capacity may change).
    fn take(&mut self, buf: &mut Vec<u8>) -> io::Result<()>;
    /// Write out everything taken.
    fn finish(&mut self) -> io::Result<()>;
}

impl<W: Write> Sink for W {
    fn take(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        let r = self.write_all(buf);
        buf.clear();
        r
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// A writer on its own thread.
pub struct Spool {
    /// Filled buffers to the thread; `None` once finished.
    full: Option<SyncSender<Vec<u8>>>,
    /// Emptied buffers back from the thread, for reuse.
    empty: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Spool {
    /// Start the thread that writes to `out`.
    pub fn new<W: Write + Send + 'static>(mut out: W) -> io::Result<Spool> {
        let (full, to_write) = sync_channel::<Vec<u8>>(DEPTH);
        let (give_back, empty) = channel();
        let thread = std::thread::Builder::new()
            .name("trace-writer".into())
            .spawn(move || {
                for mut buf in to_write {
                    out.write_all(&buf)?;
                    buf.clear();
                    // The spool may be gone already (it stops taking buffers back when it
                    // is finishing).
                    let _ = give_back.send(buf);
                }
                out.flush()
            })?;
        Ok(Spool {
            full: Some(full),
            empty,
            thread: Some(thread),
        })
    }

    /// Wait for the thread: its first error, if any.
    fn join(&mut self) -> io::Result<()> {
        self.full = None;
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the trace writer thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Sink for Spool {
    fn take(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        let Some(full) = &self.full else {
            return Err(io::Error::other("the trace was already finished"));
        };
        // Buffers circulate: a new one is made only while none has come back, so at most
        // DEPTH + 2 exist (one filling, DEPTH queued, one being written).
        let spare = self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(buf.capacity()));
        let filled = std::mem::replace(buf, spare);
        if full.send(filled).is_err() {
            // The thread stopped at a write error: report it.
            return self
                .join()
                .and(Err(io::Error::other("the trace writer thread stopped")));
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.join()
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        // An unfinished spool (a failed run) still waits for its thread, which has nothing
        // left to write once the sender is gone.
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test can read after the thread has them.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_byte_arrives_in_order() {
        let out = Shared::default();
        let mut spool = Spool::new(out.clone()).unwrap();
        let mut want = Vec::new();
        let mut buf = Vec::with_capacity(64);
        for i in 0..1000u32 {
            buf.extend_from_slice(&i.to_le_bytes());
            want.extend_from_slice(&i.to_le_bytes());
            if buf.len() >= 64 {
                spool.take(&mut buf).unwrap();
                assert!(buf.is_empty());
            }
        }
        spool.take(&mut buf).unwrap();
        spool.finish().unwrap();
        assert_eq!(*out.0.lock().unwrap(), want);
    }

    /// A writer that fails after some bytes, as a full disk does.
    struct Full(usize);

    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.0 < b.len() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_error_is_reported() {
        let mut spool = Spool::new(Full(100)).unwrap();
        let mut failed = None;
        for _ in 0..10 {
            let mut buf = vec![b'x'; 64];
            if let Err(e) = spool.take(&mut buf) {
                failed = Some(e);
                break;
            }
        }
        let e = failed.unwrap_or_else(|| spool.finish().unwrap_err());
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    }
}

//! trace-cmd's binary `trace.dat`, version 6 (the `trace-cmd.dat.v6(5)` man page), so that
//! `trace-cmd report`, KernelShark and LISA open a schedlab run:
//!
//! - the initial format (magic, "tracing", "6", little endian, 8-byte longs, 4 KiB pages),
//!   `header_page` and `header_event` as the kernel's tracefs prints them;
//! - the format file of every event schedlab can emit (`dat/formats.rs`), ftrace's `print`
//!   in the ftrace section, the others by system;
//! - kallsyms with the one symbol `print` records point at (`tracing_mark_write`), no
//!   trace_printk formats, the saved cmdlines (every pid's last comm);
//! - per-CPU data in ring-buffer pages (include/linux/ring_buffer.h, kernel/trace/
//!   ring_buffer.c): a page header (u64 timestamp, local_t commit), then events each behind a
//!   32-bit header of `type_len` (5 bits: the length in words up to 28, or 0 with the length
//!   in the next word) and `time_delta` (27 bits since the previous event), with a
//!   TIME_EXTEND (type 30) event before a record whose delta does not fit; the times are
//!   the trace clock, the simulated time plus `CLOCK_OFFSET_NS`, as in the text trace (no
//!   record at 0, which KernelShark's loader reads as "no record").
//!
//! Each CPU's pages are appended to a scratch file beside the output during the run, so
//! memory stays one page per CPU; `finish` writes the header and copies the CPUs' pages
//! after it, page-aligned, and removes the scratch files.

mod formats;

use formats::{Format, COMM_LEN, EVENTS, PRINT, TRACING_MARK_WRITE_IP};
use schedlab_model::kernel::tracepoint::{Observer, TaskRef, TraceEvent, IDLE_COMM};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const PAGE_SIZE: usize = 4096;
/// `struct buffer_data_page`: u64 time_stamp, local_t commit.
const PAGE_HEADER: usize = 16;
/// Largest record a `type_len` of 1..=28 can describe (`RB_MAX_SMALL_DATA`).
const MAX_SMALL_DATA: usize = 28 * 4;
/// Bits of an event header's `time_delta` (`TS_SHIFT`).
const TS_BITS: u32 = 27;
const TYPE_TIME_EXTEND: u32 = 30;
/// Largest record: the longest event plus a print's text.
const MAX_RECORD: usize = 1024;

/// `events/header_page` (ring_buffer_print_page_header).
const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
     \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
     \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
     \tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

/// `events/header_event` (ring_buffer_print_entry_header).
const HEADER_EVENT: &str = "# compressed entry header\n\
     \ttype_len    :    5 bits\n\
     \ttime_delta  :   27 bits\n\
     \tarray       :   32 bits\n\
     \n\
     \tpadding     : type == 29\n\
     \ttime_extend : type == 30\n\
     \ttime_stamp : type == 31\n\
     \tdata max type_len  == 28\n";

/// A field value of a record.
#[derive(Clone, Copy)]
enum Val<'a> {
    U(u64),
    I(i64),
    S(&'a str),
    /// Hex digits of a mask, without `0x` (by reference: a `CpuSet` holds `NR_CPUS` bits).
    Hex(&'a schedlab_base::CpuSet),
}

/// One CPU's ring buffer: the page being filled, and the full pages in a scratch file.
struct CpuPages {
    page: Box<[u8; PAGE_SIZE]>,
    /// Bytes of the page used, header included.
    used: usize,
    /// Time of the last event written (the base of the next delta).
    last_ts: u64,
    scratch: Option<BufWriter<File>>,
    pages: u64,
}

pub struct Dat {
    path: PathBuf,
    cpus: Vec<CpuPages>,
    /// Per event of `EVENTS`: its fields' offsets and its record size.
    layouts: Vec<(Vec<usize>, usize)>,
    print_layout: (Vec<usize>, usize),
    /// pid → last comm seen.
    cmdlines: BTreeMap<u32, String>,
    record: Vec<u8>,
    /// A mask's hex digits, on their way into `record`.
    hex: Vec<u8>,
    error: Option<io::Error>,
}

impl Dat {
    pub fn new(path: &Path, nr_cpus: usize) -> Dat {
        Dat {
            path: path.to_path_buf(),
            cpus: (0..nr_cpus)
                .map(|_| CpuPages {
                    page: Box::new([0; PAGE_SIZE]),
                    used: PAGE_HEADER,
                    last_ts: 0,
                    scratch: None,
                    pages: 0,
                })
                .collect(),
            layouts: EVENTS.iter().map(|e| formats::layout(e.fields)).collect(),
            print_layout: formats::layout(PRINT.fields),
            cmdlines: BTreeMap::new(),
            record: Vec::with_capacity(MAX_RECORD),
            hex: Vec::new(),
            error: None,
        }
    }

    fn scratch_path(&self, cpu: usize) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".cpu{cpu}.tmp"));
        self.path.with_file_name(name)
    }

    fn saw(&mut self, t: TaskRef<'_>) {
        if t.pid != 0 && self.cmdlines.get(&t.pid).map(String::as_str) != Some(t.comm) {
            self.cmdlines.insert(t.pid, t.comm.to_string());
        }
    }

    /// Build the record of `fmt` (laid out as `layout`) from `vals` into `self.record`.
    fn build(&mut self, fmt: &Format, layout: &(Vec<usize>, usize), pid: u32, vals: &[Val<'_>]) {
        let (offsets, size) = layout;
        let r = &mut self.record;
        r.clear();
        r.resize(*size, 0);
        r[0..2].copy_from_slice(&fmt.id.to_le_bytes());
        r[4..8].copy_from_slice(&(pid as i32).to_le_bytes());
        for ((fd, &off), v) in fmt.fields.iter().zip(offsets).zip(vals) {
            let dst_len = fd.size;
            match *v {
                Val::U(x) => put_int(&mut r[off..off + dst_len], x.to_le_bytes()),
                Val::I(x) => put_int(&mut r[off..off + dst_len], x.to_le_bytes()),
                Val::S(s) if dst_len == 0 => {
                    // A dynamic string at the record's end (ftrace's `char buf[]`).
                    r.truncate(off);
                    let room = MAX_RECORD - off - 1;
                    r.extend_from_slice(&s.as_bytes()[..s.len().min(room)]);
                    r.push(0);
                }
                Val::S(s) => {
                    // strlcpy: at most size - 1 bytes, NUL-terminated.
                    let n = s.len().min(dst_len - 1);
                    r[off..off + n].copy_from_slice(&s.as_bytes()[..n]);
                }
                Val::Hex(mask) => {
                    self.hex.clear();
                    super::text::hex_mask(&mut self.hex, mask);
                    let n = self.hex.len().min(dst_len - 1);
                    r[off..off + n].copy_from_slice(&self.hex[..n]);
                }
            }
        }
        // The ring buffer stores records in 4-byte words.
        r.resize(r.len().div_ceil(4) * 4, 0);
    }

    /// Append `self.record` at `ts` to `cpu`'s ring buffer.
    fn commit(&mut self, cpu: usize, ts: u64) -> io::Result<()> {
        let len = self.record.len();
        let header = if len <= MAX_SMALL_DATA { 4 } else { 8 };
        let c = &mut self.cpus[cpu];
        let mut delta = ts.saturating_sub(c.last_ts);
        let extend = if c.used == PAGE_HEADER || delta < 1 << TS_BITS {
            0
        } else {
            8
        };
        if c.used + extend + header + len > PAGE_SIZE {
            self.flush_page(cpu)?;
        }
        let c = &mut self.cpus[cpu];
        if c.used == PAGE_HEADER {
            c.page[0..8].copy_from_slice(&ts.to_le_bytes());
            delta = 0;
        } else if delta >= 1 << TS_BITS {
            let low = (delta & ((1 << TS_BITS) - 1)) as u32;
            let word = TYPE_TIME_EXTEND | (low << 5);
            put(&mut c.page[..], &mut c.used, &word.to_le_bytes());
            put(
                &mut c.page[..],
                &mut c.used,
                &((delta >> TS_BITS) as u32).to_le_bytes(),
            );
            delta = 0;
        }
        let delta = (delta as u32) << 5;
        if len <= MAX_SMALL_DATA {
            let word = (len / 4) as u32 | delta;
            put(&mut c.page[..], &mut c.used, &word.to_le_bytes());
        } else {
            put(&mut c.page[..], &mut c.used, &delta.to_le_bytes());
            put(
                &mut c.page[..],
                &mut c.used,
                &(len as u32 + 4).to_le_bytes(),
            );
        }
        put(&mut c.page[..], &mut c.used, &self.record);
        c.last_ts = ts;
        Ok(())
    }

    /// Close `cpu`'s page (its commit is the data written) and append it to the scratch file.
    fn flush_page(&mut self, cpu: usize) -> io::Result<()> {
        if self.cpus[cpu].used == PAGE_HEADER {
            return Ok(());
        }
        if self.cpus[cpu].scratch.is_none() {
            let f = File::create(self.scratch_path(cpu))?;
            self.cpus[cpu].scratch = Some(BufWriter::with_capacity(1 << 16, f));
        }
        let c = &mut self.cpus[cpu];
        let commit = (c.used - PAGE_HEADER) as u64;
        c.page[8..16].copy_from_slice(&commit.to_le_bytes());
        c.page[c.used..].fill(0);
        c.scratch
            .as_mut()
            .expect("created above")
            .write_all(&c.page[..])?;
        c.pages += 1;
        c.used = PAGE_HEADER;
        Ok(())
    }

    fn write_event(
        &mut self,
        ts: u64,
        cpu: usize,
        current: Option<TaskRef<'_>>,
        ev: &TraceEvent<'_>,
    ) -> io::Result<()> {
        let pid = current.map_or(0, |t| t.pid);
        if let Some(t) = current {
            self.saw(t);
        }
        if let TraceEvent::Print { text } = *ev {
            let layout = std::mem::take(&mut self.print_layout);
            self.build(
                &PRINT,
                &layout,
                pid,
                &[Val::U(TRACING_MARK_WRITE_IP), Val::S(text)],
            );
            self.print_layout = layout;
            return self.commit(cpu, ts);
        }
        let mut vals = [Val::U(0); 8];
        let (index, n) = values(ev, &mut vals);
        match *ev {
            TraceEvent::SchedWakeupNew { p, .. }
            | TraceEvent::SchedProcessExit { p }
            | TraceEvent::TaskRename { p, .. } => self.saw(p),
            TraceEvent::SchedProcessFork { parent, child } => {
                self.saw(parent);
                self.saw(child);
            }
            _ => {}
        }
        let layout = std::mem::take(&mut self.layouts[index]);
        self.build(&EVENTS[index], &layout, pid, &vals[..n]);
        if let TraceEvent::SchedSwitch {
            prev, next, cpu, ..
        } = *ev
        {
            // The idle task is `swapper/N` in sched_switch.
            for (t, field) in [(prev, 0), (next, 4)] {
                if t.pid == 0 {
                    let off = layout.0[field];
                    let comm = &mut self.record[off..off + COMM_LEN];
                    comm.fill(0);
                    comm[..8].copy_from_slice(b"swapper/");
                    super::text::digits(&mut comm[8..], cpu as u64);
                }
            }
        }
        self.layouts[index] = layout;
        self.commit(cpu, ts)
    }

    fn write_file(&mut self) -> io::Result<()> {
        for cpu in 0..self.cpus.len() {
            self.flush_page(cpu)?;
            if let Some(mut s) = self.cpus[cpu].scratch.take() {
                s.flush()?;
            }
        }
        let mut h: Vec<u8> = Vec::new();
        h.extend_from_slice(&[0x17, 0x08, 0x44]);
        h.extend_from_slice(b"tracing6\0");
        h.push(0); // little endian
        h.push(8); // long size
        h.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        h.extend_from_slice(b"header_page\0");
        sized8(&mut h, HEADER_PAGE.as_bytes());
        h.extend_from_slice(b"header_event\0");
        sized8(&mut h, HEADER_EVENT.as_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        sized8(&mut h, formats::format_file(&PRINT).as_bytes());
        let mut systems: Vec<&str> = Vec::new();
        for e in EVENTS {
            if !systems.contains(&e.system) {
                systems.push(e.system);
            }
        }
        h.extend_from_slice(&(systems.len() as u32).to_le_bytes());
        for system in systems {
            h.extend_from_slice(system.as_bytes());
            h.push(0);
            let events: Vec<&Format> = EVENTS.iter().filter(|e| e.system == system).collect();
            h.extend_from_slice(&(events.len() as u32).to_le_bytes());
            for e in events {
                sized8(&mut h, formats::format_file(e).as_bytes());
            }
        }
        let kallsyms = format!("{TRACING_MARK_WRITE_IP:016x} T tracing_mark_write\n");
        sized4(&mut h, kallsyms.as_bytes());
        sized4(&mut h, b"");
        let mut cmdlines = String::new();
        for (pid, comm) in &self.cmdlines {
            cmdlines.push_str(&format!("{pid} {comm}\n"));
        }
        sized8(&mut h, cmdlines.as_bytes());
        h.extend_from_slice(&(self.cpus.len() as u32).to_le_bytes());
        h.extend_from_slice(b"flyrecord\0");
        let table_end = h.len() + 16 * self.cpus.len();
        let mut offset = table_end.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        for c in &self.cpus {
            let size = c.pages as usize * PAGE_SIZE;
            h.extend_from_slice(&(offset as u64).to_le_bytes());
            h.extend_from_slice(&(size as u64).to_le_bytes());
            offset += size;
        }
        h.resize(table_end.div_ceil(PAGE_SIZE) * PAGE_SIZE, 0);
        // The output (staged beside its final name) is new and empty: it is opened without
        // O_TRUNC, because truncating a file to nothing makes ext4 (`auto_da_alloc`) flush
        // it when it is closed (17 ms for example7's 100 s, 27 MB).
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)?;
        if file.metadata()?.len() > 0 {
            file.set_len(0)?;
        }
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&h)?;
        for cpu in 0..self.cpus.len() {
            if self.cpus[cpu].pages > 0 {
                let path = self.scratch_path(cpu);
                io::copy(&mut File::open(&path)?, &mut out)?;
                std::fs::remove_file(&path)?;
            }
        }
        out.flush()
    }
}

fn put(page: &mut [u8], used: &mut usize, bytes: &[u8]) {
    page[*used..*used + bytes.len()].copy_from_slice(bytes);
    *used += bytes.len();
}

/// The low bytes of a little-endian integer into a field of 1, 2, 4 or 8 bytes, each size a
/// copy of constant length.
#[inline]
fn put_int(dst: &mut [u8], le: [u8; 8]) {
    match dst.len() {
        8 => dst.copy_from_slice(&le),
        4 => dst.copy_from_slice(&le[..4]),
        2 => dst.copy_from_slice(&le[..2]),
        n => dst.copy_from_slice(&le[..n]),
    }
}

fn sized8(h: &mut Vec<u8>, data: &[u8]) {
    h.extend_from_slice(&(data.len() as u64).to_le_bytes());
    h.extend_from_slice(data);
}

fn sized4(h: &mut Vec<u8>, data: &[u8]) {
    h.extend_from_slice(&(data.len() as u32).to_le_bytes());
    h.extend_from_slice(data);
}

/// The `sched_switch` `prev_state` bits of a state letter (TASK_REPORT).
fn state_bits(letter: &str) -> i64 {
    match letter {
        "S" => 0x01,
        "D" => 0x02,
        "T" => 0x04,
        "t" => 0x08,
        "X" => 0x10,
        "Z" => 0x20,
        "P" => 0x40,
        "I" => 0x80,
        _ => 0,
    }
}

/// The event's index in `EVENTS`, and its field values in format order into `v` (how many:
/// the second number).
fn values<'a>(ev: &TraceEvent<'a>, v: &mut [Val<'a>; 8]) -> (usize, usize) {
    let mut n = 0;
    let mut push = |x: Val<'a>| {
        v[n] = x;
        n += 1;
    };
    let index = match sched_values(ev, &mut push) {
        Some(index) => index,
        None => lisa_values(ev, &mut push),
    };
    (index, n)
}

/// The values of the kernel's own events (sched, task, power): the event's index, or none
/// for the others.
fn sched_values<'a>(ev: &TraceEvent<'a>, push: &mut impl FnMut(Val<'a>)) -> Option<usize> {
    use formats::*;
    let comm = |t: TaskRef<'a>| Val::S(if t.pid == 0 { IDLE_COMM } else { t.comm });
    let index = match *ev {
        TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
            ..
        } => {
            // The idle task's `swapper/N` is written by `write_event`.
            push(comm(prev));
            push(Val::I(prev.pid.into()));
            push(Val::I(prev.prio.into()));
            push(Val::I(state_bits(prev_state)));
            push(comm(next));
            push(Val::I(next.pid.into()));
            push(Val::I(next.prio.into()));
            SCHED_SWITCH
        }
        TraceEvent::SchedWaking { p, target_cpu }
        | TraceEvent::SchedWakeup { p, target_cpu }
        | TraceEvent::SchedWakeupNew { p, target_cpu } => {
            push(Val::S(p.comm));
            push(Val::I(p.pid.into()));
            push(Val::I(p.prio.into()));
            push(Val::I(target_cpu as i64));
            match ev {
                TraceEvent::SchedWaking { .. } => SCHED_WAKING,
                TraceEvent::SchedWakeup { .. } => SCHED_WAKEUP,
                _ => SCHED_WAKEUP_NEW,
            }
        }
        TraceEvent::SchedMigrateTask {
            p,
            orig_cpu,
            dest_cpu,
        } => {
            push(Val::S(p.comm));
            push(Val::I(p.pid.into()));
            push(Val::I(p.prio.into()));
            push(Val::I(orig_cpu as i64));
            push(Val::I(dest_cpu as i64));
            SCHED_MIGRATE_TASK
        }
        TraceEvent::SchedProcessFork { parent, child } => {
            push(Val::S(parent.comm));
            push(Val::I(parent.pid.into()));
            push(Val::S(child.comm));
            push(Val::I(child.pid.into()));
            SCHED_PROCESS_FORK
        }
        TraceEvent::SchedProcessExit { p } => {
            push(Val::S(p.comm));
            push(Val::I(p.pid.into()));
            push(Val::I(p.prio.into()));
            SCHED_PROCESS_EXIT
        }
        TraceEvent::TaskRename { p, oldcomm } => {
            push(Val::I(p.pid.into()));
            push(Val::S(oldcomm));
            push(Val::S(p.comm));
            push(Val::I(0));
            TASK_RENAME
        }
        TraceEvent::CpuIdle { state, cpu } => {
            push(Val::U(state.into()));
            push(Val::U(cpu as u64));
            CPU_IDLE
        }
        TraceEvent::CpuFrequency { khz, cpu } => {
            push(Val::U(khz.into()));
            push(Val::U(cpu as u64));
            CPU_FREQUENCY
        }
        _ => return None,
    };
    Some(index)
}

/// The values of the events of LISA's module (PELT, util_est, capacity, uclamp,
/// overutilized): the event's index.
fn lisa_values<'a>(ev: &TraceEvent<'a>, push: &mut impl FnMut(Val<'a>)) -> usize {
    use formats::*;
    match *ev {
        TraceEvent::SchedPeltSe { cpu, p, avg } => {
            push(Val::I(cpu as i64));
            push(Val::S("(null)"));
            push(Val::S(p.comm));
            push(Val::I(p.pid.into()));
            pelt(push, avg);
            SCHED_PELT_SE
        }
        TraceEvent::SchedPeltCfs { cpu, avg } => {
            push(Val::I(cpu as i64));
            push(Val::S("/"));
            pelt(push, avg);
            SCHED_PELT_CFS
        }
        TraceEvent::SchedPeltRt { cpu, avg } | TraceEvent::SchedPeltDl { cpu, avg } => {
            push(Val::I(cpu as i64));
            pelt(push, avg);
            if matches!(ev, TraceEvent::SchedPeltRt { .. }) {
                SCHED_PELT_RT
            } else {
                SCHED_PELT_DL
            }
        }
        TraceEvent::SchedUtilEstSe {
            cpu,
            p,
            enqueued,
            ewma,
            util,
        } => {
            push(Val::I(cpu as i64));
            push(Val::S("(null)"));
            push(Val::S(p.comm));
            push(Val::I(p.pid.into()));
            push(Val::U(enqueued.into()));
            push(Val::U(ewma.into()));
            push(Val::U(util));
            SCHED_UTIL_EST_SE
        }
        TraceEvent::SchedUtilEstCfs {
            cpu,
            enqueued,
            ewma,
            util,
        } => {
            push(Val::I(cpu as i64));
            push(Val::S("/"));
            push(Val::U(enqueued.into()));
            push(Val::U(ewma.into()));
            push(Val::U(util));
            SCHED_UTIL_EST_CFS
        }
        TraceEvent::SchedCpuCapacity {
            cpu,
            capacity,
            capacity_orig,
            capacity_curr,
        } => {
            push(Val::I(cpu as i64));
            push(Val::U(capacity));
            push(Val::U(capacity_orig));
            push(Val::U(capacity_curr));
            SCHED_CPU_CAPACITY
        }
        TraceEvent::UclampUtilSe { cpu, p, clamps: c } => {
            push(Val::I(p.pid.into()));
            push(Val::S(p.comm));
            push(Val::I(cpu as i64));
            clamps(push, c);
            UCLAMP_UTIL_SE
        }
        TraceEvent::UclampUtilCfs { cpu, clamps: c } => {
            push(Val::I(cpu as i64));
            clamps(push, c);
            UCLAMP_UTIL_CFS
        }
        TraceEvent::SchedOverutilized { overutilized, span } => {
            push(Val::I(overutilized.into()));
            push(Val::Hex(span));
            SCHED_OVERUTILIZED
        }
        TraceEvent::Print { .. } => unreachable!("print records are built by write_event"),
        _ => unreachable!("the kernel's events are sched_values'"),
    }
}

fn pelt<'a>(push: &mut impl FnMut(Val<'a>), avg: schedlab_model::kernel::tracepoint::PeltFields) {
    push(Val::U(avg.load));
    push(Val::U(avg.runnable));
    push(Val::U(avg.util));
    push(Val::U(avg.update_time));
}

fn clamps<'a>(push: &mut impl FnMut(Val<'a>), c: schedlab_model::kernel::tracepoint::UclampFields) {
    push(Val::U(c.util_avg));
    push(Val::U(c.uclamp_avg));
    push(Val::U(c.uclamp_min));
    push(Val::U(c.uclamp_max));
}

impl Observer for Dat {
    fn event(&mut self, ts: u64, cpu: usize, current: Option<TaskRef<'_>>, ev: &TraceEvent<'_>) {
        if self.error.is_none() {
            let ts = ts.saturating_add(super::CLOCK_OFFSET_NS);
            self.error = self.write_event(ts, cpu, current, ev).err();
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.write_file()
    }
}

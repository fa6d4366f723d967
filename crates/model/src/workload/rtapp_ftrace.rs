//! rt-app's own ftrace lines: the categories `global.ftrace` enables (rt-app_utils.c,
//! `ftrace_setup`) and the trace_marker writes of rt-app.c's `log_ftrace` calls, in rt-app's
//! exact text, which LISA's `rta` analyses parse as `userspace@rtapp_*` events:
//!
//! - main: `rtapp_main: event=start` (the main process, before it creates the threads),
//!   `event=shutdown` (its `duration` is over) and `event=end` (every thread joined);
//! - task: `rtapp_main: event=clock_ref data=<µs>` (the thread that takes the use case's
//!   start), `rtapp_task: event=start` / `event=end` (a thread's first and last lines);
//! - loop: `rtapp_loop: event=start|end thread_loop=N phase=N phase_loop=N` around each phase
//!   iteration, after the phase's attributes are applied;
//! - event: `rtapp_event: id=I type=T desc=D` before each event (T is rt-app's `resource_t`,
//!   D its event name: `EventLabel`);
//! - stats: `rtapp_stats: period=… run=… wu_lat=… slack=… c_period=… c_run=…` after each
//!   iteration, the values of its log row.
//!
//! A thread writes into `Marks` while it steps (no simulated time passes in user space); the
//! kernel then logs each line as a `print` event of the thread, on its CPU, at that instant,
//! as a `write()` to trace_marker does. Formatting is by hand into one reused buffer.

/// rt-app's `ftrace_level` bits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FtraceCategories(u8);

impl FtraceCategories {
    pub const NONE: FtraceCategories = FtraceCategories(0);
    pub const MAIN: FtraceCategories = FtraceCategories(0x01);
    pub const TASK: FtraceCategories = FtraceCategories(0x02);
    pub const LOOP: FtraceCategories = FtraceCategories(0x04);
    pub const EVENT: FtraceCategories = FtraceCategories(0x08);
    pub const STATS: FtraceCategories = FtraceCategories(0x10);
    /// `"ftrace": true` (deprecated in rt-app): `~0`, every category.
    pub const ALL: FtraceCategories = FtraceCategories(0xff);

    /// rt-app's `ftrace_setup`: comma-separated names, case-insensitive, `none` clearing what
    /// came before; `None` for a name rt-app refuses ("Invalid ftrace categories").
    pub fn parse(list: &str) -> Option<FtraceCategories> {
        let mut level = 0;
        for cat in list.split(',').filter(|c| !c.is_empty()) {
            let bit = [
                ("main", Self::MAIN),
                ("task", Self::TASK),
                ("loop", Self::LOOP),
                ("event", Self::EVENT),
                ("stats", Self::STATS),
                ("none", Self::NONE),
            ]
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(cat))?
            .1;
            level = if bit == Self::NONE { 0 } else { level | bit.0 };
        }
        Some(FtraceCategories(level))
    }

    pub fn has(self, c: FtraceCategories) -> bool {
        self.0 & c.0 != 0
    }
}

/// How `rtapp_event` names one event: rt-app's `resource_t` number and the event's `name`
/// as rt-app's parser builds it (`run0`, `timer:t0`, `lock:m`, `wait:c:m`…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLabel {
    pub type_id: u8,
    pub desc: String,
}

/// The trace_marker lines written since the kernel last took them.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    on: FtraceCategories,
    /// The lines, one after the other.
    text: String,
    /// Where each line ends in `text`.
    ends: Vec<usize>,
}

impl Marks {
    /// Lines of the categories `on` (none: `Marks::default()`).
    pub fn new(on: FtraceCategories) -> Marks {
        Marks {
            on,
            text: String::new(),
            ends: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The lines written, in order; then none.
    pub fn take(&mut self, mut each: impl FnMut(&str)) {
        let mut start = 0;
        for &end in &self.ends {
            each(&self.text[start..end]);
            start = end;
        }
        self.text.clear();
        self.ends.clear();
    }

    fn wants(&self, c: FtraceCategories) -> bool {
        self.on.has(c)
    }

    fn put(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn end_line(&mut self) {
        self.ends.push(self.text.len());
    }

    fn int(&mut self, name: &str, v: i64) {
        self.put(name);
        self.put(itoa::Buffer::new().format(v));
    }

    /// `rtapp_main: event=<event>` (start, shutdown, end).
    pub fn main(&mut self, event: &str) {
        if self.wants(FtraceCategories::MAIN) {
            self.put("rtapp_main: event=");
            self.put(event);
            self.end_line();
        }
    }

    /// `rtapp_main: event=clock_ref data=<µs>`: the use case's start (category task).
    pub fn clock_ref(&mut self, t_zero_us: u64) {
        if self.wants(FtraceCategories::TASK) {
            self.put("rtapp_main: event=clock_ref data=");
            self.put(itoa::Buffer::new().format(t_zero_us));
            self.end_line();
        }
    }

    /// `rtapp_task: event=<event>` (start, end).
    pub fn task(&mut self, event: &str) {
        if self.wants(FtraceCategories::TASK) {
            self.put("rtapp_task: event=");
            self.put(event);
            self.end_line();
        }
    }

    /// `rtapp_loop: event=<event> thread_loop=… phase=… phase_loop=…`. The test is
    /// inlined at every loop of every thread, most of which write no trace; the line is not.
    #[inline]
    pub fn phase_loop(&mut self, event: &str, thread_loop: i64, phase: usize, phase_loop: i64) {
        if self.wants(FtraceCategories::LOOP) {
            self.phase_loop_line(event, thread_loop, phase, phase_loop);
        }
    }

    #[inline(never)]
    fn phase_loop_line(&mut self, event: &str, thread_loop: i64, phase: usize, phase_loop: i64) {
        self.put("rtapp_loop: event=");
        self.put(event);
        self.int(" thread_loop=", thread_loop);
        self.int(" phase=", phase as i64);
        self.int(" phase_loop=", phase_loop);
        self.end_line();
    }

    /// `rtapp_event: id=… type=… desc=…`.
    pub fn event(&mut self, id: usize, label: &EventLabel) {
        if self.wants(FtraceCategories::EVENT) {
            self.int("rtapp_event: id=", id as i64);
            self.int(" type=", label.type_id.into());
            self.put(" desc=");
            self.put(&label.desc);
            self.end_line();
        }
    }

    /// Whether `stats` writes a line.
    pub fn wants_stats(&self) -> bool {
        self.wants(FtraceCategories::STATS)
    }

    /// `rtapp_stats: …` of an iteration's log row.
    pub fn stats(&mut self, row: &super::LoopRecord) {
        if self.wants_stats() {
            // rt-app prints each with %d.
            let int = |v: u64| v as i64;
            self.int("rtapp_stats: period=", int(row.period));
            self.int(" run=", int(row.run));
            self.int(" wu_lat=", int(row.wu_lat));
            self.int(" slack=", row.slack);
            self.int(" c_period=", int(row.c_period));
            self.int(" c_run=", int(row.c_duration));
            self.end_line();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ftrace_setup`'s rules: exact names in any case, `none` resets, anything else refused.
    #[test]
    fn categories_parse_as_rt_app_does() {
        let c = FtraceCategories::parse("main,task,loop,event").unwrap();
        assert!(c.has(FtraceCategories::MAIN) && c.has(FtraceCategories::EVENT));
        assert!(!c.has(FtraceCategories::STATS));
        let c = FtraceCategories::parse("MAIN,Stats").unwrap();
        assert!(c.has(FtraceCategories::MAIN) && c.has(FtraceCategories::STATS));
        assert_eq!(
            FtraceCategories::parse("main,none,loop"),
            Some(FtraceCategories::LOOP)
        );
        assert_eq!(FtraceCategories::parse(""), Some(FtraceCategories::NONE));
        assert_eq!(FtraceCategories::parse("mains"), None);
        assert_eq!(FtraceCategories::parse("main, task"), None);
    }

    /// Lines of disabled categories are not written; the others are rt-app's text.
    #[test]
    fn lines_are_rt_app_text_per_category() {
        let mut m = Marks::new(FtraceCategories::parse("loop,stats").unwrap());
        m.main("start");
        m.task("start");
        m.phase_loop("start", 0, 1, 2);
        m.event(
            0,
            &EventLabel {
                type_id: 6,
                desc: "run".into(),
            },
        );
        m.stats(&super::super::LoopRecord {
            period: 10,
            run: 5,
            slack: -3,
            c_period: 10,
            c_duration: 5,
            wu_lat: 7,
            ..Default::default()
        });
        let mut lines = Vec::new();
        m.take(|l| lines.push(l.to_string()));
        assert_eq!(
            lines,
            [
                "rtapp_loop: event=start thread_loop=0 phase=1 phase_loop=2",
                "rtapp_stats: period=10 run=5 wu_lat=7 slack=-3 c_period=10 c_run=5",
            ]
        );
        assert!(m.is_empty());
    }
}

//! The tracefs format files of the events schedlab emits (`events/<system>/<event>/format`),
//! as a v6.1 x86-64 kernel prints them: the common fields, then the event's own with their
//! offsets and sizes, then the print fmt that `trace-cmd report` formats the record with.
//! Layouts are the `TP_STRUCT__entry` of include/trace/events/sched.h, power.h and task.h,
//! kernel/trace/trace_entries.h (ftrace's `print`) and LISA's module
//! (lisa/_assets/kmodules/sched_tp/ftrace_events.h, system `sched`), laid out as the
//! compiler does: each field at its natural alignment.

/// One field of an event's record.
pub struct Field {
    /// The C declaration as tracefs prints it, e.g. `char prev_comm[16]`.
    pub decl: &'static str,
    pub size: usize,
    pub signed: bool,
}

/// One event's format file.
pub struct Format {
    pub system: &'static str,
    pub name: &'static str,
    /// `common_type` of its records.
    pub id: u16,
    pub fields: &'static [Field],
    pub print_fmt: &'static str,
}

/// The common fields every record starts with (include/linux/trace_events.h, `struct
/// trace_entry`): 8 bytes.
pub const COMMON: &[Field] = &[
    f("unsigned short common_type", 2, false),
    f("unsigned char common_flags", 1, false),
    f("unsigned char common_preempt_count", 1, false),
    f("int common_pid", 4, true),
];

/// `TASK_COMM_LEN`.
pub const COMM_LEN: usize = 16;
/// LISA's module: `PATH_SIZE` of a cgroup path.
pub const PATH_SIZE: usize = 64;
/// LISA's module: `MAX_SPAN_SIZE`, the hex digits of a root domain's span (NR_CPUS ≥ 512).
pub const SPAN_SIZE: usize = 128;

const fn f(decl: &'static str, size: usize, signed: bool) -> Field {
    Field { decl, size, signed }
}

const WAKEUP_FIELDS: &[Field] = &[
    f("char comm[16]", 16, false),
    f("pid_t pid", 4, true),
    f("int prio", 4, true),
    f("int target_cpu", 4, true),
];
const WAKEUP_FMT: &str =
    r#""comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu"#;

const CPU_FIELDS: &[Field] = &[f("u32 state", 4, false), f("u32 cpu_id", 4, false)];
const CPU_FMT: &str =
    r#""state=%lu cpu_id=%lu", (unsigned long)REC->state, (unsigned long)REC->cpu_id"#;

const PELT_RQ_FIELDS: &[Field] = &[
    f("int cpu", 4, true),
    f("unsigned long load", 8, false),
    f("unsigned long runnable", 8, false),
    f("unsigned long util", 8, false),
    f("unsigned long long update_time", 8, false),
];
const PELT_RQ_FMT: &str = r#""cpu=%d load=%lu runnable=%lu util=%lu update_time=%llu", REC->cpu, REC->load, REC->runnable, REC->util, REC->update_time"#;

/// ftrace's own `print` (trace_marker writes), in the file's "ftrace" section.
pub const PRINT: Format = Format {
    system: "ftrace",
    name: "print",
    id: 5,
    fields: &[f("unsigned long ip", 8, false), f("char buf[]", 0, false)],
    print_fmt: r#""%ps: %s", (void *)REC->ip, REC->buf"#,
};

/// Where `PRINT`'s `ip` points: the one symbol of the file's kallsyms.
pub const TRACING_MARK_WRITE_IP: u64 = 0xffff_ffff_8100_0000;

pub const SCHED_SWITCH: usize = 0;
pub const SCHED_WAKING: usize = 1;
pub const SCHED_WAKEUP: usize = 2;
pub const SCHED_WAKEUP_NEW: usize = 3;
pub const SCHED_MIGRATE_TASK: usize = 4;
pub const SCHED_PROCESS_FORK: usize = 5;
pub const SCHED_PROCESS_EXIT: usize = 6;
pub const SCHED_PELT_SE: usize = 7;
pub const SCHED_PELT_CFS: usize = 8;
pub const SCHED_PELT_RT: usize = 9;
pub const SCHED_PELT_DL: usize = 10;
pub const SCHED_UTIL_EST_SE: usize = 11;
pub const SCHED_UTIL_EST_CFS: usize = 12;
pub const SCHED_CPU_CAPACITY: usize = 13;
pub const UCLAMP_UTIL_SE: usize = 14;
pub const UCLAMP_UTIL_CFS: usize = 15;
pub const SCHED_OVERUTILIZED: usize = 16;
pub const CPU_IDLE: usize = 17;
pub const CPU_FREQUENCY: usize = 18;
pub const TASK_RENAME: usize = 19;

/// Every event of the "EVENT FORMATS" section, indexed by the constants above, grouped by
/// system in file order.
pub const EVENTS: &[Format] = &[
    Format {
        system: "sched",
        name: "sched_switch",
        id: 316,
        fields: &[
            f("char prev_comm[16]", 16, false),
            f("pid_t prev_pid", 4, true),
            f("int prev_prio", 4, true),
            f("long prev_state", 8, true),
            f("char next_comm[16]", 16, false),
            f("pid_t next_pid", 4, true),
            f("int next_prio", 4, true),
        ],
        print_fmt: concat!(
            r#""prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", "#,
            r#"REC->prev_comm, REC->prev_pid, REC->prev_prio, "#,
            r#"(REC->prev_state & ((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1)) ? "#,
            r#"__print_flags(REC->prev_state & ((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1), "|", "#,
            r#"{ 0x0001, "S" }, { 0x0002, "D" }, { 0x0004, "T" }, { 0x0008, "t" }, { 0x0010, "X" }, { 0x0020, "Z" }, { 0x0040, "P" }, { 0x0080, "I" }) : "R", "#,
            r#"REC->prev_state & (((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) ? "+" : "", "#,
            r#"REC->next_comm, REC->next_pid, REC->next_prio"#
        ),
    },
    Format {
        system: "sched",
        name: "sched_waking",
        id: 320,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
    },
    Format {
        system: "sched",
        name: "sched_wakeup",
        id: 319,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
    },
    Format {
        system: "sched",
        name: "sched_wakeup_new",
        id: 318,
        fields: WAKEUP_FIELDS,
        print_fmt: WAKEUP_FMT,
    },
    Format {
        system: "sched",
        name: "sched_migrate_task",
        id: 315,
        fields: &[
            f("char comm[16]", 16, false),
            f("pid_t pid", 4, true),
            f("int prio", 4, true),
            f("int orig_cpu", 4, true),
            f("int dest_cpu", 4, true),
        ],
        print_fmt: r#""comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu"#,
    },
    Format {
        system: "sched",
        name: "sched_process_fork",
        id: 311,
        fields: &[
            f("char parent_comm[16]", 16, false),
            f("pid_t parent_pid", 4, true),
            f("char child_comm[16]", 16, false),
            f("pid_t child_pid", 4, true),
        ],
        print_fmt: r#""comm=%s pid=%d child_comm=%s child_pid=%d", REC->parent_comm, REC->parent_pid, REC->child_comm, REC->child_pid"#,
    },
    Format {
        system: "sched",
        name: "sched_process_exit",
        id: 313,
        fields: &[
            f("char comm[16]", 16, false),
            f("pid_t pid", 4, true),
            f("int prio", 4, true),
        ],
        print_fmt: r#""comm=%s pid=%d prio=%d", REC->comm, REC->pid, REC->prio"#,
    },
    Format {
        system: "sched",
        name: "sched_pelt_se",
        id: 1001,
        fields: &[
            f("int cpu", 4, true),
            f("char path[64]", PATH_SIZE, false),
            f("char comm[16]", 16, false),
            f("int pid", 4, true),
            f("unsigned long load", 8, false),
            f("unsigned long runnable", 8, false),
            f("unsigned long util", 8, false),
            f("unsigned long long update_time", 8, false),
        ],
        print_fmt: r#""cpu=%d path=%s comm=%s pid=%d load=%lu runnable=%lu util=%lu update_time=%llu", REC->cpu, REC->path, REC->comm, REC->pid, REC->load, REC->runnable, REC->util, REC->update_time"#,
    },
    Format {
        system: "sched",
        name: "sched_pelt_cfs",
        id: 1002,
        fields: &[
            f("int cpu", 4, true),
            f("char path[64]", PATH_SIZE, false),
            f("unsigned long load", 8, false),
            f("unsigned long runnable", 8, false),
            f("unsigned long util", 8, false),
            f("unsigned long long update_time", 8, false),
        ],
        print_fmt: r#""cpu=%d path=%s load=%lu runnable=%lu util=%lu update_time=%llu", REC->cpu, REC->path, REC->load, REC->runnable, REC->util, REC->update_time"#,
    },
    Format {
        system: "sched",
        name: "sched_pelt_rt",
        id: 1003,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
    },
    Format {
        system: "sched",
        name: "sched_pelt_dl",
        id: 1004,
        fields: PELT_RQ_FIELDS,
        print_fmt: PELT_RQ_FMT,
    },
    Format {
        system: "sched",
        name: "sched_util_est_se",
        id: 1005,
        fields: &[
            f("int cpu", 4, true),
            f("char path[64]", PATH_SIZE, false),
            f("char comm[16]", 16, false),
            f("int pid", 4, true),
            f("unsigned int enqueued", 4, false),
            f("unsigned int ewma", 4, false),
            f("unsigned long util", 8, false),
        ],
        print_fmt: r#""cpu=%d path=%s comm=%s pid=%d enqueued=%u ewma=%u util=%lu", REC->cpu, REC->path, REC->comm, REC->pid, REC->enqueued, REC->ewma, REC->util"#,
    },
    Format {
        system: "sched",
        name: "sched_util_est_cfs",
        id: 1006,
        fields: &[
            f("int cpu", 4, true),
            f("char path[64]", PATH_SIZE, false),
            f("unsigned int enqueued", 4, false),
            f("unsigned int ewma", 4, false),
            f("unsigned long util", 8, false),
        ],
        print_fmt: r#""cpu=%d path=%s enqueued=%u ewma=%u util=%lu", REC->cpu, REC->path, REC->enqueued, REC->ewma, REC->util"#,
    },
    Format {
        system: "sched",
        name: "sched_cpu_capacity",
        id: 1007,
        fields: &[
            f("int cpu", 4, true),
            f("unsigned long capacity", 8, false),
            f("unsigned long capacity_orig", 8, false),
            f("unsigned long capacity_curr", 8, false),
        ],
        print_fmt: r#""cpu=%d capacity=%lu capacity_orig=%lu capacity_curr=%lu", REC->cpu, REC->capacity, REC->capacity_orig, REC->capacity_curr"#,
    },
    Format {
        system: "sched",
        name: "uclamp_util_se",
        id: 1008,
        fields: &[
            f("pid_t pid", 4, true),
            f("char comm[16]", 16, false),
            f("int cpu", 4, true),
            f("unsigned long util_avg", 8, false),
            f("unsigned long uclamp_avg", 8, false),
            f("unsigned long uclamp_min", 8, false),
            f("unsigned long uclamp_max", 8, false),
        ],
        print_fmt: r#""pid=%d comm=%s cpu=%d util_avg=%lu uclamp_avg=%lu uclamp_min=%lu uclamp_max=%lu", REC->pid, REC->comm, REC->cpu, REC->util_avg, REC->uclamp_avg, REC->uclamp_min, REC->uclamp_max"#,
    },
    Format {
        system: "sched",
        name: "uclamp_util_cfs",
        id: 1009,
        fields: &[
            f("int cpu", 4, true),
            f("unsigned long util_avg", 8, false),
            f("unsigned long uclamp_avg", 8, false),
            f("unsigned long uclamp_min", 8, false),
            f("unsigned long uclamp_max", 8, false),
        ],
        print_fmt: r#""cpu=%d util_avg=%lu uclamp_avg=%lu uclamp_min=%lu uclamp_max=%lu", REC->cpu, REC->util_avg, REC->uclamp_avg, REC->uclamp_min, REC->uclamp_max"#,
    },
    Format {
        system: "sched",
        name: "sched_overutilized",
        id: 1010,
        fields: &[
            f("int overutilized", 4, true),
            f("char span[128]", SPAN_SIZE, false),
        ],
        print_fmt: r#""overutilized=%d span=0x%s", REC->overutilized, REC->span"#,
    },
    Format {
        system: "power",
        name: "cpu_idle",
        id: 450,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
    },
    Format {
        system: "power",
        name: "cpu_frequency",
        id: 446,
        fields: CPU_FIELDS,
        print_fmt: CPU_FMT,
    },
    Format {
        system: "task",
        name: "task_rename",
        id: 151,
        fields: &[
            f("pid_t pid", 4, true),
            f("char oldcomm[16]", 16, false),
            f("char newcomm[16]", 16, false),
            f("short oom_score_adj", 2, true),
        ],
        print_fmt: r#""pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd", REC->pid, REC->oldcomm, REC->newcomm, REC->oom_score_adj"#,
    },
];

/// The offset of each field of `fields` after the common ones, each at its natural
/// alignment (char arrays at any byte), and the record's size.
pub fn layout(fields: &[Field]) -> (Vec<usize>, usize) {
    let mut offsets = Vec::with_capacity(fields.len());
    let mut at: usize = 8;
    for fd in fields {
        let align = if fd.decl.contains('[') {
            1
        } else {
            fd.size.clamp(1, 8)
        };
        at = at.div_ceil(align) * align;
        offsets.push(at);
        at += fd.size;
    }
    (offsets, at)
}

/// The format file's text.
pub fn format_file(fmt: &Format) -> String {
    use std::fmt::Write;
    let mut s = format!("name: {}\nID: {}\nformat:\n", fmt.name, fmt.id);
    let mut at = 0;
    for fd in COMMON {
        let _ = writeln!(
            s,
            "\tfield:{};\toffset:{at};\tsize:{};\tsigned:{};",
            fd.decl,
            fd.size,
            u8::from(fd.signed)
        );
        at += fd.size;
    }
    s.push('\n');
    let (offsets, _) = layout(fmt.fields);
    for (fd, off) in fmt.fields.iter().zip(offsets) {
        let _ = writeln!(
            s,
            "\tfield:{};\toffset:{off};\tsize:{};\tsigned:{};",
            fd.decl,
            fd.size,
            u8::from(fd.signed)
        );
    }
    let _ = writeln!(s, "\nprint fmt: {}", fmt.print_fmt);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layouts tracefs shows for v6.1's sched_switch and LISA's sched_pelt_se.
    #[test]
    fn layouts_match_the_kernel_structs() {
        let (off, size) = layout(EVENTS[SCHED_SWITCH].fields);
        assert_eq!(off, [8, 24, 28, 32, 40, 56, 60]);
        assert_eq!(size, 64);
        let (off, size) = layout(EVENTS[SCHED_PELT_SE].fields);
        assert_eq!(off, [8, 12, 76, 92, 96, 104, 112, 120]);
        assert_eq!(size, 128);
        let (off, _) = layout(EVENTS[TASK_RENAME].fields);
        assert_eq!(off, [8, 12, 28, 44]);
    }

    #[test]
    fn indices_name_their_events() {
        let names = [
            (SCHED_SWITCH, "sched_switch"),
            (SCHED_WAKEUP_NEW, "sched_wakeup_new"),
            (SCHED_PROCESS_EXIT, "sched_process_exit"),
            (SCHED_PELT_DL, "sched_pelt_dl"),
            (UCLAMP_UTIL_CFS, "uclamp_util_cfs"),
            (SCHED_OVERUTILIZED, "sched_overutilized"),
            (CPU_FREQUENCY, "cpu_frequency"),
            (TASK_RENAME, "task_rename"),
        ];
        for (i, name) in names {
            assert_eq!(EVENTS[i].name, name);
        }
        let mut ids: Vec<u16> = EVENTS.iter().map(|e| e.id).chain([PRINT.id]).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), EVENTS.len() + 1, "event IDs are unique");
    }
}

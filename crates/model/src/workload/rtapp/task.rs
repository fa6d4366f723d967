//! Task and phase objects: their properties and scheduling parameters.

use super::*;
use std::sync::LazyLock;

pub(super) const TASK_KEYS: &[&str] = &[
    "instance",
    "loop",
    "delay",
    "phases",
    "cpus",
    "nodes_membind",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "period",
    "deadline",
    "util_min",
    "util_max",
    "taskgroup",
    "latency_nice",
    "process",
    "working_set",
    "hrtimer_slack_ns",
];
pub(super) const PHASE_KEYS: &[&str] = &[
    "loop",
    "cpus",
    "nodes_membind",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    "taskgroup",
    "latency_nice",
];

/// The properties a task object may have: its keys and the legacy "runtime" (built once, not
/// per task).
static TASK_PROPS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    let mut keys = TASK_KEYS.to_vec();
    keys.push("runtime");
    keys
});
/// What the warning on an unknown key of a task object expects.
static TASK_EXPECTED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "an event ({EVENT_LIST}) or a task property ({})",
        TASK_KEYS.join(", ")
    )
});

/// The scheduling keys of one task or phase object, as written.
#[derive(Default)]
pub(super) struct SchedKeys {
    pub(super) policy: Option<Policy>,
    pub(super) priority: Option<i64>,
    pub(super) dl_runtime: Option<u64>,
    pub(super) dl_period: Option<u64>,
    pub(super) dl_deadline: Option<u64>,
    pub(super) util_min: Option<i32>,
    pub(super) util_max: Option<i32>,
}

/// A task's keys that are neither scheduling nor phases, as read.
struct TaskExtras {
    own_process: bool,
    working_set: u64,
    timer_slack_ns: Option<u64>,
    delay_ns: u64,
    loop_value: Option<i64>,
}

/// Every key `sched_keys` reads (the legacy task-level ones included).
const SCHED_KEYS: [&str; 10] = [
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "runtime",
    "period",
    "deadline",
    "util_min",
    "util_max",
];

impl Parser<'_> {
    pub(super) fn task(
        &mut self,
        t: usize,
        name: &str,
        m: &Members,
    ) -> Result<TaskSpec, InputError> {
        let base = join("tasks", name);
        let (p, events) = self.task_members(m, &base);
        // A bad property is recorded and its default used, so that the rest of the task
        // (its phases and events) is still checked.
        let instances = self.task_instances[t];
        let r = self.sched_keys(&p, &base, true);
        let sched = self.keep(r).unwrap_or_default();
        let params = self.task_params(&sched, &base);
        let r = self.cpus(&p, &base);
        let cpus = self.keep(r).flatten();
        let r = self.taskgroup(&p, &base);
        let taskgroup = self.keep(r).flatten();
        let r = self.latency_nice(&p, &base);
        let latency_nice = self.keep(r).flatten();
        let extras = self.task_extras(&p, &base);
        if taskgroup.is_some() && !params.policy.is_fair() {
            let e = self.taskgroup_policy_error(&base, params.policy);
            self.errors.push(e);
        }
        let (loop_count, phases) = match p.get("phases") {
            Some(v) => self.task_phases(t, name, v, &base, params, taskgroup, extras.loop_value)?,
            None => self.task_without_phases(t, name, &events, &base, extras.loop_value)?,
        };
        Ok(TaskSpec {
            name: name.to_string(),
            instances,
            loop_count,
            delay_ns: extras.delay_ns,
            params,
            cpus,
            util_min: sched.util_min,
            util_max: sched.util_max,
            taskgroup,
            latency_nice,
            own_process: extras.own_process,
            working_set: extras.working_set,
            timer_slack_ns: extras.timer_slack_ns,
            phases,
        })
    }

    /// A task object's properties, and its events when it has no phases (rt-app reads the
    /// events of a task with phases only inside them; beside "phases" an exact "runtime" is
    /// the legacy dl-runtime and other events are ignored, with a warning).
    fn task_members<'m>(
        &mut self,
        m: &'m Members,
        base: &str,
    ) -> (Props<'m>, Vec<&'m (String, Value, json::Pos)>) {
        let has_phases = m.iter().any(|(k, _, _)| k == "phases");
        let is_event = |k: &str| event_kind(k).is_some();
        let events: Vec<_> = if has_phases {
            Vec::new()
        } else {
            m.iter().filter(|(k, _, _)| is_event(k)).collect()
        };
        if has_phases {
            for (k, _, _) in m.iter().filter(|(k, _, _)| is_event(k) && k != "runtime") {
                self.warn(
                    &join(base, k),
                    format!("event {}", quote(k)),
                    "beside \"phases\" ignored, as rt-app reads events only inside phases",
                    "events inside \"phases\" when the task has phases",
                    None,
                );
            }
        }
        // rt-app's legacy grammar reads an exact task-level "runtime" as dl-runtime (the
        // last one, which is the one json-c keeps); without phases it is an event too.
        let legacy_runtime: Vec<_> = if has_phases {
            m.iter().filter(|(k, _, _)| k == "runtime").collect()
        } else {
            m.iter()
                .rev()
                .find(|(k, _, _)| k == "runtime")
                .into_iter()
                .collect()
        };
        let props = m
            .iter()
            .filter(|(k, _, _)| !is_event(k))
            .chain(legacy_runtime);
        let p = self.properties(props, base, &TASK_PROPS, &TASK_EXPECTED, true);
        (p, events)
    }

    /// A task's scheduling parameters from its keys, defaults for what is missing or bad.
    fn task_params(&mut self, sched: &SchedKeys, base: &str) -> SchedParams {
        let policy = sched.policy.unwrap_or(self.global.default_policy);
        let priority = match sched.priority {
            Some(pr) => {
                let r = self.check_priority(policy, pr, &join(base, "priority"));
                self.keep(r).unwrap_or(default_priority(policy))
            }
            None => default_priority(policy),
        };
        let dl_runtime = sched.dl_runtime.unwrap_or(0);
        let dl_period = sched.dl_period.unwrap_or(dl_runtime);
        let dl_deadline = sched.dl_deadline.unwrap_or(dl_period);
        let params = SchedParams {
            policy,
            priority,
            dl_runtime_ns: dl_runtime * 1000,
            dl_deadline_ns: dl_deadline * 1000,
            dl_period_ns: dl_period * 1000,
        };
        let r = self.check_deadline(&params, base);
        self.keep(r);
        params
    }

    /// The task-level keys that are neither scheduling nor phases.
    fn task_extras(&mut self, p: &Props, base: &str) -> TaskExtras {
        let own_process = match p.get("process") {
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                let e = self.mismatch(
                    v,
                    &join(base, "process"),
                    "true (a process of its own) or false (a thread of rt-app's)",
                );
                self.errors.push(e);
                false
            }
            None => false,
        };
        let working_set = match p.get("working_set") {
            Some(v) => {
                let place = join(base, "working_set");
                let r = self.int_in(v, &place, 0, 1 << 40, "a working set in bytes");
                self.keep(r).map_or(DEFAULT_WORKING_SET, |x| x as u64)
            }
            None => DEFAULT_WORKING_SET,
        };
        let timer_slack_ns = match p.get("hrtimer_slack_ns") {
            Some(v) => {
                let place = join(base, "hrtimer_slack_ns");
                let r = self.int_in(v, &place, 0, INT_MAX, "a timer slack in ns");
                self.keep(r).map(|x| x as u64)
            }
            None => None,
        };
        let delay_ns = match p.get("delay") {
            Some(v) => {
                let r = self.int_in(v, &join(base, "delay"), 0, INT_MAX, "a delay in µs");
                self.keep(r).unwrap_or(0) as u64 * 1000
            }
            None => 0,
        };
        let loop_value = match p.get("loop") {
            Some(v) => {
                let r = self.int_in(
                    v,
                    &join(base, "loop"),
                    i64::MIN,
                    i64::MAX,
                    "a loop count (-1: forever)",
                );
                self.keep(r)
            }
            None => None,
        };
        TaskExtras {
            own_process,
            working_set,
            timer_slack_ns,
            delay_ns,
            loop_value,
        }
    }

    /// A task's "phases" object: its loop count and phases. The policy and task group in
    /// force as the phases are first entered, in file order, resolve "same policy" and check
    /// task groups as rt-app does.
    #[allow(clippy::too_many_arguments)]
    fn task_phases(
        &mut self,
        t: usize,
        name: &str,
        v: &Value,
        base: &str,
        params: SchedParams,
        taskgroup: Option<usize>,
        loop_value: Option<i64>,
    ) -> Result<(i64, Vec<PhaseSpec>), InputError> {
        let place = join(base, "phases");
        let Value::Object(pm) = v else {
            return Err(self.mismatch(v, &place, "an object of phases"));
        };
        if pm.is_empty() {
            return Err(self.err(&place, "at least one phase", "an empty object"));
        }
        let mut cur = params;
        let mut cur_tg = taskgroup;
        let mut phases = Vec::with_capacity(pm.len());
        for (pname, pv, _) in pm {
            let pplace = join(&place, pname);
            let Value::Object(pmm) = pv else {
                let e = self.mismatch(pv, &pplace, "a phase object");
                self.errors.push(e);
                continue;
            };
            let r = self.phase(t, name, pname, pmm, &pplace, &mut cur);
            let Some(phase) = self.keep(r) else {
                continue;
            };
            cur_tg = phase.taskgroup.or(cur_tg);
            if cur_tg.is_some() && !cur.policy.is_fair() {
                let e = self.taskgroup_policy_error(&pplace, cur.policy);
                self.errors.push(e);
            }
            phases.push(phase);
        }
        Ok((normalize_task_loop(loop_value.unwrap_or(-1)), phases))
    }

    /// A task without "phases": its events are one phase. Its "loop" is the phase's count
    /// and the task runs the phase once; without "loop" it runs it forever.
    fn task_without_phases(
        &mut self,
        t: usize,
        name: &str,
        events: &[&(String, Value, json::Pos)],
        base: &str,
        loop_value: Option<i64>,
    ) -> Result<(i64, Vec<PhaseSpec>), InputError> {
        if events.is_empty() {
            return Err(self.err(base, format!("at least one event ({EVENT_LIST})"), "none"));
        }
        let (evs, labels) = self.events(t, name, events, base)?;
        let (task_loop, phase_loop) = match loop_value {
            Some(n) => (1, normalize_phase_loop(n)),
            None => (-1, 1),
        };
        let phase = PhaseSpec {
            name: name.to_string(),
            loop_count: phase_loop,
            events: evs,
            labels,
            cpus: None,
            params: None,
            util_min: None,
            util_max: None,
            taskgroup: None,
            latency_nice: None,
        };
        Ok((task_loop, vec![phase]))
    }

    pub(super) fn taskgroup_policy_error(&self, place: &str, policy: Policy) -> InputError {
        self.err(
            &join(place, "taskgroup"),
            "a task group only with SCHED_OTHER, SCHED_BATCH or SCHED_IDLE",
            format!("a task group with {}", policy.name()),
        )
    }

    /// One phase object. `cur` is the scheduling state in force when it is first entered;
    /// it is updated with what the phase sets.
    pub(super) fn phase(
        &mut self,
        t: usize,
        task_name: &str,
        name: &str,
        m: &Members,
        base: &str,
        cur: &mut SchedParams,
    ) -> Result<PhaseSpec, InputError> {
        let events: Vec<_> = m
            .iter()
            .filter(|(k, _, _)| event_kind(k).is_some())
            .collect();
        let props = m.iter().filter(|(k, _, _)| event_kind(k).is_none());
        let expected = format!(
            "an event ({EVENT_LIST}) or a phase property ({})",
            PHASE_KEYS.join(", ")
        );
        let p = self.properties(props, base, PHASE_KEYS, &expected, true);
        if events.is_empty() {
            return Err(self.err(base, format!("at least one event ({EVENT_LIST})"), "none"));
        }
        let sched = self.sched_keys(&p, base, false)?;
        let dl_given =
            sched.dl_runtime.is_some() || sched.dl_period.is_some() || sched.dl_deadline.is_some();
        let policy = sched.policy.unwrap_or(cur.policy);
        // rt-app changes policy and priority only when the phase names one of them (or, for
        // SCHED_DEADLINE, its parameters); otherwise the phase keeps what is in force.
        let params = if sched.policy.is_some()
            || sched.priority.is_some()
            || (dl_given && policy == Policy::Deadline)
        {
            let priority = match (sched.priority, sched.policy) {
                (Some(pr), _) => self.check_priority(policy, pr, &join(base, "priority"))?,
                (None, Some(pol)) => default_priority(pol),
                (None, None) => cur.priority,
            };
            // Runtime, period and deadline not given stay as they are while the policy
            // stays (rt-app asks the kernel to keep them); a new policy starts from 0.
            let old = if policy == cur.policy {
                *cur
            } else {
                SchedParams {
                    dl_runtime_ns: 0,
                    dl_deadline_ns: 0,
                    dl_period_ns: 0,
                    ..*cur
                }
            };
            let dl_runtime_ns = sched.dl_runtime.map_or(old.dl_runtime_ns, |us| us * 1000);
            let dl_period_ns = match sched.dl_period {
                Some(us) => us * 1000,
                None if sched.dl_runtime.is_some() => dl_runtime_ns,
                None => old.dl_period_ns,
            };
            let dl_deadline_ns = match sched.dl_deadline {
                Some(us) => us * 1000,
                None if sched.dl_runtime.is_some() || sched.dl_period.is_some() => dl_period_ns,
                None => old.dl_deadline_ns,
            };
            let params = SchedParams {
                policy,
                priority,
                dl_runtime_ns,
                dl_deadline_ns,
                dl_period_ns,
            };
            self.check_deadline(&params, base)?;
            *cur = params;
            Some(params)
        } else {
            None
        };
        let loop_count = match p.get("loop") {
            Some(v) => normalize_phase_loop(self.int_in(
                v,
                &join(base, "loop"),
                i64::MIN,
                i64::MAX,
                "a loop count (-1: forever)",
            )?),
            None => 1,
        };
        let (events, labels) = self.events(t, task_name, &events, base)?;
        Ok(PhaseSpec {
            name: name.to_string(),
            loop_count,
            events,
            labels,
            cpus: self.cpus(&p, base)?,
            params,
            util_min: sched.util_min,
            util_max: sched.util_max,
            taskgroup: self.taskgroup(&p, base)?,
            latency_nice: self.latency_nice(&p, base)?,
        })
    }

    pub(super) fn sched_keys(
        &self,
        p: &Props,
        base: &str,
        task_level: bool,
    ) -> Result<SchedKeys, InputError> {
        let mut s = SchedKeys::default();
        // Most tasks and phases set none of them: one pass over the few properties instead
        // of a hash look-up per key.
        if !p.keys().any(|k| SCHED_KEYS.contains(k)) {
            return Ok(s);
        }
        if let Some(v) = p.get("policy") {
            s.policy = Some(self.policy(v, &join(base, "policy"))?);
        }
        if let Some(v) = p.get("priority") {
            s.priority =
                Some(self.int_in(v, &join(base, "priority"), i64::MIN, i64::MAX, "a priority")?);
        }
        let us = |key: &str| -> Result<Option<u64>, InputError> {
            match p.get(key) {
                Some(v) => Ok(Some(
                    self.int_in(v, &join(base, key), 0, INT_MAX, "a time in µs")? as u64,
                )),
                None => Ok(None),
            }
        };
        s.dl_runtime = us("dl-runtime")?;
        s.dl_period = us("dl-period")?;
        s.dl_deadline = us("dl-deadline")?;
        if task_level {
            // rt-app's legacy grammar, read only when the dl- key is absent.
            s.dl_runtime = s.dl_runtime.or(us("runtime")?);
            s.dl_period = s.dl_period.or(us("period")?);
            s.dl_deadline = s.dl_deadline.or(us("deadline")?);
        }
        let clamp = |key: &str| -> Result<Option<i32>, InputError> {
            match p.get(key) {
                Some(v) => {
                    let c = self.int_in(
                        v,
                        &join(base, key),
                        -1,
                        1024,
                        "a utilization clamp, or -1 for unchanged",
                    )?;
                    Ok((c >= 0).then_some(c as i32))
                }
                None => Ok(None),
            }
        };
        s.util_min = clamp("util_min")?;
        s.util_max = clamp("util_max")?;
        if let (Some(lo), Some(hi)) = (s.util_min, s.util_max) {
            if lo > hi {
                return Err(self.err(
                    &join(base, "util_min"),
                    format!("util_min at most util_max ({hi})"),
                    lo.to_string(),
                ));
            }
        }
        Ok(s)
    }

    pub(super) fn check_priority(
        &self,
        policy: Policy,
        priority: i64,
        place: &str,
    ) -> Result<i32, InputError> {
        let (lo, hi, what) = match policy {
            Policy::Fifo | Policy::Rr => (1, 99, "an RT priority from 1 to 99"),
            Policy::Other | Policy::Batch | Policy::Idle => {
                (-20, 19, "a nice value from -20 to 19")
            }
            // rt-app passes sched_priority 0 for SCHED_DEADLINE whatever is written.
            Policy::Deadline => return Ok(0),
        };
        if (lo..=hi).contains(&priority) {
            Ok(priority as i32)
        } else {
            Err(self.err(
                place,
                format!("{what} for {}", policy.name()),
                priority.to_string(),
            ))
        }
    }

    pub(super) fn check_deadline(&self, p: &SchedParams, base: &str) -> Result<(), InputError> {
        if p.policy != Policy::Deadline {
            return Ok(());
        }
        if p.dl_runtime_ns == 0 {
            return Err(self.err(
                &join(base, "dl-runtime"),
                "a runtime above 0 µs for SCHED_DEADLINE",
                "0",
            ));
        }
        if !(p.dl_runtime_ns <= p.dl_deadline_ns && p.dl_deadline_ns <= p.dl_period_ns) {
            return Err(self.err(
                &join(base, "dl-deadline"),
                "dl-runtime ≤ dl-deadline ≤ dl-period",
                format!(
                    "runtime {} µs, deadline {} µs, period {} µs",
                    p.dl_runtime_ns / 1000,
                    p.dl_deadline_ns / 1000,
                    p.dl_period_ns / 1000
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn policy(&self, v: &Value, place: &str) -> Result<Policy, InputError> {
        const EXPECTED: &str =
            "SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR or SCHED_DEADLINE";
        match v {
            Value::Str(s) => match s.as_str() {
                "SCHED_OTHER" => Ok(Policy::Other),
                "SCHED_BATCH" => Ok(Policy::Batch),
                "SCHED_IDLE" => Ok(Policy::Idle),
                "SCHED_FIFO" => Ok(Policy::Fifo),
                "SCHED_RR" => Ok(Policy::Rr),
                "SCHED_DEADLINE" => Ok(Policy::Deadline),
                _ => Err(self.mismatch(v, place, EXPECTED)),
            },
            _ => Err(self.mismatch(v, place, EXPECTED)),
        }
    }

    pub(super) fn cpus(&self, p: &Props, base: &str) -> Result<Option<Vec<usize>>, InputError> {
        let Some(v) = p.get("cpus") else {
            return Ok(None);
        };
        let place = join(base, "cpus");
        let Value::Array(items) = v else {
            return Err(self.mismatch(v, &place, "an array of CPU numbers"));
        };
        if items.is_empty() {
            return Err(self.err(&place, "at least one CPU", "an empty array"));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, (c, _))| {
                // An affinity mask holds NR_CPUS CPUs; check_platform() checks the platform's.
                let max = crate::workload::NR_CPUS as i64 - 1;
                self.int_in(c, &format!("{place}[{i}]"), 0, max, "a CPU number")
                    .map(|c| c as usize)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    pub(super) fn taskgroup(&mut self, p: &Props, base: &str) -> Result<Option<usize>, InputError> {
        let Some(v) = p.get("taskgroup") else {
            return Ok(None);
        };
        let place = join(base, "taskgroup");
        let s = self.string(v, &place)?;
        if s.is_empty() {
            return Ok(None);
        }
        if !s.starts_with('/') {
            return Err(self.err_at(v, &place, "a task group path starting with '/'", quote(s)));
        }
        Ok(Some(self.taskgroups.named(s)))
    }

    pub(super) fn latency_nice(&self, p: &Props, base: &str) -> Result<Option<i32>, InputError> {
        match p.get("latency_nice") {
            Some(v) => Ok(Some(self.int_in(
                v,
                &join(base, "latency_nice"),
                -20,
                19,
                "a latency nice value",
            )? as i32)),
            None => Ok(None),
        }
    }
}

pub(super) fn default_priority(policy: Policy) -> i32 {
    match policy {
        Policy::Fifo | Policy::Rr => 10,
        _ => 0,
    }
}

/// rt-app stops the task loop when the counter equals `loop`, counting from 0 and wrapping
/// to 0 on overflow: any negative count runs forever, 0 runs nothing.
pub(super) fn normalize_task_loop(n: i64) -> i64 {
    if n < 0 {
        -1
    } else {
        n
    }
}

/// rt-app ends a phase when its counter, already incremented, equals `loop`: so 0 and any
/// negative count run forever.
pub(super) fn normalize_phase_loop(n: i64) -> i64 {
    if n <= 0 {
        -1
    } else {
        n
    }
}

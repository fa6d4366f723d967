//! The parser's state and the typed readers every part of the grammar uses.

use super::*;

pub(super) type Members = [(String, Value, json::Pos)];

/// An object's known keys (see `Parser::properties`). The keys are a file's own short
/// property names, read a dozen times per task, so they are hashed with FNV-1a (the `fnv`
/// crate) rather than `std`'s SipHash, whose cost dominated reading workloads of many tasks.
/// No map is iterated, so the hasher changes nothing but the speed.
pub(super) type Props<'v> = HashMap<&'v str, &'v Value, fnv::FnvBuildHasher>;

pub(super) struct Parser<'a> {
    pub(super) file: &'a str,
    /// The document, and the line and column of each of its values by address (built at
    /// the first error that names a value: errors are rare, and files can be large).
    root: &'a Value,
    positions: std::cell::OnceCell<HashMap<usize, json::Pos, fnv::FnvBuildHasher>>,
    pub(super) global: Global,
    /// Task name → index (FNV like `Props`: looked up, never iterated).
    pub(super) task_index: HashMap<String, usize, fnv::FnvBuildHasher>,
    pub(super) task_instances: Vec<u32>,
    pub(super) mutexes: Table,
    pub(super) conds: Table,
    pub(super) barriers: Table,
    pub(super) barrier_participants: Vec<u32>,
    /// (barrier, task, place) of each use, to refuse uses in forked tasks.
    pub(super) barrier_uses: Vec<(usize, usize, String)>,
    pub(super) timers: Table,
    pub(super) timer_specs: Vec<TimerSpec>,
    pub(super) sems: Table,
    pub(super) sem_specs: Vec<SemSpec>,
    pub(super) taskgroups: Table,
    /// Conditions something waits on, mutexes something locks, semaphores something posts.
    pub(super) cond_waited: HashSet<usize>,
    pub(super) mutex_locked: HashSet<usize>,
    pub(super) sem_posted: HashSet<usize>,
    pub(super) forked: HashSet<usize>,
    pub(super) deferred: Vec<Deferred>,
    pub(super) channels: Table,
    pub(super) channel_specs: Vec<ChannelSpec>,
    /// Channels something sends to, and receives from.
    pub(super) chan_sent: HashSet<usize>,
    pub(super) chan_received: HashSet<usize>,
    /// Task names in file order (those read in the first pass).
    pub(super) task_names: Vec<String>,
    pub(super) errors: Vec<InputError>,
    pub(super) warnings: Vec<Warning>,
}

impl<'a> Parser<'a> {
    pub(super) fn new(file: &'a str, root: &'a Value) -> Self {
        Parser {
            file,
            root,
            positions: std::cell::OnceCell::new(),
            global: Global {
                duration_ns: None,
                calibration: Calibration::None,
                default_policy: Policy::Other,
                pi_enabled: false,
                cumulative_slack: false,
                log_basename: "rt-app".to_string(),
                io_service_ns: DEFAULT_IO_SERVICE_US * 1000,
                mem_bytes_per_us: DEFAULT_MEM_BYTES_PER_US,
                mem_chase_ns_per_hop: DEFAULT_MEM_CHASE_NS_PER_HOP,
                generator: None,
                fork_limit: FORKS_LIMIT,
                threads_max: MAX_THREADS as u32,
                pm_qos_cpu_dma_latency_us: None,
                ftrace: crate::workload::FtraceCategories::NONE,
            },
            task_index: HashMap::default(),
            task_instances: Vec::new(),
            mutexes: Table::default(),
            conds: Table::default(),
            barriers: Table::default(),
            barrier_participants: Vec::new(),
            barrier_uses: Vec::new(),
            timers: Table::default(),
            timer_specs: Vec::new(),
            sems: Table::default(),
            sem_specs: Vec::new(),
            taskgroups: Table::default(),
            cond_waited: HashSet::new(),
            mutex_locked: HashSet::new(),
            sem_posted: HashSet::new(),
            forked: HashSet::new(),
            deferred: Vec::new(),
            channels: Table::default(),
            channel_specs: Vec::new(),
            chan_sent: HashSet::new(),
            chan_received: HashSet::new(),
            task_names: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// An error at the key path `place`.
    pub(super) fn err(
        &self,
        place: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> InputError {
        InputError::new(self.file, place, expected, found)
    }

    /// An error about the value `v` at the key path `place`: the place has its line and
    /// column too.
    pub(super) fn err_at(
        &self,
        v: &Value,
        place: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> InputError {
        let pos = self
            .positions
            .get_or_init(|| {
                let mut map = HashMap::default();
                index_positions(self.root, &mut map);
                map
            })
            .get(&(v as *const Value as usize))
            .copied();
        InputError::new(self.file, place::place(place, pos), expected, found)
    }

    /// The error of a value that is not what `expected` says: found is the value as written.
    pub(super) fn mismatch(
        &self,
        v: &Value,
        place: &str,
        expected: impl Into<String>,
    ) -> InputError {
        self.err_at(v, place, expected, v.describe())
    }

    /// Reads the whole file, recording every error it can recover from and every warning.
    pub(super) fn workload(mut self) -> Checked {
        let r = self.read_top(self.root);
        let workload = match r {
            Ok(specs) => self.finish(specs),
            Err(e) => {
                self.errors.push(e);
                None
            }
        };
        Checked {
            workload: if self.errors.is_empty() {
                workload
            } else {
                None
            },
            errors: self.errors,
            warnings: self.warnings,
        }
    }

    /// The top level and the tasks; an error returned here stops the reading (there is no
    /// task list to go on with).
    fn read_top(&mut self, root: &Value) -> Result<Vec<TaskSpec>, InputError> {
        let Value::Object(top) = root else {
            return Err(self.mismatch(root, "", "a JSON object"));
        };
        let top = self.properties(
            top,
            "",
            &["tasks", "global", "resources"],
            "a top-level key: tasks, global or resources",
            false,
        );
        if let Some(g) = top.get("global") {
            self.parse_global(g);
        }
        let Some(tasks) = top.get("tasks") else {
            return Err(self.err("top level", "a \"tasks\" object", "none"));
        };
        let Value::Object(tasks) = tasks else {
            return Err(self.mismatch(tasks, "tasks", "an object of tasks"));
        };
        if tasks.is_empty() {
            return Err(self.err("tasks", "at least one task", "an empty object"));
        }
        // First pass: names and instance counts, which fork, resume and barrier need before
        // the task that defines them has been read.
        let mut objects = Vec::with_capacity(tasks.len());
        // The instances of the tasks read so far (kept as a running sum: summing them per
        // task would be quadratic in the number of tasks).
        let mut total: i64 = 0;
        for (name, v, _) in tasks {
            let place = join("tasks", name);
            if self.task_index.contains_key(name.as_str()) {
                let e = self.err(
                    &place,
                    "each task name once",
                    format!("a second {}", quote(name)),
                );
                self.errors.push(e);
                continue;
            }
            let Value::Object(m) = v else {
                let e = self.mismatch(v, &place, "a task object");
                self.errors.push(e);
                continue;
            };
            // The last "instance", which is the one json-c keeps.
            let instances = match m.iter().rev().find(|(k, _, _)| k == "instance") {
                Some((_, v, _)) => {
                    let r = self.int_in(
                        v,
                        &format!("{place}.instance"),
                        0,
                        MAX_THREADS,
                        "a number of threads",
                    );
                    self.keep(r).unwrap_or(1) as u32
                }
                None => 1,
            };
            let max = i64::from(self.global.threads_max);
            let instances = if total + i64::from(instances) > max {
                let e = self.err(
                    &format!("{place}.instance"),
                    format!(
                        "at most {max} threads in all the tasks' instances (global.threads_max)"
                    ),
                    format!("{}", total + i64::from(instances)),
                );
                self.errors.push(e);
                0
            } else {
                instances
            };
            self.task_index
                .insert(name.clone(), self.task_instances.len());
            self.task_instances.push(instances);
            total += i64::from(instances);
            self.task_names.push(name.clone());
            objects.push((name, m));
        }
        let mut specs = Vec::with_capacity(objects.len());
        for (t, (name, m)) in objects.into_iter().enumerate() {
            let r = self.task(t, name, m);
            if let Some(spec) = self.keep(r) {
                specs.push(spec);
            }
        }
        Ok(specs)
    }

    /// The value of `r`, or `None` after recording its error, so that reading goes on and
    /// `check` reports every problem in one pass.
    pub(super) fn keep<T>(&mut self, r: Result<T, InputError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }

    /// Records a warning at `place`.
    pub(super) fn warn(
        &mut self,
        place: &str,
        found: String,
        effect: &str,
        expected: &str,
        suggestion: Option<&str>,
    ) {
        self.warnings.push(Warning {
            file: self.file.to_string(),
            place: place.to_string(),
            found,
            effect: effect.to_string(),
            expected: expected.to_string(),
            suggestion: suggestion.map(str::to_string),
        });
    }

    /// Splits an object's known keys into a map. An unknown key is a warning and is
    /// ignored, as rt-app ignores it (with a close known key, or event name when
    /// `events_too`, as the suggestion); of a repeated key the last counts, as json-c keeps
    /// the last, with a warning.
    pub(super) fn properties<'v>(
        &mut self,
        m: impl IntoIterator<Item = &'v (String, Value, json::Pos)>,
        base: &str,
        allowed: &[&str],
        expected: &str,
        events_too: bool,
    ) -> Props<'v> {
        let mut map = Props::default();
        for (k, v, _) in m {
            if !allowed.contains(&k.as_str()) {
                let mut candidates = allowed.to_vec();
                if events_too {
                    candidates.extend(EVENT_NAMES);
                }
                let suggestion = did_you_mean(k, &candidates);
                self.warn(
                    &join(base, k),
                    format!("unknown key {}", quote(k)),
                    "ignored, as rt-app ignores it",
                    expected,
                    suggestion,
                );
                continue;
            }
            if map.insert(k.as_str(), v).is_some() {
                self.warn(
                    &join(base, k),
                    format!("a second {}", quote(k)),
                    "replaces the first, as json-c keeps the last",
                    "each property once",
                    None,
                );
            }
        }
        map
    }

    /// The members of an event's object value (unknown keys are warnings, as above).
    pub(super) fn object<'v>(
        &mut self,
        v: &'v Value,
        place: &str,
        allowed: &[&str],
        shape: &str,
    ) -> Result<Props<'v>, InputError> {
        let Value::Object(m) = v else {
            return Err(self.mismatch(v, place, format!("an object {shape}")));
        };
        Ok(self.properties(
            m,
            place,
            allowed,
            &format!("one of the keys {}", allowed.join(", ")),
            false,
        ))
    }

    /// An integer in `lo..=hi`, called `what`; any other value is an error saying the range.
    pub(super) fn int_in(
        &self,
        v: &Value,
        place: &str,
        lo: i64,
        hi: i64,
        what: &str,
    ) -> Result<i64, InputError> {
        match v {
            Value::Int(i) if (lo..=hi).contains(i) => Ok(*i),
            _ => Err(self.mismatch(v, place, place::integer(what, lo.into(), hi.into()))),
        }
    }

    pub(super) fn boolean(&self, v: &Value, place: &str) -> Result<bool, InputError> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.mismatch(v, place, "true or false")),
        }
    }

    pub(super) fn string<'v>(&self, v: &'v Value, place: &str) -> Result<&'v str, InputError> {
        match v {
            Value::Str(s) => Ok(s),
            _ => Err(self.mismatch(v, place, "a string")),
        }
    }
}

/// Every value's line and column by its address: a member's is its key's.
fn index_positions(v: &Value, map: &mut HashMap<usize, json::Pos, fnv::FnvBuildHasher>) {
    match v {
        Value::Object(members) => {
            for (_, v, pos) in members {
                map.insert(v as *const Value as usize, *pos);
                index_positions(v, map);
            }
        }
        Value::Array(items) => {
            for (v, pos) in items {
                map.insert(v as *const Value as usize, *pos);
                index_positions(v, map);
            }
        }
        _ => {}
    }
}

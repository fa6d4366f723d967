//! Events: recognised by key prefix, each read into an `Event` with its resources resolved.

use super::*;

/// The event kinds, found by key prefix in the order rt-app's parser tries them (so that
/// `runtime` is not `run`, and `memrun` is not `mem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Run,
    Runtime,
    Sleep,
    MemRun,
    Mem,
    IoRun,
    Lock,
    Unlock,
    Signal,
    Broad,
    Wait,
    Sync,
    Barrier,
    Timer,
    Resume,
    Suspend,
    Yield,
    Fork,
    SemPost,
    SemWait,
    Send,
    Recv,
}

pub(super) fn event_kind(key: &str) -> Option<Kind> {
    const PREFIXES: [(&str, Kind); 22] = [
        ("runtime", Kind::Runtime),
        ("run", Kind::Run),
        ("sleep", Kind::Sleep),
        ("memrun", Kind::MemRun),
        ("mem", Kind::Mem),
        ("iorun", Kind::IoRun),
        ("lock", Kind::Lock),
        ("unlock", Kind::Unlock),
        ("signal", Kind::Signal),
        ("broad", Kind::Broad),
        ("wait", Kind::Wait),
        ("sync", Kind::Sync),
        ("barrier", Kind::Barrier),
        ("timer", Kind::Timer),
        ("resume", Kind::Resume),
        ("suspend", Kind::Suspend),
        ("yield", Kind::Yield),
        ("fork", Kind::Fork),
        ("sem_post", Kind::SemPost),
        ("sem_wait", Kind::SemWait),
        ("send", Kind::Send),
        ("recv", Kind::Recv),
    ];
    PREFIXES
        .iter()
        .find(|(p, _)| key.starts_with(p))
        .map(|&(_, k)| k)
}

/// The event names, for "did you mean".
pub(super) const EVENT_NAMES: [&str; 22] = [
    "run", "runtime", "sleep", "timer", "lock", "unlock", "wait", "signal", "broad", "sync",
    "barrier", "suspend", "resume", "yield", "fork", "mem", "memrun", "iorun", "sem_post",
    "sem_wait", "send", "recv",
];

pub(super) const EVENT_LIST: &str =
    "run, runtime, sleep, timer, lock, unlock, wait, signal, broad, \
                          sync, barrier, suspend, resume, yield, fork, mem, memrun, iorun, \
                          sem_post, sem_wait, send, recv";

/// How rt-app's parser names an event (`event_data_t.name`, 48 bytes) and its `resource_t`,
/// for the `rtapp_event` trace line. rt-app appends its thread data's address in hex to the
/// names it makes per thread (`mem…`, `memrun_…`, `unique…` timers); that address is left
/// out here, as it is not reproducible. `send`/`recv` are not rt-app's: type 0 (unknown).
fn label(kind: Kind, key: &str, v: &Value, task_name: &str) -> EventLabel {
    const NAME: usize = 48;
    fn s(v: Option<&Value>) -> &str {
        match v {
            Some(Value::Str(s)) => s.as_str(),
            _ => "unknown",
        }
    }
    let field = |k: &str| match v {
        Value::Object(m) => m.iter().rev().find(|(n, ..)| n == k).map(|(_, v, _)| v),
        _ => None,
    };
    let value = s(Some(v));
    // strncpy(name, src, 47) for plain names; snprintf(name, 47, …) for composed ones.
    let (type_id, desc, max) = match kind {
        Kind::Run => (6, key.to_string(), NAME - 1),
        Kind::Runtime => (19, key.to_string(), NAME - 1),
        Kind::Sleep => (5, key.to_string(), NAME - 1),
        Kind::Yield => (20, key.to_string(), NAME - 1),
        Kind::Mem => (14, "mem".to_string(), NAME - 1),
        Kind::IoRun => (18, "mem".to_string(), NAME - 1),
        Kind::MemRun => {
            let int = |k| match field(k) {
                Some(Value::Int(n)) => *n,
                _ => 0,
            };
            let ty = s(field("type"));
            let encoded = match ty {
                "chase" => {
                    let stride = field("stride").map_or(64, |_| int("stride"));
                    let random = s(field("pattern")) != "sequential";
                    let p = if random { 'r' } else { 's' };
                    format!("memrun_{p}_{stride}_{}", int("size"))
                }
                _ => format!("memrun_{ty}_{}", int("size")),
            };
            let id = match ty {
                "chase" => 17,
                "read" => 16,
                _ => 15,
            };
            let name = field("ref").map_or(encoded, |r| s(Some(r)).to_string());
            (id, name, NAME - 1)
        }
        Kind::Lock | Kind::Unlock | Kind::Signal | Kind::Broad | Kind::Barrier | Kind::Fork => {
            let id = match kind {
                Kind::Lock => 8,
                Kind::Unlock => 9,
                Kind::Signal => 3,
                Kind::Broad => 4,
                Kind::Barrier => 21,
                _ => 22,
            };
            (id, format!("{key}:{value}"), NAME - 2)
        }
        Kind::SemPost | Kind::SemWait => {
            let id = if kind == Kind::SemPost { 24 } else { 23 };
            (id, format!("{key}:{value}"), NAME - 2)
        }
        Kind::Wait | Kind::Sync => {
            let id = if kind == Kind::Wait { 2 } else { 7 };
            let desc = format!("{key}:{}:{}", s(field("ref")), s(field("mutex")));
            (id, desc, NAME - 2)
        }
        Kind::Timer => {
            let r = s(field("ref"));
            let id = if r.starts_with("unique") { 11 } else { 10 };
            (id, format!("{key}:{r}"), NAME - 2)
        }
        Kind::Resume => (13, format!("{key}:{value}:{value}"), NAME - 2),
        Kind::Suspend => (12, format!("{key}:{task_name}:{task_name}"), NAME - 2),
        Kind::Send | Kind::Recv => (0, format!("{key}:{}", s(field("channel"))), NAME - 2),
    };
    let mut desc = desc;
    if desc.len() > max {
        let mut end = max;
        while !desc.is_char_boundary(end) {
            end -= 1;
        }
        desc.truncate(end);
    }
    EventLabel { type_id, desc }
}

impl Parser<'_> {
    pub(super) fn events(
        &mut self,
        t: usize,
        task_name: &str,
        entries: &[&(String, Value, json::Pos)],
        base: &str,
    ) -> Result<(Vec<Event>, Arc<[EventLabel]>), InputError> {
        let mut barriers_here = HashSet::new();
        let mut out = Vec::with_capacity(entries.len());
        let mut labels = Vec::with_capacity(entries.len());
        for (key, v, _) in entries.iter().copied() {
            let place = join(base, key);
            let kind = event_kind(key).expect("callers pass events only");
            // A bad event is recorded and the next one read.
            let r = self.event(t, task_name, kind, v, &place);
            let Some(ev) = self.keep(r) else {
                continue;
            };
            labels.push(label(kind, key, v, task_name));
            if let Event::Barrier { barrier } = ev {
                // rt-app counts one more thread per use, so a second use in one task waits for
                // a thread that never comes.
                if !barriers_here.insert(barrier) {
                    let e = self.err(
                        &place,
                        "each barrier once per task (every use counts one more thread to wait for)",
                        format!("a second use of {}", quote(&self.barriers.names[barrier])),
                    );
                    self.errors.push(e);
                }
            }
            out.push(ev);
        }
        Ok((out, labels.into()))
    }

    pub(super) fn event(
        &mut self,
        t: usize,
        task_name: &str,
        kind: Kind,
        v: &Value,
        place: &str,
    ) -> Result<Event, InputError> {
        let duration = |p: &Self| {
            p.int_in(v, place, 0, INT_MAX, "a duration in µs")
                .map(|d| d as u64)
        };
        Ok(match kind {
            Kind::Run => Event::Run {
                us: duration(self)?,
            },
            Kind::Runtime => Event::Runtime {
                us: duration(self)?,
            },
            Kind::Sleep => Event::Sleep {
                us: duration(self)?,
            },
            Kind::Mem => Event::Mem {
                bytes: self.int_in(v, place, 0, INT_MAX, "a number of bytes")? as u64,
            },
            Kind::MemRun => self.memrun(v, place)?,
            Kind::IoRun => self.iorun(v, place)?,
            Kind::Lock | Kind::Unlock => {
                let name = self.string(v, place)?;
                let mutex = self.mutexes.named(name);
                if kind == Kind::Lock {
                    self.mutex_locked.insert(mutex);
                    Event::Lock { mutex }
                } else {
                    self.deferred.push(Deferred::Unlock {
                        mutex,
                        name: name.to_string(),
                        place: place.to_string(),
                    });
                    Event::Unlock { mutex }
                }
            }
            Kind::Signal | Kind::Broad => {
                let name = self.string(v, place)?;
                let cond = self.conds.named(name);
                self.deferred.push(Deferred::Signal {
                    cond,
                    name: name.to_string(),
                    place: place.to_string(),
                });
                if kind == Kind::Signal {
                    Event::Signal { cond }
                } else {
                    Event::Broadcast { cond }
                }
            }
            Kind::Wait | Kind::Sync => {
                let m = self.object(
                    v,
                    place,
                    &["ref", "mutex"],
                    "{\"ref\": condition, \"mutex\": mutex}",
                )?;
                let (Some(r), Some(mx)) = (m.get("ref"), m.get("mutex")) else {
                    return Err(self.mismatch(
                        v,
                        place,
                        "both \"ref\" (a condition) and \"mutex\"",
                    ));
                };
                let r = self.string(r, &join(place, "ref"))?;
                let mx = self.string(mx, &join(place, "mutex"))?;
                let cond = self.conds.named(r);
                let mutex = self.mutexes.named(mx);
                self.cond_waited.insert(cond);
                self.mutex_locked.insert(mutex);
                if kind == Kind::Wait {
                    Event::Wait { cond, mutex }
                } else {
                    Event::Sync { cond, mutex }
                }
            }
            Kind::Barrier => {
                let name = self.string(v, place)?;
                let barrier = self.barriers.named(name);
                if barrier == self.barrier_participants.len() {
                    self.barrier_participants.push(0);
                }
                self.barrier_participants[barrier] =
                    self.barrier_participants[barrier].saturating_add(self.task_instances[t]);
                self.barrier_uses.push((barrier, t, place.to_string()));
                Event::Barrier { barrier }
            }
            Kind::Timer => self.timer(t, v, place)?,
            Kind::Suspend => {
                // The value is ignored: a thread suspends on its own task's condition.
                let cond = self.conds.named(task_name);
                let mutex = self.mutexes.named(task_name);
                self.cond_waited.insert(cond);
                self.mutex_locked.insert(mutex);
                Event::Suspend { cond, mutex }
            }
            Kind::Resume => {
                let name = self.string(v, place)?;
                let cond = self.conds.named(name);
                let mutex = self.mutexes.named(name);
                self.deferred.push(Deferred::Resume {
                    cond,
                    name: name.to_string(),
                    place: place.to_string(),
                });
                Event::Resume { cond, mutex }
            }
            Kind::Yield => Event::Yield,
            Kind::Fork => {
                let name = self.string(v, place)?;
                let Some(&task) = self.task_index.get(name) else {
                    return Err(self.err_at(v, place, "the name of a task to fork", quote(name)));
                };
                self.forked.insert(task);
                Event::Fork { task }
            }
            Kind::Send | Kind::Recv => self.channel_event(kind, v, place)?,
            Kind::SemPost | Kind::SemWait => {
                let name = self.string(v, place)?;
                let sem = self.semaphore(name);
                if kind == Kind::SemPost {
                    self.sem_posted.insert(sem);
                    Event::SemPost { sem }
                } else {
                    self.deferred.push(Deferred::SemWait {
                        sem,
                        name: name.to_string(),
                        place: place.to_string(),
                    });
                    Event::SemWait { sem }
                }
            }
        })
    }

    /// The channel `name`, declared with the defaults if `global.channels` did not.
    pub(super) fn channel(&mut self, name: &str) -> usize {
        let n = self.channel_specs.len();
        let chan = self.channels.named(name);
        if chan == n {
            self.channel_specs.push(ChannelSpec {
                name: name.to_string(),
                kind: ChannelKind::Pipe,
                capacity: DEFAULT_CHANNEL_CAPACITY,
            });
        }
        chan
    }

    /// `send`/`recv` (extension).
    pub(super) fn channel_event(
        &mut self,
        kind: Kind,
        v: &Value,
        place: &str,
    ) -> Result<Event, InputError> {
        let send = kind == Kind::Send;
        let m = self.object(
            v,
            place,
            &["channel", "bytes"],
            "{\"channel\": name, \"bytes\": N}",
        )?;
        let Some(name) = m.get("channel") else {
            return Err(self.err(place, "a \"channel\" key", "none"));
        };
        let name = self.string(name, &join(place, "channel"))?;
        let chan = self.channel(name);
        let spec = &self.channel_specs[chan];
        let (stream, capacity, drops) = (
            spec.kind.is_stream(),
            spec.capacity,
            spec.kind.drops_when_full(),
        );
        let bplace = join(place, "bytes");
        let bytes = match m.get("bytes") {
            Some(b) => Some(self.int_in(b, &bplace, 0, INT_MAX, "a number of bytes")? as u64),
            None => None,
        };
        self.deferred.push(Deferred::Channel {
            chan,
            send,
            place: place.to_string(),
        });
        if send {
            self.chan_sent.insert(chan);
            let Some(bytes) = bytes else {
                return Err(self.err(place, "a \"bytes\" key", "none"));
            };
            if stream && bytes == 0 {
                return Err(self.err(&bplace, "at least 1 byte on a stream channel", "0"));
            }
            if !drops && bytes > capacity {
                return Err(self.err(
                    &bplace,
                    format!("at most the channel's capacity ({capacity}): a bigger message would block forever"),
                    bytes.to_string(),
                ));
            }
            Ok(Event::Send { chan, bytes })
        } else {
            self.chan_received.insert(chan);
            let max = bytes.unwrap_or(u64::MAX);
            if stream && max == 0 {
                return Err(self.err(&bplace, "at least 1 byte on a stream channel", "0"));
            }
            Ok(Event::Recv { chan, max })
        }
    }

    pub(super) fn semaphore(&mut self, name: &str) -> usize {
        let n = self.sems.names.len();
        let sem = self.sems.named(name);
        if sem == n {
            let shown = format!("sem:{name}");
            let mutex = self.mutexes.intern(SEMAPHORE, name, &shown);
            let cond = self.conds.intern(SEMAPHORE, name, &shown);
            self.sem_specs.push(SemSpec {
                name: name.to_string(),
                mutex,
                cond,
            });
        }
        sem
    }

    pub(super) fn timer(&mut self, t: usize, v: &Value, place: &str) -> Result<Event, InputError> {
        let m = self.object(
            v,
            place,
            &["ref", "period", "mode"],
            "{\"ref\": name, \"period\": µs, \"mode\": \"relative\" or \"absolute\"}",
        )?;
        let name = match m.get("ref") {
            Some(r) => self.string(r, &join(place, "ref"))?,
            None => "unknown",
        };
        let period_us = match m.get("period") {
            Some(p) => {
                let place = join(place, "period");
                self.int_in(p, &place, 0, INT_MAX, "a period in µs")? as u64
            }
            None => 0,
        };
        let absolute = match m.get("mode") {
            None => false,
            Some(Value::Str(s)) if s == "relative" => false,
            Some(Value::Str(s)) if s == "absolute" => true,
            Some(other) => {
                return Err(self.mismatch(
                    other,
                    &join(place, "mode"),
                    "\"relative\" or \"absolute\"",
                ))
            }
        };
        let unique_to = name.starts_with("unique").then_some(t);
        // Shared timers live in space 0, each task's unique timers in space task + 1.
        let space = unique_to.map_or(0, |t| t + 1);
        let n = self.timer_specs.len();
        let timer = self.timers.intern(space, name, name);
        if timer == n {
            self.timer_specs.push(TimerSpec {
                name: name.to_string(),
                unique_to,
                absolute: false,
            });
        }
        // As in rt-app the mode belongs to the timer: one absolute use makes it absolute.
        self.timer_specs[timer].absolute |= absolute;
        Ok(Event::Timer { timer, period_us })
    }

    pub(super) fn memrun(&mut self, v: &Value, place: &str) -> Result<Event, InputError> {
        let m = self.object(
            v,
            place,
            &["type", "size", "count", "stride", "pattern", "ref"],
            "{\"type\", \"size\", \"count\", …}",
        )?;
        let get = |k: &str| {
            m.get(k)
                .copied()
                .ok_or_else(|| self.err(place, format!("a \"{k}\" key"), "none"))
        };
        let ty = self.string(get("type")?, &join(place, "type"))?;
        self.int_in(
            get("size")?,
            &join(place, "size"),
            1,
            INT_MAX,
            "a buffer size in bytes",
        )?;
        let count =
            self.int_in(get("count")?, &join(place, "count"), 0, INT_MAX, "a count")? as u64;
        if let Some(s) = m.get("stride") {
            self.int_in(s, &join(place, "stride"), 1, INT_MAX, "a stride in bytes")?;
        }
        if let Some(p) = m.get("pattern") {
            let p = self.string(p, &join(place, "pattern"))?;
            if p != "random" && p != "sequential" {
                return Err(self.err(
                    &join(place, "pattern"),
                    "\"random\" or \"sequential\"",
                    quote(p),
                ));
            }
        }
        if let Some(r) = m.get("ref") {
            self.string(r, &join(place, "ref"))?;
        }
        match ty {
            "read" | "write" => Ok(Event::Mem { bytes: count }),
            "chase" => Ok(Event::MemChase { hops: count }),
            _ => Err(self.err(
                &join(place, "type"),
                "\"read\", \"write\" or \"chase\"",
                quote(ty),
            )),
        }
    }

    pub(super) fn iorun(&mut self, v: &Value, place: &str) -> Result<Event, InputError> {
        if let Value::Object(_) = v {
            let m = self.object(
                v,
                place,
                &["bytes", "service_us"],
                "{\"bytes\": N, \"service_us\": µs}",
            )?;
            let bytes = match m.get("bytes") {
                Some(b) => {
                    self.int_in(b, &join(place, "bytes"), 0, INT_MAX, "a number of bytes")? as u64
                }
                None => 0,
            };
            let service_ns = match m.get("service_us") {
                Some(s) => {
                    self.int_in(
                        s,
                        &join(place, "service_us"),
                        0,
                        INT_MAX,
                        "a service time in µs",
                    )? as u64
                        * 1000
                }
                None => self.global.io_service_ns,
            };
            return Ok(Event::IoRun { bytes, service_ns });
        }
        let bytes = self.int_in(
            v,
            place,
            0,
            INT_MAX,
            "a number of bytes, or {\"bytes\": N, \"service_us\": µs}",
        )? as u64;
        Ok(Event::IoRun {
            bytes,
            service_ns: self.global.io_service_ns,
        })
    }
}

//! The `global` object and the `channels` extension in it.

use super::*;

pub(super) const GLOBAL_KEYS: &[&str] = &[
    "duration",
    "calibration",
    "default_policy",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
    "io_service_us",
    "mem_bytes_per_us",
    "mem_chase_ns_per_hop",
    "generator",
    "pm_qos_cpu_dma_latency_us",
    "fork_limit",
    "threads_max",
    "channels",
];

impl Parser<'_> {
    /// The `global` object; a bad value is recorded and the other keys are still read.
    pub(super) fn parse_global(&mut self, g: &Value) {
        let Value::Object(m) = g else {
            let e = self.mismatch(g, "global", "an object");
            self.errors.push(e);
            return;
        };
        let p = self.properties(
            m,
            "global",
            GLOBAL_KEYS,
            "a global key (duration, calibration, default_policy, …)",
            false,
        );
        // In file order (of the occurrence that counts), so that messages come in a
        // reproducible order.
        for (k, v, _) in m {
            if !p.get(k.as_str()).is_some_and(|&kept| std::ptr::eq(kept, v)) {
                continue;
            }
            let place = format!("global.{k}");
            let r = self.global_key(k, v, &place);
            self.keep(r);
        }
    }

    fn global_key(&mut self, k: &str, v: &Value, place: &str) -> Result<(), InputError> {
        let place = place.to_string();
        match k {
            "duration" => {
                let s = self.int_in(v, &place, i64::MIN, INT_MAX, "a duration in seconds")?;
                self.global.duration_ns = (s > 0).then(|| s as u64 * 1_000_000_000);
            }
            "calibration" => self.global.calibration = self.calibration(v, &place)?,
            "default_policy" => self.global.default_policy = self.policy(v, &place)?,
            "pi_enabled" => self.global.pi_enabled = self.boolean(v, &place)?,
            "cumulative_slack" => self.global.cumulative_slack = self.boolean(v, &place)?,
            "log_basename" => self.global.log_basename = self.string(v, &place)?.to_string(),
            "lock_pages" | "gnuplot" => {
                self.boolean(v, &place)?;
            }
            "logdir" | "io_device" => {
                self.string(v, &place)?;
            }
            "log_size" => {
                if !matches!(v, Value::Int(_) | Value::Str(_)) {
                    return Err(self.mismatch(
                        v,
                        &place,
                        "a size in MB or \"file\", \"disable\" or \"auto\"",
                    ));
                }
            }
            "ftrace" => {
                use crate::workload::FtraceCategories;
                const EXPECTED: &str =
                    "ftrace categories: main, task, loop, event, stats or none, comma-separated";
                self.global.ftrace = match v {
                    // Deprecated in rt-app: true enables every category.
                    Value::Bool(true) => FtraceCategories::ALL,
                    Value::Bool(false) => FtraceCategories::NONE,
                    Value::Str(s) => FtraceCategories::parse(s)
                        .ok_or_else(|| self.mismatch(v, &place, EXPECTED))?,
                    _ => return Err(self.mismatch(v, &place, EXPECTED)),
                };
            }
            "mem_buffer_size" => {
                self.int_in(v, &place, 1, INT_MAX, "a buffer size in bytes")?;
            }
            "generator" => {
                let name = self.string(v, &place)?;
                let g = Generator::parse(name).ok_or_else(|| {
                    self.err_at(
                        v,
                        &place,
                        format!("one of {}", Generator::NAMES.join(", ")),
                        quote(name),
                    )
                })?;
                self.global.generator = Some(g);
            }
            "fork_limit" => {
                self.global.fork_limit = self.int_in(
                    v,
                    &place,
                    0,
                    u32::MAX as i64,
                    "a number of forks (0: no limit)",
                )? as u32;
            }
            "threads_max" => {
                self.global.threads_max = self.int_in(
                    v,
                    &place,
                    1,
                    MAX_THREADS,
                    "a number of threads (kernel.threads-max)",
                )? as u32;
            }
            "pm_qos_cpu_dma_latency_us" => {
                self.global.pm_qos_cpu_dma_latency_us = Some(self.int_in(
                    v,
                    &place,
                    0,
                    i32::MAX as i64,
                    "a latency limit in µs (a write to /dev/cpu_dma_latency)",
                )? as u64);
            }
            "io_service_us" => {
                self.global.io_service_ns =
                    self.int_in(v, &place, 0, INT_MAX, "a service time in µs")? as u64 * 1000;
            }
            "mem_bytes_per_us" => {
                self.global.mem_bytes_per_us =
                    self.int_in(v, &place, 1, INT_MAX, "a rate in bytes per µs")? as u64;
            }
            "mem_chase_ns_per_hop" => {
                self.global.mem_chase_ns_per_hop =
                    self.int_in(v, &place, 0, INT_MAX, "a time in ns")? as u64;
            }
            "channels" => self.parse_channels(v, &place)?,
            _ => unreachable!("properties() admits only GLOBAL_KEYS"),
        }
        Ok(())
    }

    pub(super) fn calibration(&self, v: &Value, place: &str) -> Result<Calibration, InputError> {
        const EXPECTED: &str = "\"CPUn\" or an integer number of ns per loop";
        match v {
            // rt-app calibrates CPU0 when the number is 0.
            Value::Int(0) => Ok(Calibration::Cpu(0)),
            Value::Int(n) if (1..=INT_MAX).contains(n) => Ok(Calibration::LoopNs(*n as u64)),
            Value::Str(s) => s
                .strip_prefix("CPU")
                .filter(|d| !d.is_empty() && d.len() <= 6 && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse().ok())
                .map(Calibration::Cpu)
                .ok_or_else(|| self.mismatch(v, place, EXPECTED)),
            _ => Err(self.mismatch(v, place, EXPECTED)),
        }
    }

    /// `global.channels`: `{"name": {"kind": K, "capacity": bytes}}`.
    pub(super) fn parse_channels(&mut self, v: &Value, place: &str) -> Result<(), InputError> {
        let Value::Object(m) = v else {
            return Err(self.mismatch(
                v,
                place,
                "an object of channels {\"name\": {\"kind\", \"capacity\"}}",
            ));
        };
        for (name, cv, _) in m {
            let cplace = join(place, name);
            if self.channels.index.contains_key(&(USER, name.clone())) {
                return Err(self.err_at(
                    cv,
                    &cplace,
                    "each channel once",
                    format!("a second {}", quote(name)),
                ));
            }
            let p = self.object(
                cv,
                &cplace,
                &["kind", "capacity"],
                "{\"kind\": pipe|unix|tcp|udp|futex, \"capacity\": bytes}",
            )?;
            let kind = match p.get("kind") {
                Some(k) => {
                    let kplace = join(&cplace, "kind");
                    let s = self.string(k, &kplace)?;
                    ChannelKind::parse(s).ok_or_else(|| {
                        self.err_at(
                            k,
                            &kplace,
                            format!("one of {}", ChannelKind::NAMES.join(", ")),
                            quote(s),
                        )
                    })?
                }
                None => ChannelKind::Pipe,
            };
            // A channel that blocks its writers must hold at least one byte.
            let min = u64::from(!kind.drops_when_full());
            let capacity = match p.get("capacity") {
                Some(c) => self.int_in(
                    c,
                    &join(&cplace, "capacity"),
                    min as i64,
                    INT_MAX,
                    if min == 1 {
                        "a capacity in bytes (at least 1)"
                    } else {
                        "a capacity in bytes"
                    },
                )? as u64,
                None => DEFAULT_CHANNEL_CAPACITY,
            };
            let chan = self.channel(name);
            self.channel_specs[chan].kind = kind;
            self.channel_specs[chan].capacity = capacity;
        }
        Ok(())
    }
}

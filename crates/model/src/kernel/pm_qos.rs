//! The CPU latency QoS of kernel/power/qos.c: every open `/dev/cpu_dma_latency` holds a
//! request (the value written, µs); the limit is the smallest request, or
//! `PM_QOS_CPU_LATENCY_DEFAULT_VALUE` with none. cpuidle's governors never pick a state whose
//! exit latency exceeds it (`cpuidle_governor_latency_req()`; the per-CPU resume-latency
//! request is left at "no constraint").

/// `PM_QOS_CPU_LATENCY_DEFAULT_VALUE`: 2000 s, in µs.
pub const PM_QOS_CPU_LATENCY_DEFAULT_VALUE: u64 = 2_000 * 1_000_000;

/// The global CPU latency constraint.
#[derive(Debug, Clone, Default)]
pub struct CpuLatencyQos {
    requests: Vec<u64>,
}

impl CpuLatencyQos {
    /// `cpu_latency_qos_add_request()`: an open of `/dev/cpu_dma_latency` and a write of
    /// `value_us`.
    pub fn add_request(&mut self, value_us: u64) {
        self.requests.push(value_us);
    }

    /// `cpu_latency_qos_limit()`, µs.
    pub fn limit_us(&self) -> u64 {
        self.requests
            .iter()
            .copied()
            .min()
            .unwrap_or(PM_QOS_CPU_LATENCY_DEFAULT_VALUE)
    }

    /// `cpuidle_governor_latency_req()`, ns.
    pub fn latency_req_ns(&self) -> u64 {
        self.limit_us() * 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_smallest_request() {
        let mut q = CpuLatencyQos::default();
        assert_eq!(q.limit_us(), PM_QOS_CPU_LATENCY_DEFAULT_VALUE);
        q.add_request(100);
        q.add_request(0);
        q.add_request(30);
        assert_eq!(q.latency_req_ns(), 0);
    }
}

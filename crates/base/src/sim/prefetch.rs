//! A host-cache hint: start loading the cache line that holds a value the engine will read
//! soon. With tens of thousands of tasks, a task's state has left the host's caches by the
//! time the scheduler picks it again, and each of its scattered fields costs a memory
//! round trip; asking for them one pick ahead overlaps those trips with the work between
//! two picks. A hint only: it changes no value, so results are the same bytes with or
//! without it (and on hosts where it is a no-op).

/// Ask the host to bring the line holding `value` into its caches.
#[inline(always)]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault; the address is
    // that of a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

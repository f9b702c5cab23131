//! A hint to the processor: start loading a cache line that is about to be read (the
//! calendar's and the run loop's; here, so that the event queues use nothing of the crate).

/// Starts loading the cache line at `p` (no effect where the target has no prefetch).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults and reads nothing into the program;
    // `p` may be any address (a port's line computed without a bounds check, a bucket's
    // entries, a ring's slot).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

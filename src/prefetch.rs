//! A hint to the processor to start loading a value's cache line, so that the memory
//! latencies of several reads that follow overlap.

/// Asks the processor to start loading the cache line of `r` (a hint: no effect on any
/// value the program reads or writes).
#[inline]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = std::ptr::from_ref(r).cast::<i8>();
        // SAFETY: a prefetch is only a hint to the cache: it never faults, reads nothing
        // into the program and writes nothing, whatever the address (here that of a live
        // reference); SSE, which provides it, is part of every x86-64.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

//! A hint to the processor's caches: bring in the line holding a value the
//! engine will read a little later (a flow's record, read when the frame
//! now starting toward its host has left, or when a source pushes the unit
//! whose time it has just drawn).

/// Ask for the cache line holding `value`. Nothing is read or written and
/// nothing can fault; off x86-64 it does nothing.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache hierarchy: it reads no data
    // into the program, cannot fault, and SSE, which it needs, is part of
    // every x86-64 target.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

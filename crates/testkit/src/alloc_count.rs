//! A counting global allocator for tests that prove a hot path allocates nothing.
//!
//! Install it in the test binary and measure the calls under test:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: lossless_testkit::alloc_count::CountingAlloc = lossless_testkit::alloc_count::CountingAlloc;
//!
//! let before = lossless_testkit::alloc_count::thread_allocations();
//! hot_path();
//! assert_eq!(lossless_testkit::alloc_count::thread_allocations() - before, 0);
//! ```
//!
//! [`thread_allocations`] counts only the calling thread, so tests the harness runs in
//! parallel do not disturb each other; [`allocations`] counts the whole process.
//! [`thread_allocated_bytes`] adds up the bytes the calling thread asked for (a test that
//! bad input is refused before anything large is allocated).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting every allocation (`alloc`, `alloc_zeroed`, `realloc`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAlloc;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static THREAD_BYTES: Cell<usize> = const { Cell::new(0) };
}

fn count_one(bytes: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    // `try_with`: a thread being torn down has no counter left, and must not panic here.
    let _ = THREAD_ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    let _ = THREAD_BYTES.try_with(|c| c.set(c.get().saturating_add(bytes)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only
// an atomic and a const-initialised thread-local `Cell`, neither of which allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one(layout.size());
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one(layout.size());
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one(new_size);
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations made by every thread of the process so far (when [`CountingAlloc`] is the
/// global allocator; 0 otherwise).
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::SeqCst)
}

/// Allocations made by the calling thread so far (when [`CountingAlloc`] is the global
/// allocator; 0 otherwise).
pub fn thread_allocations() -> usize {
    THREAD_ALLOCATIONS.with(Cell::get)
}

/// Bytes the calling thread asked for so far, in every allocation and reallocation (its
/// new size), whatever was freed since (when [`CountingAlloc`] is the global allocator; 0
/// otherwise).
pub fn thread_allocated_bytes() -> usize {
    THREAD_BYTES.with(Cell::get)
}

/// Runs `f` and returns its result and the allocations the calling thread made during it.
pub fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = thread_allocations();
    let out = f();
    (out, thread_allocations() - before)
}

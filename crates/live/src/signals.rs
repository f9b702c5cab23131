//! SIGTERM/SIGINT turned into a flag a daemon loop polls.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Installs handlers so SIGTERM and SIGINT set the flag [`stop_requested`] reads.
pub fn install_stop_handlers() -> std::io::Result<()> {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: sigaction is plain old data; the handler only stores to an atomic, which is
        // async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Whether SIGTERM or SIGINT arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The signal that requested the stop (`SIGINT` or `SIGTERM`), if one did; a command that
/// stops early because of it exits with 128 + this number, as shells report a killed process.
pub fn stop_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

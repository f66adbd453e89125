//! The allocator of the `fake-pve` binary (and of the bare server
//! `pve-throughput` measures it against): mimalloc, with one option
//! changed.
//!
//! mimalloc hands a freed page back to the system once it has stayed
//! unused for a second (its `purge_delay`). A server under load frees and
//! takes memory all the time (a connection's read buffer each request
//! with a body, answers, task logs), and a client's calls come in bursts
//! seconds apart: pages went back and were taken again moments later, and
//! the kernel zeroed each of them again, with transparent huge pages
//! 2 MiB at a time. In a write mix that was several hundred page faults a
//! second and about a twentieth of the server's processor time. Kept for
//! [`PURGE_DELAY_MS`], a freed page is used again by the next burst, and
//! still goes back once the server has idled that long.
//!
//! `MIMALLOC_PURGE_DELAY` (mimalloc's own variable) still decides when a
//! user sets it.

/// The allocator: `#[global_allocator] static A: Allocator = Allocator;`.
pub use mimalloc::MiMalloc as Allocator;

/// How long a freed page stays unused before it goes back to the system,
/// milliseconds (mimalloc's default is 1,000).
pub const PURGE_DELAY_MS: i32 = 60_000;

/// mimalloc's environment variable for the purge delay.
const PURGE_DELAY_VAR: &str = "MIMALLOC_PURGE_DELAY";

/// The purge delay's place in mimalloc's `mi_option_t` (`mimalloc.h`:
/// the sixteenth option, in both its v2 and v3; `libmimalloc-sys` names
/// no constant for it). The unit test checks that it is the option whose
/// default is mimalloc's 1,000 ms.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets the purge delay to [`PURGE_DELAY_MS`], unless the environment
/// sets it. Call it first thing in `main`, before other threads start.
pub fn configure() {
    if std::env::var_os(PURGE_DELAY_VAR).is_some() {
        return;
    }
    #[allow(unsafe_code)]
    // SAFETY: `mi_option_set` stores a number in mimalloc's table of
    // options (an index checked against the table's length, no pointer);
    // mimalloc reads it when it next considers purging. Called before
    // the program starts other threads, it races with no other access.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mimalloc's own default purge delay, milliseconds.
    const MIMALLOC_DEFAULT_MS: i64 = 1_000;

    /// The purge delay mimalloc uses now, milliseconds.
    fn purge_delay_ms() -> i64 {
        #[allow(unsafe_code)]
        // SAFETY: `mi_option_get` reads a number from mimalloc's table of
        // options, at an index mimalloc checks against the table's length.
        let v = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // `c_long` is `i64` here, but not on every target.
        #[allow(clippy::useless_conversion)]
        i64::from(v)
    }

    /// One test, since the option is the process's: first mimalloc's
    /// default (which names the option: no other has 1,000), then ours.
    #[test]
    fn configure_sets_the_purge_delay_unless_the_environment_does() {
        let given = std::env::var(PURGE_DELAY_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<i64>().ok());
        assert_eq!(purge_delay_ms(), given.unwrap_or(MIMALLOC_DEFAULT_MS));
        configure();
        assert_eq!(purge_delay_ms(), given.unwrap_or(i64::from(PURGE_DELAY_MS)));
    }
}

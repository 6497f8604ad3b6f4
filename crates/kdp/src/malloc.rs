//! glibc's mmap threshold, held fixed: for the exporter, which runs for
//! days, and for long listings whose answers are megabytes each.
//!
//! By default glibc raises its threshold each time an mmapped block is
//! freed, up to 32 MiB: after the first scans free their large answer
//! buffers, later buffers of that size are carved from the heaps instead,
//! and the resident set creeps up scan after scan (docs/PERFORMANCE.md,
//! "One scan of every replica for the leaders too, and a flat resident
//! set"). A fixed threshold (setting it turns the dynamic one off) gives
//! every large buffer back to the system when it is freed.

/// The threshold: blocks from 128 KiB up are mapped on their own.
pub const MMAP_THRESHOLD: usize = 128 * 1024;

/// Fixes glibc's mmap threshold at [`MMAP_THRESHOLD`], unless the operator
/// chose one (`GLIBC_TUNABLES` naming `glibc.malloc.mmap_threshold`, or
/// `MALLOC_MMAP_THRESHOLD_`): that choice stands. Nothing elsewhere than
/// glibc.
pub fn fix_mmap_threshold() {
    let tunables = std::env::var("GLIBC_TUNABLES").ok();
    if !operator_chose(
        std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some(),
        tunables.as_deref(),
    ) {
        set(MMAP_THRESHOLD);
    }
}

/// Whether the environment already sets the threshold: glibc's own
/// variable, or its tunables naming it.
fn operator_chose(malloc_variable: bool, tunables: Option<&str>) -> bool {
    malloc_variable
        || tunables.is_some_and(|t| {
            t.split(':')
                .any(|setting| setting.starts_with("glibc.malloc.mmap_threshold="))
        })
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn set(threshold: usize) {
    let value = libc::c_int::try_from(threshold).unwrap_or(libc::c_int::MAX);
    // SAFETY: mallopt takes two integers and touches only malloc's own
    // settings, under malloc's lock; any value is accepted or refused (0).
    // A refusal leaves glibc's default, which is only a larger footprint.
    let _accepted = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, value) };
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set(_threshold: usize) {}

#[cfg(test)]
mod tests {
    use super::operator_chose;

    #[test]
    fn an_operators_threshold_stands_and_other_tunables_do_not_count() {
        assert!(operator_chose(true, None));
        assert!(operator_chose(
            false,
            Some("glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536")
        ));
        assert!(!operator_chose(false, None));
        assert!(!operator_chose(false, Some("glibc.malloc.arena_max=2")));
        // the threshold's sibling tunable is another setting
        assert!(!operator_chose(
            false,
            Some("glibc.malloc.mmap_threshold_max=1")
        ));
    }
}

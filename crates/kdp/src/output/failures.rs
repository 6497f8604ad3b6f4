//! Keys that failed, on stderr: one line per cause (kdp-domain's
//! [`Failures`]), with how many keys and the first few of them, all of
//! them with `-v`; never a line per key, however many failed.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};

use kdp_domain::key_error::Failures;

/// How many keys a line names without `-v`.
const FIRST: usize = 5;

static ALL_KEYS: AtomicBool = AtomicBool::new(false);

/// Sets whether a line names every key (`-v`) or the first few.
pub fn set_all_keys(all: bool) {
    ALL_KEYS.store(all, Ordering::Relaxed);
}

/// The lines for `failures`, most keys first: `WHAT for N NOUN: ERROR
/// (first 5: a, b, ...; -v lists all)`, or `WHAT for KEY: ERROR` for one
/// key. `all` names every key.
pub fn lines<K: Display>(what: &str, noun: &str, failures: &Failures<K>, all: bool) -> Vec<String> {
    failures
        .causes()
        .into_iter()
        .map(|f| {
            let e = &f.error;
            let error = match e.message.as_deref().filter(|m| !m.is_empty()) {
                Some(m) => format!("{} {m}", e.name()),
                None => e.name().to_string(),
            };
            let keys = &f.keys;
            if let [only] = &keys[..] {
                return format!("{what} for {only}: {error}");
            }
            let shown = if all {
                keys.len()
            } else {
                FIRST.min(keys.len())
            };
            let named: Vec<String> = keys[..shown].iter().map(ToString::to_string).collect();
            let more = if shown < keys.len() {
                format!("first {shown}: {}; -v lists all", named.join(", "))
            } else {
                named.join(", ")
            };
            format!("{what} for {} {noun}: {error} ({more})", keys.len())
        })
        .collect()
}

/// Writes [`lines`] to stderr, every key with `-v`.
pub fn report<K: Display>(what: &str, noun: &str, failures: &Failures<K>) {
    for line in lines(what, noun, failures, ALL_KEYS.load(Ordering::Relaxed)) {
        super::colour::emit(&super::colour::error(&line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_domain::KeyError;
    use kdp_wire::ErrorCode;

    #[test]
    fn one_line_per_cause_with_a_count_and_the_first_keys() {
        let mut f = Failures::new();
        let refused = KeyError::broker(ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None);
        for i in 0..300_000 {
            f.add(format!("tx-{i}"), &refused);
        }
        f.add(
            "late".to_string(),
            &KeyError::client(ErrorCode::REQUEST_TIMED_OUT, "no answer"),
        );
        let l = lines("start time unknown", "transactional ids", &f, false);
        assert_eq!(
            l,
            [
                "start time unknown for 300000 transactional ids: \
                 TRANSACTIONAL_ID_AUTHORIZATION_FAILED (first 5: tx-0, tx-1, tx-2, tx-3, tx-4; \
                 -v lists all)",
                "start time unknown for late: REQUEST_TIMED_OUT no answer",
            ]
        );
        let all = lines("start time unknown", "transactional ids", &f, true);
        assert_eq!(all.len(), 2);
        assert!(
            all[0].ends_with("tx-299998, tx-299999)"),
            "{}",
            &all[0][..80]
        );
    }
}

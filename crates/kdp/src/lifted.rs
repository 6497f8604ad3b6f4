//! A long run of one repeated flag, lifted out of the command line before
//! clap parses it.
//!
//! clap spends a few microseconds on every occurrence of a flag (its
//! matcher, the flag's groups and overrides, two values kept per
//! occurrence), and `kdp transactions describe` takes one
//! `--transactional-id` per id, as kafka-transactions.sh does: thousands
//! in a scripted call. [`lift`] takes out the occurrences that directly
//! follow the first one, clap parses what is left (the first occurrence
//! included, so clap still checks the flag's place and spelling), and the
//! caller appends the lifted values once it has checked that clap took
//! every occurrence left as that flag. Anything else parses the whole
//! command line as before: the answer, and every error, is clap's.

use std::ffi::OsString;

/// A command line with a run of occurrences of one flag taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifted {
    /// The command line clap parses: the first occurrence kept, the run
    /// after it taken out.
    pub argv: Vec<OsString>,
    /// The values of the occurrences taken out, in order.
    pub values: Vec<String>,
    /// The occurrences of the flag left in `argv` (`FLAG VALUE` or
    /// `FLAG=VALUE`, before any `--`): how many values clap must report
    /// for the lifted ones to belong after them.
    pub left: usize,
    /// Where the lifted values go among the flag's values clap reports:
    /// right after the first occurrence's (the occurrences before it, plus
    /// one).
    pub at: usize,
}

/// Takes out of `argv` the occurrences `FLAG VALUE` that directly follow
/// the first `FLAG VALUE`; `None` when there are none. A value clap might
/// read otherwise (not UTF-8, or starting with `-`) ends the run, and
/// nothing after `--` is looked at.
pub fn lift(argv: &[OsString], flag: &str) -> Option<Lifted> {
    let end = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    let args = argv.get(..end)?;
    let first = args.iter().position(|a| a == flag)?;
    let value_of = |at: usize| -> Option<&str> {
        let v = args.get(at)?.to_str()?;
        (!v.starts_with('-')).then_some(v)
    };
    value_of(first + 1)?;
    let mut values = Vec::new();
    let mut at = first + 2;
    while args.get(at).is_some_and(|a| a == flag) {
        let Some(v) = value_of(at + 1) else { break };
        values.push(v.to_owned());
        at += 2;
    }
    if values.is_empty() {
        return None;
    }
    let mut kept = Vec::with_capacity(argv.len() - 2 * values.len());
    kept.extend_from_slice(argv.get(..first + 2)?);
    kept.extend_from_slice(argv.get(at..)?);
    let with_value = format!("{flag}=");
    let is_flag = |a: &&OsString| {
        *a == flag
            || a.to_str()
                .is_some_and(|s| s.starts_with(with_value.as_str()))
    };
    let left = kept
        .iter()
        .take_while(|a| *a != "--")
        .filter(is_flag)
        .count();
    let at = args.iter().take(first).filter(is_flag).count() + 1;
    Some(Lifted {
        argv: kept,
        values,
        left,
        at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    const F: &str = "--transactional-id";

    #[test]
    fn the_run_after_the_first_occurrence_is_lifted_in_order() {
        let l = lift(
            &argv(&[
                "kdp", "describe", F, "a", F, "b", F, "c", "-o", "json", F, "d",
            ]),
            F,
        )
        .expect("a run");
        assert_eq!(
            l.argv,
            argv(&["kdp", "describe", F, "a", "-o", "json", F, "d"])
        );
        assert_eq!(l.values, ["b", "c"]);
        assert_eq!(l.left, 2);
        assert_eq!(l.at, 1);
    }

    #[test]
    fn nothing_to_lift_without_a_second_occurrence_in_the_run() {
        assert_eq!(lift(&argv(&["kdp", "describe", F, "a"]), F), None);
        assert_eq!(
            lift(&argv(&["kdp", "describe", F, "a", "-o", "json", F, "b"]), F),
            None
        );
        assert_eq!(lift(&argv(&["kdp", "describe"]), F), None);
        // the flag at the end, without a value: clap's error
        assert_eq!(lift(&argv(&["kdp", "describe", F]), F), None);
        assert_eq!(lift(&argv(&["kdp", "describe", F, "a", F]), F), None);
    }

    #[test]
    fn a_value_clap_might_read_otherwise_ends_the_run() {
        let l = lift(&argv(&["k", F, "a", F, "b", F, "-c", F, "d"]), F).expect("a run");
        assert_eq!(l.values, ["b"]);
        assert_eq!(l.argv, argv(&["k", F, "a", F, "-c", F, "d"]));
        assert_eq!(l.left, 3);
        // the first value itself
        assert_eq!(lift(&argv(&["k", F, "-a", F, "b"]), F), None);
        assert_eq!(lift(&argv(&["k", F, "--", F, "b"]), F), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_value_not_utf8_ends_the_run() {
        use std::os::unix::ffi::OsStringExt;
        let mut a = argv(&["k", F, "a", F, "b", F]);
        a.push(OsString::from_vec(vec![0xff, 0xfe]));
        a.extend(argv(&[F, "d"]));
        let l = lift(&a, F).expect("a run");
        assert_eq!(l.values, ["b"]);
        assert_eq!(l.argv.len(), a.len() - 2);
    }

    #[test]
    fn nothing_after_a_double_dash_is_lifted_or_counted() {
        assert_eq!(lift(&argv(&["k", "--", F, "a", F, "b"]), F), None);
        let l = lift(
            &argv(&["k", F, "a", F, "b", "--", F, "c", "--transactional-id=d"]),
            F,
        )
        .expect("a run");
        assert_eq!(l.values, ["b"]);
        assert_eq!(l.left, 1);
        // the equals form is counted where it is left
        let l = lift(&argv(&["k", "--transactional-id=z", F, "a", F, "b"]), F).expect("a run");
        assert_eq!(l.left, 2);
        assert_eq!(l.at, 2, "after z and a");
    }
}

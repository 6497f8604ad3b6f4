//! The README's list of the APIs kdp speaks is the registry's: a new API
//! fails here until the README names it, with the text to write.

use kdp_wire::registry::DECLARED;

/// `Metadata v4-12, ApiVersions v0-4, ... and Fetch v4-18`, in the
/// registry's order.
fn api_list() -> String {
    let names: Vec<String> = DECLARED
        .iter()
        .map(|a| {
            if a.lowest_version == a.highest_version {
                format!("{} v{}", a.name, a.lowest_version)
            } else {
                format!("{} v{}-{}", a.name, a.lowest_version, a.highest_version)
            }
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[test]
fn the_readme_names_every_api_of_the_registry() {
    let readme = include_str!("../../../README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `crates/kdp-wire` |"))
        .expect("the README's row for kdp-wire");
    let expected = format!(
        "the {} APIs of its registry (`kdp_wire::registry`): {}",
        DECLARED.len(),
        api_list()
    );
    assert!(
        row.contains(&expected),
        "README.md's kdp-wire row should name the registry's APIs as:\n{expected}"
    );
}

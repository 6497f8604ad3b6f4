//! Loading a cluster file costs about what the result holds: the text is
//! read once, not a second time into a `serde_json::Value` tree just to find
//! trailing content (a 1M-producer file took 1 GB and 4.4 s that way).

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use std::fmt::Write;

use kdp_server::cluster::Cluster;

/// A file in `scripts/scale-cluster.py`'s shape: `topics` x 10 partitions x
/// 20 producers on 3 brokers.
fn scale_file(topics: usize) -> String {
    let mut out = String::from(r#"{"brokers": [{"id": 1}, {"id": 2}, {"id": 3}], "topics": ["#);
    let mut pid = 10_000i64;
    for t in 0..topics {
        if t > 0 {
            out.push(',');
        }
        write!(out, r#"{{"name": "scale-{t:05}", "partitions": ["#).unwrap();
        for p in 0..10 {
            if p > 0 {
                out.push(',');
            }
            let leader = (t + p) % 3 + 1;
            write!(
                out,
                r#"{{"partition": {p}, "leader": {leader}, "replicas": [{leader}], "producers": ["#
            )
            .unwrap();
            for i in 0..20 {
                pid += 1;
                if i > 0 {
                    out.push(',');
                }
                write!(
                    out,
                    r#"{{"ProducerId":{pid},"ProducerEpoch":{},"LastSequence":{},"LastTimestamp":{},"CoordinatorEpoch":3,"CurrentTxnStartOffset":{}}}"#,
                    i % 5,
                    pid % 9000,
                    1_795_000_000_000 + pid,
                    pid * 7
                )
                .unwrap();
            }
            out.push_str("]}");
        }
        out.push_str("]}");
    }
    out.push_str("]}\n");
    out
}

#[test]
fn loading_allocates_about_what_the_result_holds() {
    let text = scale_file(200); // 40,000 producers, about 5 MB of text
    let base = counting_alloc::reset_peak();
    let cluster = Cluster::from_json(&text).unwrap();
    let grown = counting_alloc::peak() - base;
    let kept = counting_alloc::live() - base;
    assert_eq!(cluster.topics.len(), 200);
    // The parsed file and the validated cluster may coexist for a moment;
    // a second parse into a Value tree costs several times the text on top.
    assert!(
        grown < 3 * kept,
        "loading {} bytes of text peaked at {grown} bytes for a result of {kept} bytes",
        text.len()
    );
    // Trailing content is still refused, and named as such.
    let e = Cluster::from_json(&format!("{text} {{}}")).unwrap_err();
    assert_eq!(e.path, ".");
    assert!(e.message.contains("trailing"), "{e}");
}

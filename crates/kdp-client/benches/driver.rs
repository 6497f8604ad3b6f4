//! The admin driver's cost per key, without a network: ListOffsets (high
//! watermark and LSO) for every partition of one topic, asked of three
//! brokers of kdp-test-support's in-memory cluster. Encoding, the mock's
//! answer and decoding are in the figure too, but they grow linearly; what
//! the driver adds per key (routing, matching answers, bookkeeping) shows as
//! the time per partition rising with the partition count.
//!
//! ```text
//! cargo bench -p kdp-client --bench driver -- --warm-up-time 1 --measurement-time 3
//! ```

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kdp_client::admin::DriverOptions;
use kdp_client::txn::offsets::offsets;
use kdp_client::TimeBound;
use kdp_test_support::StallCluster;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("driver_list_offsets");
    for n in [1_000i32, 10_000, 50_000] {
        let topic = "bench-topic";
        let leaders: Vec<(&str, i32, i32)> = (0..n).map(|p| (topic, p, p % 3 + 1)).collect();
        let cluster = StallCluster::placed(3, &leaders);
        let client = rt.block_on(cluster.client());
        let keys: Vec<(String, i32)> = (0..n).map(|p| (topic.to_string(), p)).collect();
        let opts = DriverOptions::default();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &keys, |b, keys| {
            b.iter(|| {
                // each run with its own bound, as each command has
                let bound = TimeBound::after(std::time::Duration::from_secs(30));
                let answers = rt.block_on(offsets(&client, keys.clone(), &opts, &bound));
                assert_eq!(answers.len(), keys.len());
                black_box(answers)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

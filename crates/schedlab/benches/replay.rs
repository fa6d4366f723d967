//! Speed of trace replay's front end: reading a large `trace-cmd report` text trace and
//! extracting its workload, to the JSON text `schedlab gen from-trace` prints
//! (`Throughput::Bytes`, so criterion reports MB/s), beside the time the simulator took to
//! write that trace (printed once), which reading must beat.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab::kernel::Variant;
use schedlab::platform::Platform;
use schedlab::replay::extract::{Extraction, Filter};
use schedlab::replay::timeline::{self, CpuInfo, Window};
use schedlab::workload::parse_workload;
use schedlab::{simulate, Outputs, Run};
use std::time::Instant;

/// 48 periodic tasks and 8 ping-pong pairs on smp8: about 6.8 MB of trace per simulated
/// second, so 15 s make the issue's 100 MB.
fn workload() -> String {
    let mut tasks = vec![r#""per": { "instance": 48, "loop": -1, "run": 300,
        "timer": { "ref": "unique", "period": 2000 } }"#
        .to_string()];
    for i in 0..8 {
        tasks.push(format!(
            r#""a{i}": {{ "loop": -1, "run": 200, "send": {{ "channel": "x{i}", "bytes": 1 }},
                "recv": {{ "channel": "y{i}" }} }},
               "b{i}": {{ "loop": -1, "recv": {{ "channel": "x{i}" }}, "run": 200,
                "send": {{ "channel": "y{i}", "bytes": 1 }} }}"#
        ));
    }
    let channels: Vec<String> = (0..8)
        .flat_map(|i| {
            [
                format!(r#""x{i}": {{ "kind": "futex" }}"#),
                format!(r#""y{i}": {{ "kind": "futex" }}"#),
            ]
        })
        .collect();
    format!(
        r#"{{ "tasks": {{ {} }}, "global": {{ "channels": {{ {} }} }} }}"#,
        tasks.join(","),
        channels.join(",")
    )
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let platform = Platform::resolve("smp8").unwrap();
    let started = Instant::now();
    simulate(
        Run {
            platform: platform.clone(),
            workload: parse_workload(&workload(), "bench").unwrap(),
            variant: Variant::for_platform(&platform),
            duration_ns: Some(15_000_000_000),
            seed: 0,
            reproducible: true,
        },
        &Outputs {
            trace: Some(path.clone()),
            ..Outputs::default()
        },
    )
    .unwrap();
    let simulated = started.elapsed();
    let text = std::fs::read_to_string(&path).unwrap();
    let info = CpuInfo::from_platform(&platform);
    let started = Instant::now();
    let tl = timeline::read(&text, "big.txt", &info, Window::default()).unwrap();
    Extraction::new(&tl, &Filter::default()).workload_json();
    let read = started.elapsed();
    eprintln!(
        "replay: {:.1} MB trace; simulating it took {:.2} s, reading and extracting {:.2} s",
        text.len() as f64 / 1e6,
        simulated.as_secs_f64(),
        read.as_secs_f64()
    );
    let mut g = c.benchmark_group("replay");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(10);
    g.bench_function("read_extract_smp8", |b| {
        b.iter(|| {
            let tl = timeline::read(&text, "big.txt", &info, Window::default()).unwrap();
            Extraction::new(&tl, &Filter::default()).workload_json()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

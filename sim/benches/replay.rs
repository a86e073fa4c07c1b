//! Benchmark: golden replay of the default workload (4096 tokens, hidden 7168,
//! bf16, 256 experts, top-8, EP 8, Dispatch + Combine).
//!
//! `cargo bench -p dysharp-sim --bench replay`

use criterion::{criterion_group, criterion_main, Criterion};
use dysharp_sim::numerics::DType;
use dysharp_sim::replay::{replay_golden, ReplayOptions};
use dysharp_sim::trace::{generate, DistSpec};
use dysharp_sim::traffic::Token;

fn default_tokens(dist: &str) -> Vec<Token> {
    let spec: DistSpec = dist.parse().expect("dist");
    let trace = generate(&spec, 4096, 256, 8, 8, 1).expect("trace");
    trace.replay_tokens().0
}

fn bench(c: &mut Criterion) {
    let opts = ReplayOptions {
        ep: 8,
        experts: 256,
        hidden: 7168,
        dtype: DType::Bf16,
        seed: 1,
    };
    let mut g = c.benchmark_group("golden_replay_default");
    g.sample_size(10);
    for dist in ["uniform", "zipf:1.5"] {
        let tokens = default_tokens(dist);
        g.bench_function(dist, |b| {
            b.iter(|| {
                let r = replay_golden(&tokens, 8, &opts, |_, _, _| {}).expect("replay");
                assert_eq!(r.mismatches, 0);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Perft speed: `cargo bench --bench perft`. Each benchmark asserts its node count.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shatranj_tb::Position;

/// (name, FEN, depth, nodes); the counts are those of `tests/data/*.perft`.
const CASES: [(&str, &str, u32, u64); 3] = [
    ("start d4", "startpos", 4, 68_122),
    ("start d5", "startpos", 5, 1_164_248),
    (
        "KRQvKBN d5",
        "8/8/3k4/8/2bn4/8/8/R2QK3 w - - 0 1",
        5,
        1_085_779,
    ),
];

fn perft(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(20);
    for (name, fen, depth, nodes) in CASES {
        let pos = Position::from_fen(fen).expect("valid FEN");
        assert_eq!(pos.perft(depth), nodes, "{name}");
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(name, |b| {
            b.iter(|| {
                let n = black_box(&pos).perft(black_box(depth));
                assert_eq!(n, nodes);
                n
            });
        });
    }
    group.finish();
}

fn movegen(c: &mut Criterion) {
    let pos = Position::startpos();
    c.bench_function("legal_moves start", |b| {
        b.iter(|| black_box(&pos).legal_moves().len())
    });
}

criterion_group!(benches, perft, movegen);
criterion_main!(benches);

//! Random-position probes from table files: WDL and DTM, warm cache, one thread;
//! and the first probe of a table that has not been opened yet.
//!
//! Tables: `$SHATRANJ_BENCH_TABLES` with `$SHATRANJ_BENCH_MATERIAL` (e.g. a 5-man table
//! generated with `shatranj-tb generate KRQvKR --tables DIR`), or by default KRvKQ
//! generated into `target/bench-tables/`.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use shatranj_tb::generate::NoProgress;
use shatranj_tb::generate::files::generate_into;
use shatranj_tb::index::TableIndex;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::{Color, Material, Position, RuleSet};

fn tables() -> (PathBuf, Material) {
    if let (Ok(dir), Ok(m)) = (
        std::env::var("SHATRANJ_BENCH_TABLES"),
        std::env::var("SHATRANJ_BENCH_MATERIAL"),
    ) {
        return (PathBuf::from(dir), m.parse().expect("a material"));
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-tables");
    let m: Material = "KRvKQ".parse().unwrap();
    generate_into(&dir, &[m], RuleSet::default(), &NoProgress, |_| {}).unwrap();
    (dir, m)
}

/// Random legal positions of the material, from random indices.
fn positions(m: Material, n: usize) -> Vec<Position> {
    let index = TableIndex::new(m.normalized());
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let i = rng.gen_range(0..index.size());
        let turn = if rng.r#gen::<bool>() {
            Color::White
        } else {
            Color::Black
        };
        if let Some(board) = index.decode(i) {
            if let Ok(p) = Position::from_board(board, turn) {
                out.push(p);
            }
        }
    }
    out
}

fn bench_probe(c: &mut Criterion) {
    let (dir, m) = tables();
    // the default cache holds a whole 5-man DTM table: warm means every block decompressed
    let tb = Tablebase::open(&dir, RuleSet::default()).unwrap();
    let pos = positions(m, 100_000);
    // warm the caches
    for p in &pos {
        tb.wdl(p).unwrap();
        tb.value(p).unwrap();
    }
    let mut group = c.benchmark_group("probe");
    group.throughput(criterion::Throughput::Elements(pos.len() as u64));
    group.sample_size(10);
    group.bench_function(format!("wdl {m} x{}", pos.len()), |b| {
        b.iter(|| {
            let wins = pos
                .iter()
                .filter(|p| tb.wdl(p).unwrap() == shatranj_tb::Wdl::Win)
                .count();
            std::hint::black_box(wins)
        });
    });
    group.bench_function(format!("dtm {m} x{}", pos.len()), |b| {
        b.iter(|| {
            let total: u64 = pos
                .iter()
                .map(|p| u64::from(tb.value(p).unwrap().dtm().unwrap_or(0)))
                .sum();
            std::hint::black_box(total)
        });
    });
    group.finish();

    let mut cold = c.benchmark_group("probe cold");
    cold.sample_size(20);
    cold.bench_function(format!("open and first dtm probe {m}"), |b| {
        b.iter(|| {
            let tb = Tablebase::open(&dir, RuleSet::default()).unwrap();
            std::hint::black_box(tb.value(&pos[0]).unwrap())
        });
    });
    cold.finish();
}

criterion_group!(benches, bench_probe);
criterion_main!(benches);

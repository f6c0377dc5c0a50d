//! The problem solver on the mansubat of `tests/data/mansubat.txt`: each proved (shortest
//! length and every key) from scratch, one thread, 64 MiB transposition table, over the
//! 4-man tables (generated into `target/bench-tables-4/` if missing).
//!
//! "Dilaram's legacy" (20 men, 15 plies) takes about a minute an iteration and criterion
//! runs at least ten: it is measured only with `SHATRANJ_BENCH_ALL=1`. A second group
//! proves every forced mate of `tests/data/mates.txt` (self-play positions) per iteration.
//! `benches/popeye.py` times the same problems beside Popeye.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use shatranj_tb::generate::NoProgress as NoGenProgress;
use shatranj_tb::generate::files::generate_into;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::solve::{self, NoProgress, SolveOptions, Verdict};
use shatranj_tb::{Material, Position, RuleSet};

fn tables() -> Tablebase {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-tables-4");
    generate_into(
        &dir,
        &Material::all_with_tables(4),
        RuleSet::default(),
        &NoGenProgress,
        |_| {},
    )
    .expect("the 4-man tables");
    Tablebase::open(&dir, RuleSet::default()).expect("open the tables")
}

/// (name, FEN, plies) of each problem.
fn problems() -> Vec<(String, String, u32)> {
    include_str!("../tests/data/mansubat.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(" | ").map(str::trim).collect();
            (f[0].to_string(), f[1].to_string(), f[3].parse().unwrap())
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let tb = tables();
    let all = std::env::var_os("SHATRANJ_BENCH_ALL").is_some();
    let mut group = c.benchmark_group("solve");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for (name, fen, plies) in problems() {
        let pos = Position::from_fen(&fen).unwrap();
        if pos.board().occupied().count() > 16 && !all {
            continue;
        }
        let opts = SolveOptions {
            max_plies: plies,
            hash_mb: 64,
            threads: 1,
            time_limit: None,
            tree_depth: 0,
        };
        group.bench_function(&name, |b| {
            b.iter(|| {
                let s =
                    solve::solve(&tb, &pos, &opts, &NoProgress, &AtomicBool::new(false)).unwrap();
                assert_eq!((s.verdict, s.plies), (Verdict::Win, Some(plies)));
                s.nodes
            });
        });
    }
    group.finish();

    // The self-play set: every forced mate of tests/data/mates.txt proved in one
    // iteration (about a hundred positions of many men, mates of 2 to 5 moves).
    let mates: Vec<(Position, u32)> = include_str!("../tests/data/mates.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(" | ").map(str::trim).collect();
            (Position::from_fen(f[1]).unwrap(), f[3].parse().unwrap())
        })
        .collect();
    let mut group = c.benchmark_group("solve-set");
    group.sample_size(10);
    group.bench_function("self-play-mates", |b| {
        b.iter(|| {
            let mut nodes = 0;
            for (pos, plies) in &mates {
                let opts = SolveOptions {
                    max_plies: *plies,
                    hash_mb: 64,
                    threads: 1,
                    time_limit: None,
                    tree_depth: 0,
                };
                let s =
                    solve::solve(&tb, pos, &opts, &NoProgress, &AtomicBool::new(false)).unwrap();
                assert_eq!((s.verdict, s.plies), (Verdict::Win, Some(*plies)));
                nodes += s.nodes;
            }
            nodes
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

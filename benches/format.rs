//! Table file format: warm random `get`, cold block reads, write throughput.
//!
//! `cargo bench --bench format`. Values are checked inside every bench.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shatranj_tb::format::{
    Metric, TableFile, TableMeta, UNUSED, WriteOptions, write_table, write_table_with,
};

/// Runs of geometric length (mean `mean_run`); values from `pick`; 5% UNUSED runs.
fn synthetic(n: usize, seed: u64, mean_run: f64, pick: impl Fn(&mut StdRng) -> u16) -> Vec<u16> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n + 1000);
    while v.len() < n {
        let value = if rng.gen_bool(0.05) {
            UNUSED
        } else {
            pick(&mut rng)
        };
        let u: f64 = rng.r#gen::<f64>().max(1e-12);
        let len = 1 + (u.ln() / (1.0 - 1.0 / mean_run).ln()) as usize;
        v.extend(std::iter::repeat_n(value, len));
    }
    v.truncate(n);
    v
}

/// Three values, about 60 / 25 / 10 %, runs of mean 24.
fn wdl_like(n: usize) -> Vec<u16> {
    synthetic(n, 1, 24.0, |rng| match rng.gen_range(0..20) {
        0..12 => 1,
        12..17 => 2,
        _ => 0,
    })
}

/// Up to 250, skewed toward small values, runs of mean 6.
fn dtm_like(n: usize) -> Vec<u16> {
    synthetic(n, 2, 6.0, |rng| {
        let u: f64 = rng.r#gen::<f64>().max(1e-12);
        ((-u.ln() * 16.0) as u16).min(250)
    })
}

fn meta(metric: Metric) -> TableMeta {
    TableMeta {
        metric,
        rules_code: 0,
        material: "KRvKQ".into(),
        index_scheme: 1,
        extra: Vec::new(),
    }
}

fn bench_format(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let n = 4_000_000;
    let dtm = dtm_like(n);
    let dtm_path = dir.path().join("KRvKQ.dtm");
    write_table(&dtm_path, &meta(Metric::Dtm), &dtm).unwrap();
    let wdl = wdl_like(n);
    let wdl_path = dir.path().join("KRvKQ.wdl");
    write_table(&wdl_path, &meta(Metric::Wdl), &wdl).unwrap();

    // Random indices of used slots, and the sum their values must give.
    let mut rng = StdRng::seed_from_u64(3);
    let batch = 4096;
    let indices = |values: &[u16], rng: &mut StdRng| -> (Vec<u64>, u64) {
        let mut idx = Vec::with_capacity(batch);
        while idx.len() < batch {
            let i = rng.gen_range(0..values.len());
            if values[i] != UNUSED {
                idx.push(i as u64);
            }
        }
        let sum = idx.iter().map(|&i| u64::from(values[i as usize])).sum();
        (idx, sum)
    };

    let mut group = c.benchmark_group("format");
    for (name, path, values) in [("wdl", &wdl_path, &wdl), ("dtm", &dtm_path, &dtm)] {
        let table = TableFile::open(path).unwrap();
        for i in (0..table.len()).step_by(table.block_values() as usize) {
            table.get(i).unwrap(); // warm every block (fits the default cache)
        }
        let (idx, want) = indices(values, &mut rng);
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_function(format!("warm_get_{name}_4M"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &i in black_box(&idx) {
                    sum += u64::from(table.get(i).unwrap());
                }
                assert_eq!(sum, want);
                sum
            })
        });
    }

    // Cold: capacity 0 keeps one block per shard; cycling through more blocks than shards
    // misses every time, so each get reads, checksums and decompresses a 32 KiB block.
    let table = TableFile::open(&dtm_path).unwrap();
    table.set_cache_capacity(0);
    assert!(table.block_count() > 64);
    let firsts: Vec<(u64, u16)> = (0..table.block_count())
        .map(|b| u64::from(b) * table.block_values())
        .filter(|&i| dtm[i as usize] != UNUSED)
        .map(|i| (i, dtm[i as usize]))
        .collect();
    let mut k = 0;
    group.throughput(Throughput::Bytes(32 << 10));
    group.bench_function("cold_block_dtm_32KiB", |b| {
        b.iter(|| {
            let (i, want) = firsts[k % firsts.len()];
            k += 1;
            let got = table.get(black_box(i)).unwrap();
            assert_eq!(got, want);
            got
        })
    });

    group.sample_size(10);
    let out = dir.path().join("out.wdl");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("write_wdl_4M", |b| {
        b.iter_batched(
            || (),
            |()| {
                let stats = write_table(&out, &meta(Metric::Wdl), black_box(&wdl)).unwrap();
                assert_eq!(stats.values, n as u64);
                stats.file_bytes
            },
            BatchSize::PerIteration,
        )
    });

    // A file of more than one batch of blocks (64 MiB of 8-bit symbols), at the DTM
    // files' level: the writer holds a batch of blocks at a time, not the file.
    let big = 64 << 20;
    let dtm = dtm_like(big);
    let options = WriteOptions {
        zstd_level: 6,
        ..WriteOptions::default()
    };
    let out = dir.path().join("out.dtm");
    group.throughput(Throughput::Elements(big as u64));
    group.bench_function("write_dtm_64M_level6", |b| {
        b.iter_batched(
            || (),
            |()| {
                let stats =
                    write_table_with(&out, &meta(Metric::Dtm), black_box(&dtm[..]), &options)
                        .unwrap();
                assert_eq!(stats.values, big as u64);
                stats.file_bytes
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_format);
criterion_main!(benches);

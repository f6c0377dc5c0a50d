//! Table folders in use: files replaced in place under a reader (as `cp` or
//! `rsync --inplace` do) give an error naming the file or a correct value, never a crash;
//! and one bound holds for the decompressed blocks of all the tables of a tablebase.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rand::{Rng, SeedableRng};
use shatranj_tb::format::Metric;
use shatranj_tb::generate::NoProgress;
use shatranj_tb::generate::files::generate_into;
use shatranj_tb::index::TableIndex;
use shatranj_tb::probe::{ProbeError, Tablebase, table_path};
use shatranj_tb::{Color, Material, Position, RuleSet, Value};

/// The tables KRvKQ and KQvKQ, generated once into a folder of this test binary.
fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live-tables");
        let materials: Vec<Material> = ["KRvKQ", "KQvKQ"]
            .iter()
            .map(|m| m.parse().unwrap())
            .collect();
        generate_into(&dir, &materials, RuleSet::default(), &NoProgress, |_| {})
            .expect("the tables generate");
        dir
    })
}

/// `n` legal positions of `m` from random indices.
fn positions(m: Material, n: usize, seed: u64) -> Vec<Position> {
    let index = TableIndex::new(m.normalized());
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let turn = if rng.r#gen::<bool>() {
            Color::White
        } else {
            Color::Black
        };
        if let Some(board) = index.decode(rng.gen_range(0..index.size())) {
            if let Ok(p) = Position::from_board(board, turn) {
                out.push(p);
            }
        }
    }
    out
}

/// Overwrites `path` in place as `cp` does: opened for writing, truncated, new bytes.
fn copy_over_in_place(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .expect("the table file opens for writing");
    f.write_all(bytes).expect("the new bytes are written");
    f.sync_all().unwrap();
}

fn copy_folder(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn a_table_copied_over_in_place_is_an_error_naming_it_or_a_right_value() {
    let source = tables();
    let live = tempfile::tempdir().unwrap();
    copy_folder(source, live.path());
    let m: Material = "KRvKQ".parse().unwrap();
    let rules = RuleSet::default();
    let pos = positions(m, 200, 1);
    let reference = Tablebase::open(source, rules).unwrap();
    let want: Vec<Value> = pos.iter().map(|p| reference.value(p).unwrap()).collect();

    // No cache: every probe reads the file again, as a cold server does.
    let tb = Tablebase::open(live.path(), rules).unwrap();
    tb.set_cache_bytes(0);
    for (p, w) in pos.iter().zip(&want) {
        assert_eq!(tb.value(p).unwrap(), *w, "{}", p.fen());
    }
    let dtm = table_path(live.path(), m, rules, Metric::Dtm);

    // Another table's bytes over it (shorter: the file shrinks under the reader).
    let other = std::fs::read(table_path(
        source,
        "KQvKQ".parse().unwrap(),
        rules,
        Metric::Dtm,
    ))
    .unwrap();
    copy_over_in_place(&dtm, &other);
    let mut errors = 0;
    for (p, w) in pos.iter().zip(&want) {
        match tb.value(p) {
            Ok(v) => assert_eq!(v, *w, "{}", p.fen()),
            Err(ProbeError::Corrupt { path, message }) => {
                assert_eq!(path, dtm);
                assert!(message.contains("changed in place"), "{message}");
                errors += 1;
            }
            Err(e) => panic!("unexpected error for {}: {e}", p.fen()),
        }
    }
    assert!(errors > 100, "{errors} errors of {}", pos.len());

    // Other bytes of the same length, as a half-finished copy leaves them.
    let original = std::fs::read(table_path(source, m, rules, Metric::Dtm)).unwrap();
    let mut garbled = original.clone();
    let half = garbled.len() / 2;
    for b in &mut garbled[half..] {
        *b = b.wrapping_add(0x5b);
    }
    copy_over_in_place(&dtm, &garbled);
    let mut errors = 0;
    for (p, w) in pos.iter().zip(&want) {
        match tb.value(p) {
            Ok(v) => assert_eq!(v, *w, "{}", p.fen()),
            Err(e @ ProbeError::Corrupt { .. }) => {
                assert!(e.to_string().contains(&*dtm.to_string_lossy()), "{e}");
                errors += 1;
            }
            Err(e) => panic!("unexpected error for {}: {e}", p.fen()),
        }
    }
    assert!(errors > 0, "no probe read the garbled half");

    // The same table copied back over it: right values again.
    copy_over_in_place(&dtm, &original);
    for (p, w) in pos.iter().zip(&want) {
        assert_eq!(tb.value(p).unwrap(), *w, "{}", p.fen());
    }

    // Truncated to nothing under a warm cache: cached blocks still answer right, the
    // others are errors; an empty file is no crash either.
    tb.set_cache_bytes(64 << 20);
    let warm = &pos[..20];
    for p in warm {
        tb.value(p).unwrap();
    }
    copy_over_in_place(&dtm, &[]);
    for (p, w) in warm.iter().zip(&want) {
        assert_eq!(tb.value(p).unwrap(), *w, "{}", p.fen());
    }
    let failed = pos[20..].iter().filter(|p| tb.value(p).is_err()).count();
    assert!(failed > 100, "{failed}");
    // A tablebase opened now names the empty file.
    let fresh = Tablebase::open(live.path(), rules).unwrap();
    let e = fresh.value(&pos[25]).unwrap_err();
    assert!(e.to_string().contains(&*dtm.to_string_lossy()), "{e}");
}

#[test]
fn one_cache_bound_holds_for_every_table_of_a_tablebase() {
    let tb = Tablebase::open(tables(), RuleSet::default()).unwrap();
    let budget = 2 << 20;
    tb.set_cache_bytes(budget);
    let materials: Vec<Material> = ["KRvKQ", "KQvKQ"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let all: Vec<Vec<Position>> = materials
        .iter()
        .enumerate()
        .map(|(i, &m)| positions(m, 400, i as u64))
        .collect();
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let (tb, all) = (&tb, &all);
            s.spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(t);
                for _ in 0..1500 {
                    let set = &all[rng.gen_range(0..all.len())];
                    let p = &set[rng.gen_range(0..set.len())];
                    tb.value(p).unwrap();
                    tb.wdl(p).unwrap();
                    let stats = tb.cache_stats();
                    assert!(stats.resident_bytes <= budget, "{stats:?}");
                }
            });
        }
    });
    let stats = tb.cache_stats();
    assert_eq!(stats.capacity, budget);
    assert!(stats.peak_bytes <= budget, "{stats:?}");
    // the blocks probed are far more than the budget: it filled up
    assert!(stats.resident_bytes > budget / 2, "{stats:?}");
    assert!(stats.blocks >= 4, "{stats:?}");
    // shrinking evicts at once; clearing empties; both keep answers right
    tb.set_cache_bytes(600 << 10);
    assert!(tb.cache_stats().resident_bytes <= 600 << 10);
    tb.clear_caches();
    assert_eq!(tb.cache_stats().resident_bytes, 0);
    let p = &all[0][rng.gen_range(0..all[0].len())];
    let cold = tb.value(p).unwrap();
    assert_eq!(tb.value(p).unwrap(), cold);
    assert!(tb.cache_stats().resident_bytes > 0);
}

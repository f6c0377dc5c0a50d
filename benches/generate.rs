//! Generation of one 4-man table end to end (seed, retrograde passes, statistics), in
//! memory. The sub-tables it needs are decided by the rules, so nothing else is built.
//! The `push` variants push every loss pass (see `LossPasses`): the gap to the default
//! is what pulling saves.
//!
//! The `dtz` group times a pawn table's DTZ under the move rule (`generate_dtz`, from the
//! table's WDL and conversions, as `generate` runs it) beside the table's own generation:
//! the ratio is what DTZ adds to making the table (the files' compression aside).
//!
//! The `decode` group times index-to-board decoding, which the seed and every pass do for
//! each position they visit; the `digit order` group a DTZ file's order of positions (a
//! probe's step into it, the writer's out of it, and choosing it).

use criterion::{Criterion, criterion_group, criterion_main};
use shatranj_tb::generate::dtz::{Leaves, generate_dtz, pack_wdl};
use shatranj_tb::generate::memory::MemoryTables;
use shatranj_tb::generate::{Cells, Generator, LossPasses, NoProgress};
use shatranj_tb::{Material, MoveRule, RuleSet};

fn bench_generate(c: &mut Criterion) {
    let sub = MemoryTables::new(RuleSet::default());
    let mut group = c.benchmark_group("generate");
    group.sample_size(10);
    for name in ["KQvKQ", "KRvKQ"] {
        for (label, how) in [("", LossPasses::Auto), (" push", LossPasses::Push)] {
            group.bench_function(format!("{name}{label}"), |b| {
                b.iter(|| {
                    let g = Generator::new(
                        name.parse().unwrap(),
                        RuleSet::default(),
                        &sub,
                        &NoProgress,
                    )
                    .loss_passes(how)
                    .run()
                    .unwrap();
                    let longest = g.stats.white.longest_win.as_ref().unwrap().plies;
                    assert!(longest == 63 || longest == 39, "{name}: {longest}");
                    std::hint::black_box(g)
                });
            });
        }
    }
    group.finish();
}

fn bench_dtz(c: &mut Criterion) {
    let rules = RuleSet::default();
    let seventy = RuleSet {
        move_rule: MoveRule::Seventy,
        ..rules
    };
    let mut sub = MemoryTables::new(rules);
    let mut group = c.benchmark_group("dtz");
    group.sample_size(10);
    for name in ["KRvKP", "KNvKP"] {
        let m: Material = name.parse().unwrap();
        sub.generate(m).unwrap();
        let sub = &sub;
        group.bench_function(format!("{name} table"), |b| {
            b.iter(|| {
                std::hint::black_box(Generator::new(m, rules, sub, &NoProgress).run().unwrap())
            });
        });
        let g = sub.get(&m).unwrap();
        let wdl = pack_wdl(&g.codes);
        group.bench_function(format!("{name} dtz"), |b| {
            b.iter(|| {
                let buffer = Cells::default();
                let leaves = Leaves {
                    conversions: Some(&g.conversions),
                    cursed_subtables: false,
                    dtm: None,
                };
                let t = generate_dtz(m, seventy, &wdl, leaves, sub, &NoProgress, buffer).unwrap();
                assert_eq!(t.stats.white.cursed_wins, 0, "{name}");
                std::hint::black_box(t)
            });
        });
    }
    // a table without pawns whose wins seldom zero at once: its DTZ decided anew, and
    // started from its DTM (what `generate` does for it)
    let m: Material = "KNvKB".parse().unwrap();
    sub.generate(m).unwrap();
    let g = sub.get(&m).unwrap();
    let wdl = pack_wdl(&g.codes);
    for (how, dtm) in [("anew", None), ("from dtm", Some(&g.codes))] {
        let sub = &sub;
        group.bench_function(format!("KNvKB dtz {how}"), |b| {
            b.iter(|| {
                let leaves = Leaves {
                    conversions: Some(&g.conversions),
                    cursed_subtables: false,
                    dtm,
                };
                let t = generate_dtz(m, rules, &wdl, leaves, sub, &NoProgress, Cells::default())
                    .unwrap();
                assert_eq!(t.stats.white.longest_win, 55);
                std::hint::black_box(t)
            });
        });
    }
    group.finish();
}

/// Index to board, the generator's most frequent step: a million consecutive indices
/// (as a pass or the seed reads them) and a million scattered ones, of a 6-man table
/// whose groups are pairs (no run of a single last piece to decode once) and of a 5-man
/// one.
fn bench_decode(c: &mut Criterion) {
    use shatranj_tb::index::TableIndex;
    let mut group = c.benchmark_group("decode");
    group.sample_size(10);
    for m in ["KRRvKRR", "KRQvKR"] {
        let index = TableIndex::new(m.parse().unwrap());
        let n = 1u64 << 20;
        group.throughput(criterion::Throughput::Elements(n));
        let start = index.size() / 3;
        group.bench_function(format!("{m} consecutive"), |b| {
            b.iter(|| {
                (start..start + n)
                    .filter(|&i| index.decode(i).is_some())
                    .count()
            });
        });
        // a fixed odd stride through the whole index
        let stride = (index.size() / n) | 1;
        group.bench_function(format!("{m} scattered"), |b| {
            b.iter(|| {
                (0..n)
                    .filter(|&k| index.decode((k * stride) % index.size()).is_some())
                    .count()
            });
        });
    }
    group.finish();
}

/// A DTZ file's digit order (`index::DigitOrder`): a probe's step from scheme 1's index to
/// the file's (a million scattered indices), the writer's from the file's numbers back (a
/// million consecutive, counted up), and the choice of KRvKQ's order for one side's values
/// (every one of its 24 orders on a sample).
fn bench_digit_order(c: &mut Criterion) {
    use shatranj_tb::generate::digit_order::best_order;
    use shatranj_tb::index::{DigitOrder, TableIndex};
    let mut group = c.benchmark_group("digit order");
    group.sample_size(10);
    let index = TableIndex::new("KRQvKR".parse().unwrap());
    let order = DigitOrder::new(&index, &[4, 1, 2, 3, 0]).unwrap();
    let n = 1u64 << 20;
    group.throughput(criterion::Throughput::Elements(n));
    let stride = (index.size() / n) | 1;
    group.bench_function("KRQvKR from index, scattered", |b| {
        b.iter(|| {
            (0..n)
                .map(|k| order.from_index((k * stride) % index.size()))
                .fold(0u64, u64::wrapping_add)
        });
    });
    let start = order.size() / 3;
    group.bench_function("KRQvKR to index, counted up", |b| {
        b.iter(|| {
            let mut held = 0u64;
            order.for_each_index(start..start + n, |i| held += u64::from(i.is_some()));
            held
        });
    });
    group.throughput(criterion::Throughput::Elements(1));
    let krvkq = TableIndex::new("KRvKQ".parse().unwrap());
    // values that repeat along two digits: the ferz's square and the Black shah's rank
    let values: Vec<u16> = (0..krvkq.size())
        .map(|i| ((i % 64) * 7 + (i / 64 / 64 % 64) / 8) as u16 % 50)
        .collect();
    group.bench_function("KRvKQ best order", |b| {
        b.iter(|| best_order(&krvkq, values.as_slice(), &|| false));
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_generate,
    bench_dtz,
    bench_decode,
    bench_digit_order
);
criterion_main!(benches);

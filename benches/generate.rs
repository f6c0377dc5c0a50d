//! Generation of one 4-man table end to end (seed, retrograde passes, statistics), in
//! memory. The sub-tables it needs are decided by the rules, so nothing else is built.
//! The `push` variants push every loss pass (see `LossPasses`): the gap to the default
//! is what pulling saves.

use criterion::{Criterion, criterion_group, criterion_main};
use shatranj_tb::RuleSet;
use shatranj_tb::generate::memory::MemoryTables;
use shatranj_tb::generate::{Generator, LossPasses, NoProgress};

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

criterion_group!(benches, bench_generate);
criterion_main!(benches);

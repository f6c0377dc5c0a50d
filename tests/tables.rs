//! Table files end to end: generation into a directory, probing from the files, verify,
//! determinism and damage.

use rayon::prelude::*;
use shatranj_tb::generate::NoProgress;
use shatranj_tb::generate::files::{TableOutcome, generate_into, paths, verify};
use shatranj_tb::index::TableIndex;
use shatranj_tb::probe::{ProbeError, Tablebase};
use shatranj_tb::{Color, Material, Position, RuleSet, Value};

fn generated(dir: &std::path::Path, material: &str) -> Vec<TableOutcome> {
    generate_into(
        dir,
        &[material.parse().unwrap()],
        RuleSet::default(),
        &NoProgress,
        |_| {},
    )
    .unwrap()
}

#[test]
fn files_answer_like_the_generator_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let outcomes = generated(dir.path(), "KQvKQ");
    let TableOutcome::Written { table, .. } = outcomes.last().unwrap() else {
        panic!("KQvKQ should have been written");
    };
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let index = TableIndex::new(table.material);
    let n = index.size();
    let checked: u64 = (0..2 * n)
        .into_par_iter()
        .map(|slot| {
            let turn = if slot < n { Color::White } else { Color::Black };
            let i = slot % n;
            let Some(want) = table.value_at(turn, i) else {
                return 0;
            };
            let pos = Position::from_board(index.decode(i).unwrap(), turn).unwrap();
            assert_eq!(tb.value(&pos).unwrap(), want, "{pos:?}");
            assert_eq!(tb.wdl(&pos).unwrap(), want.wdl(), "{pos:?}");
            1
        })
        .sum();
    assert!(checked > 1_000_000, "{checked}");

    let diamond = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1").unwrap();
    let probe = tb.probe(&diamond).unwrap();
    assert_eq!(probe.value, Value::Win(39));
    assert_eq!(probe.best_move().unwrap().value, Value::Win(39));
    let line = tb.line(&diamond).unwrap();
    assert_eq!(line.len(), 39);
    assert!(line.last().unwrap().end.is_some());

    let report = verify(&tb, "KQvKQ".parse().unwrap(), &NoProgress).unwrap();
    assert_eq!(report.mismatch_count, 0, "{:?}", report.mismatches);
    assert_eq!(report.checked, checked);
    // the mirror material is answered from the same table
    let info = tb.table_info("KQvKQ".parse().unwrap()).unwrap();
    let longest = info.white.longest_win.as_ref().unwrap();
    assert!(longest.plies >= 39);
    let p = Position::from_fen(&longest.fen).unwrap();
    assert_eq!(tb.value(&p).unwrap(), Value::Win(longest.plies));
    assert_eq!(
        info.white.legal,
        info.white.win + info.white.draw + info.white.loss
    );
}

#[test]
fn regeneration_is_byte_identical_and_existing_tables_are_kept() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    generated(a.path(), "KRvKN");
    generated(b.path(), "KRvKN");
    let m: Material = "KRvKN".parse().unwrap();
    for (pa, pb) in [
        paths(a.path(), m, RuleSet::default()),
        paths(b.path(), m, RuleSet::default()),
    ]
    .iter()
    .zip([
        paths(b.path(), m, RuleSet::default()),
        paths(a.path(), m, RuleSet::default()),
    ])
    .map(|(x, y)| ((x.0.clone(), y.0), (x.1.clone(), y.1)))
    {
        assert_eq!(std::fs::read(&pa.0).unwrap(), std::fs::read(&pa.1).unwrap());
        assert_eq!(std::fs::read(&pb.0).unwrap(), std::fs::read(&pb.1).unwrap());
    }
    let again = generated(a.path(), "KRvKN");
    assert!(matches!(again.last(), Some(TableOutcome::Kept(_))));
}

#[test]
fn damaged_and_foreign_files_give_errors() {
    let dir = tempfile::tempdir().unwrap();
    generated(dir.path(), "KNvKB");
    let m: Material = "KNvKB".parse().unwrap();
    let (wdl, dtm) = paths(dir.path(), m, RuleSet::default());
    let pos = Position::from_fen("8/8/3k4/8/2b5/8/8/KN6 w").unwrap();

    // a file of another rule set under this rule set's name
    let immediate: RuleSet = "bare-king=immediate".parse().unwrap();
    let other = tempfile::tempdir().unwrap();
    generate_into(other.path(), &[m], immediate, &NoProgress, |_| {}).unwrap();
    let (_, foreign) = paths(other.path(), m, immediate);
    std::fs::copy(&foreign, &dtm).unwrap();
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let e = tb.value(&pos).unwrap_err();
    assert!(matches!(e, ProbeError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("wrong rule set"), "{e}");

    // truncated
    let bytes = std::fs::read(&wdl).unwrap();
    std::fs::write(&wdl, &bytes[..bytes.len() / 2]).unwrap();
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let e = tb.wdl(&pos).unwrap_err();
    assert!(e.to_string().contains(&wdl.display().to_string()), "{e}");

    // missing
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let e = tb
        .value(&Position::from_fen("8/8/3k4/8/2r5/8/8/KR6 w").unwrap())
        .unwrap_err();
    assert!(matches!(e, ProbeError::MissingTable { .. }));
    assert!(e.to_string().contains("shatranj-tb generate KRvKR"), "{e}");
}

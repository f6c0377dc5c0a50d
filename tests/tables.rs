//! Table files end to end: generation into a directory, probing from the files, verify,
//! determinism and damage.

#[path = "support/tables.rs"]
mod support_tables;

use rayon::prelude::*;
use shatranj_tb::generate::NoProgress;
use shatranj_tb::generate::files::{TableOutcome, generate_into, paths, verify, verify_with};
use shatranj_tb::index::TableIndex;
use shatranj_tb::probe::{ProbeError, Tablebase};
use shatranj_tb::{Color, Material, Position, RuleSet, Value};
use support_tables::{
    OTHER_RULES_MATERIALS, count_legal_placements, default_tables, five_man_tables, tables_for,
};

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
fn files_answer_like_the_generator() {
    let mut memory = shatranj_tb::generate::memory::MemoryTables::new(RuleSet::default());
    let table = memory.generate("KQvKQ".parse().unwrap()).unwrap().clone();
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
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

    // the mirror material is answered from the same table
    let info = tb.table_info("KQvKQ".parse().unwrap()).unwrap();
    let longest = info.white.longest_win.as_ref().unwrap();
    assert!(longest.plies >= 39);
    let p = Position::from_fen(&longest.fen).unwrap();
    assert_eq!(tb.value(&p).unwrap(), Value::Win(longest.plies));
    // the figures count every legal placement once, as placing the men says
    let kqkq: Material = "KQvKQ".parse().unwrap();
    for (side, turn) in [(&info.white, Color::White), (&info.black, Color::Black)] {
        assert_eq!(side.legal, count_legal_placements(kqkq, turn), "{turn:?}");
        assert_eq!(side.legal, side.win + side.draw + side.loss, "{turn:?}");
    }
}

#[test]
fn regeneration_is_byte_identical_and_existing_tables_are_kept() {
    let a = tempfile::tempdir().unwrap();
    generated(a.path(), "KRvKN");
    let m: Material = "KRvKN".parse().unwrap();
    let (wa, da) = paths(a.path(), m, RuleSet::default());
    let (wb, db) = paths(default_tables(), m, RuleSet::default());
    for (x, y) in [(&wa, &wb), (&da, &db)] {
        let same = std::fs::read(x).unwrap() == std::fs::read(y).unwrap();
        assert!(same, "{} and {} differ", x.display(), y.display());
    }
    // a temporary file left by an interrupted generation (a process that no longer runs)
    std::fs::write(
        a.path().join(".KRvKN.counter-loss.tbd.tmp.999999999.0"),
        b"half",
    )
    .unwrap();
    let again = generated(a.path(), "KRvKN");
    assert!(matches!(again.last(), Some(TableOutcome::Kept(_))));
    // no temporary files are left behind
    let names: Vec<_> = std::fs::read_dir(a.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    // the WDL, DTM and DTZ files
    assert_eq!(names.len(), 3, "{names:?}");
}

/// The names in a folder, sorted.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// A table with a lone pawn is made a slice at a time through temporary files beside its
/// own: its files are the same bytes as the default set's (whose MANIFEST predates the
/// slices), and nothing else is left in the folder, after a run as after one that fails.
#[test]
fn a_table_made_in_slices_leaves_its_files_only() {
    let a = tempfile::tempdir().unwrap();
    let m: Material = "KRvKP".parse().unwrap();
    assert_eq!(TableIndex::for_generation(m).slices().len(), 4);
    // KRvKP reads KRvK (the rules decide), KQvKR... copy what it reads from the default set
    for sub in shatranj_tb::generate::plan::reads(m) {
        for metric in ["tbw", "tbd", "tbz"] {
            let name = format!("{sub}.counter-loss.{metric}");
            std::fs::copy(default_tables().join(&name), a.path().join(&name)).unwrap();
        }
    }
    let before = names(a.path()).len();
    shatranj_tb::generate::files::generate_one(a.path(), m, RuleSet::default(), &NoProgress)
        .unwrap();
    for metric in ["tbw", "tbd", "tbz"] {
        let name = format!("KRvKP.counter-loss.{metric}");
        let same = std::fs::read(a.path().join(&name)).unwrap()
            == std::fs::read(default_tables().join(&name)).unwrap();
        assert!(same, "{name} differs from the default set's");
    }
    assert_eq!(names(a.path()).len(), before + 3, "{:?}", names(a.path()));
    // a run stopped halfway (in the first slice's DTZ, its codes already written to a
    // temporary file) leaves nothing either
    let b = tempfile::tempdir().unwrap();
    for name in names(a.path()) {
        if !name.starts_with("KRvKP.") {
            std::fs::copy(a.path().join(&name), b.path().join(&name)).unwrap();
        }
    }
    let before = names(b.path());
    let stop = StopAtDtz::default();
    let stopped =
        shatranj_tb::generate::files::generate_one(b.path(), m, RuleSet::default(), &stop);
    assert!(stopped.is_err());
    assert!(stop.0.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(names(b.path()), before);
}

/// A table stopped once its WDL and DTM files are in place (in its DTZ retrograde, while
/// its DTZ file is read back, or in the check after writing) fails as cancelled and
/// leaves none of its files, so that the folder is as it was; one not stopped is made.
#[test]
fn a_table_stopped_after_its_first_files_leaves_none() {
    let m: Material = "KRvKN".parse().unwrap();
    assert_eq!(TableIndex::for_generation(m).slices().len(), 1);
    let dir = tempfile::tempdir().unwrap();
    for sub in shatranj_tb::generate::plan::reads(m) {
        for metric in ["tbw", "tbd", "tbz"] {
            let name = format!("{sub}.counter-loss.{metric}");
            std::fs::copy(default_tables().join(&name), dir.path().join(&name)).unwrap();
        }
    }
    let before = names(dir.path());
    let file = |metric: &str| dir.path().join(format!("{m}.counter-loss.{metric}"));
    let dtz_temporary = || {
        names(dir.path())
            .iter()
            .any(|n| n.starts_with(&format!(".{m}.counter-loss.tbz.tmp.")))
    };
    let in_dtz = StopWhen::new(|| file("tbd").exists() && file("tbw").exists());
    let reading_dtz_back = StopWhen::new(dtz_temporary);
    let in_check = StopWhen::new(|| file("tbz").exists());
    for stop in [in_dtz, reading_dtz_back, in_check] {
        let stopped =
            shatranj_tb::generate::files::generate_one(dir.path(), m, RuleSet::default(), &stop);
        assert!(
            matches!(stopped, Err(shatranj_tb::generate::GenError::Cancelled)),
            "{stopped:?}"
        );
        assert!(stop.fired.load(std::sync::atomic::Ordering::Relaxed));
        assert_eq!(names(dir.path()), before);
    }
    let made = shatranj_tb::generate::files::generate_one(
        dir.path(),
        m,
        RuleSet::default(),
        &StopWhen::new(|| false),
    );
    assert!(matches!(made, Ok(TableOutcome::Written { .. })), "{made:?}");
    assert_eq!(names(dir.path()).len(), before.len() + 3);
}

/// A progress that asks to stop from the first time `when` holds.
struct StopWhen<'a> {
    when: Box<dyn Fn() -> bool + Sync + 'a>,
    fired: std::sync::atomic::AtomicBool,
}

impl<'a> StopWhen<'a> {
    fn new(when: impl Fn() -> bool + Sync + 'a) -> StopWhen<'a> {
        StopWhen {
            when: Box::new(when),
            fired: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl shatranj_tb::generate::Progress for StopWhen<'_> {
    fn cancelled(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if self.fired.load(Relaxed) {
            return true;
        }
        let now = (self.when)();
        if now {
            self.fired.store(true, Relaxed);
        }
        now
    }
}

/// A progress that asks to stop once a DTZ pass begins.
#[derive(Default)]
struct StopAtDtz(std::sync::atomic::AtomicBool);

impl shatranj_tb::generate::Progress for StopAtDtz {
    fn begin(&self, pass: &str, _total: u64) {
        if pass.contains("DTZ") {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[test]
fn damaged_and_foreign_files_give_errors() {
    let dir = tempfile::tempdir().unwrap();
    let m: Material = "KNvKB".parse().unwrap();
    let (wdl, dtm) = paths(dir.path(), m, RuleSet::default());
    let (wdl0, dtm0) = paths(default_tables(), m, RuleSet::default());
    std::fs::copy(wdl0, &wdl).unwrap();
    std::fs::copy(dtm0, &dtm).unwrap();
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

#[test]
fn every_table_up_to_four_men_verifies() {
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let materials = tb.materials();
    assert_eq!(materials.len(), 15);
    for m in materials {
        let report = verify(&tb, m, &NoProgress).unwrap();
        assert_eq!(report.mismatch_count, 0, "{m}: {:?}", report.mismatches);
        assert!(report.checked > 1_000_000, "{m}: {}", report.checked);
    }
    // rook v ferz: White to move never loses
    let info = tb.table_info("KRvKQ".parse().unwrap()).unwrap();
    assert_eq!(info.white.loss, 0);
    assert!(info.white.win > 10_000_000);
    // and the other way round, from the same file
    let mirror = tb.table_info("KQvKR".parse().unwrap()).unwrap();
    assert_eq!(mirror.black.loss, 0);
    assert_eq!(mirror.black.win, info.white.win);
}

/// The 4-man tables of the other three rule sets (each set generated into a folder of
/// its own: `OTHER_RULES_MATERIALS` and what they depend on) re-derive from their
/// children too (WDL, DTM and DTZ), and differ from the default set's. The default set is
/// verified whole above; these at `OTHER_RULES_SAMPLE` random positions a table (a
/// different draw for each rule set). `None` verifies every position.
const OTHER_RULES_SAMPLE: Option<u64> = Some(100_000);

#[test]
fn every_rule_set_verifies() {
    let default = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let wanted: Vec<Material> = OTHER_RULES_MATERIALS
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    for rules in RuleSet::ALL
        .into_iter()
        .filter(|r| *r != RuleSet::default())
    {
        let tb = Tablebase::open(tables_for(rules), rules).unwrap();
        let materials = tb.materials();
        for m in &wanted {
            assert!(materials.contains(m), "{rules}: no {m} in {materials:?}");
        }
        let mut differ = 0;
        for m in materials {
            let sample = OTHER_RULES_SAMPLE.map(|n| (n, u64::from(rules.code())));
            let report = verify_with(&tb, m, sample, &NoProgress).unwrap();
            assert_eq!(
                report.mismatch_count, 0,
                "{rules} {m}: {:?}",
                report.mismatches
            );
            assert!(
                report.checked >= OTHER_RULES_SAMPLE.unwrap_or(1_000_000),
                "{rules} {m}: {}",
                report.checked
            );
            let (a, b) = (tb.table_info(m).unwrap(), default.table_info(m).unwrap());
            assert_eq!(a.white.legal, b.white.legal, "{rules} {m}");
            differ += usize::from(a.white != b.white || a.black != b.black);
        }
        assert!(
            differ > 0,
            "{rules}: every table as under the default rules"
        );
    }
}

/// A 5-man table, too large to verify whole in the suite, checked at 100,000 random
/// positions.
#[test]
fn a_five_man_table_verifies_by_sample() {
    let m: Material = "KBBvKN".parse().unwrap();
    let tb = Tablebase::open(five_man_tables(&[m]), RuleSet::default()).unwrap();
    let report = verify_with(&tb, m, Some((100_000, 7)), &NoProgress).unwrap();
    assert_eq!(report.mismatch_count, 0, "{:?}", report.mismatches);
    assert_eq!(report.checked, 100_000);
}

/// A tablebase in a fresh folder holding `m`'s WDL file as generated and its DTM file
/// with its codes (slot order) changed by `change`.
fn with_dtm_codes_changed(
    m: Material,
    change: impl FnOnce(&mut [u16]),
) -> (tempfile::TempDir, Tablebase) {
    use shatranj_tb::format::{self, TableFile};
    let dir = tempfile::tempdir().unwrap();
    let (wdl0, dtm0) = paths(default_tables(), m, RuleSet::default());
    let (wdl, dtm) = paths(dir.path(), m, RuleSet::default());
    std::fs::copy(wdl0, wdl).unwrap();
    let file = TableFile::open(&dtm0).unwrap();
    let mut codes = file.read_all().unwrap();
    change(&mut codes);
    format::write_table_with(&dtm, file.meta(), &codes, &format::WriteOptions::default()).unwrap();
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    (dir, tb)
}

/// A sampled verify (what `generate` runs on every table it writes, and `verify --sample`)
/// finds a table whose wins were turned into draws.
#[test]
fn a_sample_finds_a_damaged_table() {
    let m: Material = "KRvKN".parse().unwrap();
    let draw = Value::Draw.to_dtm_code().unwrap();
    let (_dir, tb) = with_dtm_codes_changed(m, |codes| {
        let mut changed = 0;
        for c in codes {
            if *c != shatranj_tb::format::UNUSED
                && matches!(Value::from_dtm_code(*c), Value::Win(_))
            {
                *c = draw;
                changed += 1;
            }
        }
        assert!(changed > 1_000_000, "{changed}");
    });
    let report = verify_with(&tb, m, Some((2_000, 1)), &NoProgress).unwrap();
    assert_eq!(report.checked, 2_000);
    assert!(report.mismatch_count > 100, "{report:?}");
    assert!(
        report
            .mismatches
            .iter()
            .any(|l| l.contains("stored draw (WDL file: win)")),
        "{report:?}"
    );
}

/// A whole verify (which reads its own table's DTM codes once instead of probing them)
/// finds a single win made two plies longer, and names that position.
#[test]
fn a_whole_verify_finds_one_altered_value() {
    let m: Material = "KRvKR".parse().unwrap();
    let index = TableIndex::new(m);
    let mut altered = None;
    let (_dir, tb) = with_dtm_codes_changed(m, |codes| {
        let (slot, pos, plies) = (0..index.size())
            .find_map(|i| {
                let code = codes[i as usize];
                if code == shatranj_tb::format::UNUSED {
                    return None;
                }
                let Value::Win(plies) = Value::from_dtm_code(code) else {
                    return None;
                };
                let board = index.decode(i)?;
                let pos = Position::from_board(board, Color::White).ok()?;
                (plies >= 5 && index.encode(&board) == Some(i)).then_some((i, pos, plies))
            })
            .expect("a win of 5 plies or more");
        codes[slot as usize] = Value::Win(plies + 2).to_dtm_code().unwrap();
        altered = Some((pos, plies));
    });
    let (pos, plies) = altered.unwrap();
    let report = verify(&tb, m, &NoProgress).unwrap();
    let fen = pos.fen();
    assert!(report.mismatch_count >= 1, "{report:?}");
    assert!(
        report
            .mismatches
            .iter()
            .any(|l| l.starts_with(&format!("{fen}: stored win in {} plies", plies + 2))),
        "{fen} not among {:?}",
        report.mismatches
    );
}

/// `tables/MANIFEST` lists the CRC-32 of every file of the default set: regenerating the
/// set must give the same bytes.
#[test]
fn default_tables_match_the_manifest() {
    let manifest_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tables/MANIFEST");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let mut listed = 0;
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut parts = line.split_whitespace();
        let (Some(name), Some(size), Some(crc)) = (parts.next(), parts.next(), parts.next()) else {
            panic!("bad manifest line: {line}");
        };
        let bytes = std::fs::read(default_tables().join(name)).unwrap();
        assert_eq!(bytes.len().to_string(), size, "{name}: size");
        assert_eq!(
            format!("{:08x}", crc32fast::hash(&bytes)),
            crc,
            "{name}: checksum"
        );
        listed += 1;
    }
    assert_eq!(listed, 45, "15 tables, three files each (WDL, DTM, DTZ)");
    // and it is, byte for byte, the MANIFEST `generate --men 4` writes into its folder
    let written = shatranj_tb::generate::manifest::manifest_text(default_tables()).unwrap();
    assert_eq!(written, manifest);
}

#[test]
fn cached_probes_answer_from_memory_only() {
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let diamond = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1").unwrap();
    // No file is open yet: no answer without reading.
    assert_eq!(tb.probe_cached(&diamond).unwrap(), None);
    assert_eq!(tb.value_cached(&diamond).unwrap(), None);
    // Positions the rules decide need no file; a missing table needs none to be known.
    let bare = Position::from_fen("8/8/8/4k3/8/8/7R/K7 b - - 0 1").unwrap();
    assert_eq!(
        tb.probe_cached(&bare).unwrap(),
        Some(tb.probe(&bare).unwrap())
    );
    let five = Position::from_fen("8/8/8/3k4/8/1KQ5/8/qr6 w - - 0 1").unwrap();
    assert!(matches!(
        tb.probe_cached(&five),
        Err(ProbeError::MissingTable { .. })
    ));
    // Once probed, the blocks are cached: the same answer from memory.
    assert_eq!(tb.dtz_cached(&diamond).unwrap(), None);
    let probe = tb.probe(&diamond).unwrap();
    // the DTZ too: read once, then from memory (a DTZ file of the 4-man set is here)
    let dtz = probe
        .dtz
        .expect("the DTZ of a position whose DTZ file is here");
    assert_eq!(dtz.category, shatranj_tb::Category::Win);
    assert!(dtz.plies >= 1 && dtz.plies <= 39, "{dtz:?}");
    assert_eq!(tb.probe_cached(&diamond).unwrap(), Some(probe));
    assert_eq!(tb.dtz_cached(&diamond).unwrap(), Some(dtz));
    assert_eq!(tb.value_cached(&diamond).unwrap(), Some(Value::Win(39)));
}

/// `probe` finds the successors of quiet moves by index arithmetic: every move's value
/// must be what probing the position after it says, for every material of the set in
/// both colour orientations and with either side to move.
#[test]
fn probe_moves_agree_with_their_successors() {
    use rand::{Rng, SeedableRng};
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut checked = 0;
    for stored in tb.materials() {
        let index = TableIndex::new(stored);
        let mut positions = 0;
        while positions < 400 {
            let Some(board) = index.decode(rng.gen_range(0..index.size())) else {
                continue;
            };
            let turn = if rng.r#gen::<bool>() {
                Color::White
            } else {
                Color::Black
            };
            let Ok(pos) = Position::from_board(board, turn) else {
                continue;
            };
            // the stored orientation and its mirror (the other material's name)
            for pos in [pos, pos.swap_colors()] {
                let probe = tb.probe(&pos).unwrap();
                assert_eq!(tb.probe_cached(&pos).unwrap().as_ref(), Some(&probe));
                let moves = tb.probe_moves(&pos).unwrap();
                assert_eq!(moves.moves.len(), probe.moves.len());
                for ((m, v), mv) in moves.moves.iter().zip(&probe.moves) {
                    let after = tb.value(&pos.play_unchecked(m)).unwrap();
                    assert_eq!(*v, after.parent(), "{} {}", pos.fen(), m.to_uci());
                    assert_eq!(mv.uci, m.to_uci());
                    assert_eq!(mv.value, *v);
                    checked += 1;
                }
                assert!(
                    probe.moves.windows(2).all(|w| w[0].value > w[1].value
                        || (w[0].value == w[1].value && w[0].uci < w[1].uci)),
                    "{}: {:?}",
                    pos.fen(),
                    probe.moves
                );
            }
            positions += 1;
        }
    }
    assert!(checked > 50_000, "{checked}");
}

/// A `Tablebase` held behind `&self` finds tables put into its directory after it was
/// opened: at once with `refresh`, and by itself after a miss (the directory is listed
/// again at most once every `RESCAN_INTERVAL`).
#[test]
fn tables_added_later_are_found() {
    use shatranj_tb::probe::RESCAN_INTERVAL;
    let source = default_tables();
    let dir = tempfile::tempdir().unwrap();
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let kqkq: Material = "KQvKQ".parse().unwrap();
    let krkq: Material = "KRvKQ".parse().unwrap();
    assert!(!tb.has_table(kqkq) && tb.materials().is_empty());
    for name in ["KQvKQ.counter-loss.tbd", "KQvKQ.counter-loss.tbw"] {
        std::fs::copy(source.join(name), dir.path().join(name)).unwrap();
    }
    tb.refresh().unwrap();
    assert!(tb.has_table(kqkq));
    assert_eq!(tb.materials(), vec![kqkq]);
    let pos = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1").unwrap();
    assert_eq!(tb.value(&pos).unwrap(), Value::Win(39));

    // without refresh: a miss looks again once the interval has passed
    assert!(!tb.has_table(krkq));
    for name in ["KRvKQ.counter-loss.tbd", "KRvKQ.counter-loss.tbw"] {
        std::fs::copy(source.join(name), dir.path().join(name)).unwrap();
    }
    std::thread::sleep(RESCAN_INTERVAL + std::time::Duration::from_millis(50));
    assert!(tb.has_table(krkq));
    assert!(tb.has_table("KQvKR".parse().unwrap()));
}

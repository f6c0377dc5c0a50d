//! DTZ against a naive solver of its own, the DTZ figures against a scan of the files,
//! and the move rule's files against those without it.
//!
//! The naive solver knows nothing of the generator: it walks the positions of KBvKP
//! (White shah and alfil, Black shah and pawn) with the forward move generator only, a
//! leading-pawn square at a time (a pawn move leads to a square already solved), and
//! repeats a Bellman step over every position of the square until nothing changes. The
//! leaves it needs from elsewhere are the rules (a capture bares a side here) and, for a
//! promotion, the category of the KBvKQ position, read from that table.

#[path = "support/tables.rs"]
mod support_tables;

use rayon::prelude::*;
use shatranj_tb::format::TableFile;
use shatranj_tb::generate::files::generate_into;
use shatranj_tb::generate::{NoProgress, dtz::DtzStats};
use shatranj_tb::probe::Tablebase;
use shatranj_tb::{
    Board, Category, Color, Dtz, Material, MoveRule, Piece, Position, Role, RuleSet, Square, Value,
    Wdl,
};

/// A naive value: `None` undecided, else (win, plies) or a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Naive {
    Open,
    Win(u32),
    Loss(u32),
    Draw,
}

/// The slot of a KBvKP position with its pawn fixed: White shah, alfil, Black shah, turn.
fn key(wk: Square, wa: Square, bk: Square, turn: Color) -> usize {
    ((wk.index() * 64 + wa.index()) * 64 + bk.index()) * 2 + turn.index()
}

fn position(wk: Square, wa: Square, bk: Square, bp: Square, turn: Color) -> Option<Position> {
    let squares = [wk, wa, bk, bp];
    for (i, a) in squares.iter().enumerate() {
        if squares[i + 1..].contains(a) {
            return None;
        }
    }
    let mut b = Board::empty();
    let put = |b: &mut Board, sq, color, role| b.set_piece_at(sq, Piece { color, role });
    put(&mut b, wk, Color::White, Role::Shah);
    put(&mut b, wa, Color::White, Role::Alfil);
    put(&mut b, bk, Color::Black, Role::Shah);
    put(&mut b, bp, Color::Black, Role::Pawn);
    Position::from_board(b, turn).ok()
}

/// The category of a position outside KBvKP after a capture or a promotion, for the side
/// to move there.
fn leaf_category(tb: &Tablebase, rules: RuleSet, child: &Position) -> Category {
    if let Some(v) = Value::of_decided(child, rules) {
        return match v.wdl() {
            Wdl::Win => Category::Win,
            Wdl::Draw => Category::Draw,
            Wdl::Loss => Category::Loss,
        };
    }
    tb.dtz(child).expect("the KBvKQ table").category
}

/// Solves every KBvKP position with the pawn on `bp`, given the squares solved before
/// (`solved[sq]` for pawn squares nearer promotion).
fn solve_square(
    tb: &Tablebase,
    rules: RuleSet,
    bp: Square,
    solved: &[Option<Vec<Naive>>],
) -> Vec<Naive> {
    let n = 64 * 64 * 64 * 2;
    let positions: Vec<Option<Position>> = (0..n)
        .into_par_iter()
        .map(|k| {
            let turn = if k % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            let bk = Square::new(((k / 2) % 64) as u32);
            let wa = Square::new(((k / 128) % 64) as u32);
            let wk = Square::new((k / 8192) as u32);
            position(wk, wa, bk, bp, turn)
        })
        .collect();
    let category_of = |v: Naive| match v {
        Naive::Win(_) => Category::Win,
        Naive::Loss(_) => Category::Loss,
        Naive::Draw => Category::Draw,
        Naive::Open => unreachable!("a solved square has no open position"),
    };
    // Each move of each position: `Err(category)` for a zeroing move, `Ok(key)` for one
    // that stays on this pawn square.
    let moves: Vec<Vec<Result<usize, Category>>> = positions
        .par_iter()
        .map(|p| {
            let Some(p) = p else { return Vec::new() };
            p.legal_moves()
                .iter()
                .map(|m| {
                    let c = p.play_unchecked(m);
                    if m.capture.is_some() || m.promotion {
                        Err(leaf_category(tb, rules, &c))
                    } else if m.role == Role::Pawn {
                        let b = c.board();
                        let k = key(
                            b.shah_of(Color::White).unwrap(),
                            b.by_role(Role::Alfil).first().unwrap(),
                            b.shah_of(Color::Black).unwrap(),
                            c.turn(),
                        );
                        let sq = b.by_role(Role::Pawn).first().unwrap();
                        let done = solved[sq.index()].as_ref().expect("solved before");
                        Err(category_of(done[k]))
                    } else {
                        let b = c.board();
                        Ok(key(
                            b.shah_of(Color::White).unwrap(),
                            b.by_role(Role::Alfil).first().unwrap(),
                            b.shah_of(Color::Black).unwrap(),
                            c.turn(),
                        ))
                    }
                })
                .collect()
        })
        .collect();
    let mut values: Vec<Naive> = positions
        .iter()
        .zip(&moves)
        .map(|(p, ms)| match p {
            None => Naive::Draw,
            Some(p) if ms.is_empty() => match Value::of_ended(p, rules) {
                Some(Value::Loss(_)) => Naive::Loss(0),
                Some(Value::Win(_)) => Naive::Win(0),
                _ => Naive::Draw,
            },
            Some(_) => Naive::Open,
        })
        .collect();
    // A Bellman step: every open position from the values of the step before.
    for step in 1u32.. {
        let next: Vec<Option<Naive>> = (0..n)
            .into_par_iter()
            .map(|k| {
                if values[k] != Naive::Open {
                    return None;
                }
                let mut all_lose = true;
                let mut longest = 0;
                for m in &moves[k] {
                    let (wins, loses) = match *m {
                        Err(Category::Loss) => (Some(1), None),
                        Err(Category::Win) => (None, Some(1)),
                        Err(_) => (None, None),
                        Ok(c) => match values[c] {
                            Naive::Loss(d) => (Some(d + 1), None),
                            Naive::Win(d) => (None, Some(d + 1)),
                            _ => (None, None),
                        },
                    };
                    if let Some(w) = wins {
                        if w == step {
                            return Some(Naive::Win(w));
                        }
                    }
                    match loses {
                        Some(l) => longest = longest.max(l),
                        None => all_lose = false,
                    }
                }
                (all_lose && longest == step).then_some(Naive::Loss(step))
            })
            .collect();
        let mut changed = false;
        for (v, x) in values.iter_mut().zip(next) {
            if let Some(x) = x {
                *v = x;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for v in &mut values {
        if *v == Naive::Open {
            *v = Naive::Draw;
        }
    }
    values
}

/// Solves KBvKP naively and compares every position with `tb`'s DTZ; returns the longest
/// win and loss with each side to move.
fn compare_kbvkp(tb: &Tablebase, rules: RuleSet) -> [(u32, u32); 2] {
    let mut solved: Vec<Option<Vec<Naive>>> = vec![None; 64];
    let mut longest = [(0, 0); 2];
    let mut compared = 0u64;
    // the Black pawn walks down: rank 2 first (its moves promote)
    for rank in 1..7 {
        for file in 0..8 {
            let bp = Square::from_coords(file, rank);
            let values = solve_square(tb, rules, bp, &solved);
            for (k, v) in values.iter().enumerate() {
                let turn = if k % 2 == 0 {
                    Color::White
                } else {
                    Color::Black
                };
                let bk = Square::new(((k / 2) % 64) as u32);
                let wa = Square::new(((k / 128) % 64) as u32);
                let wk = Square::new((k / 8192) as u32);
                let Some(pos) = position(wk, wa, bk, bp, turn) else {
                    continue;
                };
                let got = tb.dtz(&pos).expect("a KBvKP DTZ");
                let want = match *v {
                    Naive::Win(d) => Dtz::from_plies(Wdl::Win, d, rules.move_rule),
                    Naive::Loss(d) => Dtz::from_plies(Wdl::Loss, d, rules.move_rule),
                    Naive::Draw => Dtz::from_plies(Wdl::Draw, 0, rules.move_rule),
                    Naive::Open => unreachable!(),
                };
                assert_eq!(got, want, "{} under {rules}", pos.fen());
                let side = &mut longest[turn.index()];
                match *v {
                    Naive::Win(d) => side.0 = side.0.max(d),
                    Naive::Loss(d) => side.1 = side.1.max(d),
                    _ => {}
                }
                compared += 1;
            }
            solved[bp.index()] = Some(values);
        }
    }
    assert!(compared > 15_000_000, "{compared} positions compared");
    longest
}

fn kbvkp() -> Material {
    "KBvKP".parse().unwrap()
}

#[test]
fn dtz_of_every_kbvkp_position_is_the_naive_solvers() {
    let tb = Tablebase::open(support_tables::default_tables(), RuleSet::default()).unwrap();
    let longest = compare_kbvkp(&tb, RuleSet::default());
    // and the figures in the file are those the naive solver found
    let stats = tb.dtz_stats(kbvkp()).unwrap();
    assert_eq!(
        (stats.white.longest_win, stats.white.longest_loss),
        longest[0]
    );
    assert_eq!(
        (stats.black.longest_win, stats.black.longest_loss),
        longest[1]
    );
    assert!(longest[0].0 > 10, "{longest:?}");
}

/// Under the 70-move rule (no win of KBvKP needs more than 140 plies between zeroing
/// moves) the values are those without it (which the naive solver checks), every one of
/// them a plain win, draw or loss.
#[test]
fn dtz_of_kbvkp_under_the_move_rule_is_the_same() {
    let rules = RuleSet::default().with_move_rule(MoveRule::Seventy);
    let dir = tempfile::tempdir().unwrap();
    generate_into(dir.path(), &[kbvkp()], rules, &NoProgress, |_| {}).unwrap();
    let tb = Tablebase::open(dir.path(), rules).unwrap();
    // every value of the file is the one of the file without the move rule
    let seventy = tb.read_dtz_values(kbvkp()).unwrap();
    let plain = Tablebase::open(support_tables::default_tables(), RuleSet::default())
        .unwrap()
        .read_dtz_values(kbvkp())
        .unwrap();
    assert_eq!(seventy.len(), plain.len());
    assert!(
        seventy == plain,
        "the DTZ values differ under the move rule"
    );
    let stats: DtzStats = tb.dtz_stats(kbvkp()).unwrap();
    assert_eq!(stats.move_rule, "70");
    assert!(!stats.has_cursed());
    // the WDL and DTM files are those of the rules without the move rule, byte for byte
    let four = support_tables::default_tables();
    for ext in ["tbw", "tbd"] {
        let name = format!("KBvKP.counter-loss.{ext}");
        assert_eq!(
            std::fs::read(dir.path().join(&name)).unwrap(),
            std::fs::read(four.join(&name)).unwrap(),
            "{name}"
        );
    }
    assert!(dir.path().join("KBvKP.counter-loss-70.tbz").is_file());
}

/// The longest DTZ of each side of every 4-man table, as its file's figures say, against
/// a scan of every position: the file's values on the side to move it holds (each taken
/// as a win or a loss by the DTM file), the probe's answers (one move ahead) on the other.
#[test]
fn longest_dtz_figures_agree_with_a_scan_of_every_4_man_table() {
    let dir = support_tables::default_tables();
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let materials = tb.materials();
    assert!(materials.len() >= 15, "{} tables", materials.len());
    let mut one_side = 0;
    for m in materials {
        let stats = tb.dtz_stats(m).unwrap();
        let codes = tb.read_dtm_codes(m).unwrap();
        let plies = tb.read_dtz_values(m).unwrap();
        let index = shatranj_tb::index::TableIndex::new(m);
        let size = index.size() as usize;
        // a table that is its own mirror keeps White to move (Black's figures mirror it);
        // any other keeps the side its figures name
        // a file of both sides, or of one that says so, leaves out the wins by a zeroing
        // move
        let left_out = m.is_symmetric() || stats.zeroing_wins_left_out;
        let stored = if m.is_symmetric() {
            Some(Color::White)
        } else {
            one_side += 1;
            match stats.side_stored.as_deref() {
                Some("white") => Some(Color::White),
                Some("black") => Some(Color::Black),
                other => panic!("{m}: side stored {other:?}"),
            }
        };
        assert_eq!(plies.len(), size, "{m}: one side to move");
        for turn in [Color::White, Color::Black] {
            let stored_turn = if m.is_symmetric() { Color::White } else { turn };
            let legal = |i: usize| {
                index.decode(i as u64).and_then(|b| {
                    let pos = Position::from_board(b, stored_turn).ok()?;
                    (index.encode(&b) == Some(i as u64)).then_some(pos)
                })
            };
            let (lw, ll) = if stored == Some(stored_turn) {
                let base = stored_turn.index() * size;
                let (mut lw, mut ll) = (0, 0);
                for i in 0..size {
                    let c = codes[base + i];
                    // unused slots hold whatever compressed best: only positions count
                    if c == 0 || legal(i).is_none() {
                        continue;
                    }
                    let p = plies[i];
                    match (Value::from_dtm_code(c), left_out) {
                        // a win by a zeroing move left out holds any value, never less
                        // than 1: a value above the longest so far is asked of the probe
                        (Value::Win(_), true) if u32::from(p) > lw => {
                            lw = lw.max(tb.dtz(&legal(i).unwrap()).unwrap().plies);
                        }
                        (Value::Win(_), true) => {}
                        // a file of one side holds every win, by a zeroing move too
                        (Value::Win(_), false) => {
                            assert!(p > 0, "{m} {i}: a win of 0 plies");
                            lw = lw.max(u32::from(p));
                        }
                        (_, _) => ll = ll.max(u32::from(p)),
                    }
                }
                (lw, ll)
            } else {
                (0..size)
                    .into_par_iter()
                    .filter_map(legal)
                    .map(|pos| {
                        let d = tb.dtz(&pos).unwrap();
                        match d.category.wdl() {
                            Wdl::Win => (d.plies, 0),
                            Wdl::Loss => (0, d.plies),
                            Wdl::Draw => (0, 0),
                        }
                    })
                    .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)))
            };
            let side = stats.side(turn);
            assert_eq!(
                (side.longest_win, side.longest_loss),
                (lw, ll),
                "{m} {turn:?}"
            );
            assert_eq!(side.cursed_wins + side.blessed_losses, 0, "{m}");
        }
    }
    assert!(one_side >= 10, "{one_side} tables of one side to move");
}

/// A DTZ is never longer than the DTM of the same position: the end of the game is a
/// place the count stops too, and a zeroing move can only come sooner.
#[test]
fn dtz_is_at_most_dtm() {
    let tb = Tablebase::open(support_tables::default_tables(), RuleSet::default()).unwrap();
    for m in ["KQvKQ", "KRvKP", "KNvKB"] {
        let m = m.parse::<Material>().unwrap().normalized();
        let index = shatranj_tb::index::TableIndex::new(m);
        let bad = (0..index.size() / 7)
            .into_par_iter()
            .map(|i| 7 * i)
            .filter_map(|i| {
                let board = index.decode(i)?;
                let pos = Position::from_board(board, Color::White).ok()?;
                let d = tb.dtz(&pos).unwrap();
                let v = tb.value(&pos).unwrap();
                (d.category.wdl() != v.wdl() || v.dtm().is_some_and(|dtm| d.plies > dtm))
                    .then(|| pos.fen())
            })
            .collect::<Vec<_>>();
        assert!(bad.is_empty(), "{m}: {:?}", &bad[..bad.len().min(5)]);
    }
}

/// The Syzygy generator's shatranj DTZ files (`.jtbz`, `jtbgen`/`jtbgenp -t 2` of
/// syzygy1/tb, DTZ in moves as it makes them by default), in bytes, for the 4-man tables:
/// ours are no larger, but for the two whose files are of a few thousand bytes where
/// its pair substitution gains most (KBvKB 29,615 against 26,000, KRvKR 4,266 against
/// 3,408; docs/ARCHITECTURE.md, "A small table's digit order").
#[test]
fn dtz_files_are_no_larger_than_the_syzygy_generators() {
    const JTBZ: [(&str, u64); 13] = [
        ("KBvKP", 316_688),
        ("KNvKB", 116_880),
        ("KNvKN", 9_552),
        ("KNvKP", 698_640),
        ("KNvKQ", 120_784),
        ("KPvKP", 219_280),
        ("KQvKB", 93_456),
        ("KQvKP", 456_016),
        ("KQvKQ", 168_144),
        ("KRvKB", 258_704),
        ("KRvKN", 95_376),
        ("KRvKP", 220_688),
        ("KRvKQ", 280_272),
    ];
    let dir = support_tables::default_tables();
    let larger: Vec<String> = JTBZ
        .iter()
        .filter_map(|&(m, jtbz)| {
            let path = dir.join(format!("{m}.counter-loss.tbz"));
            let ours = std::fs::metadata(&path).unwrap().len();
            (ours > jtbz).then(|| format!("{m}: {ours} bytes against {jtbz}"))
        })
        .collect();
    assert!(larger.is_empty(), "{larger:?}");
}

/// `verify` re-derives DTZ from the children: a table whose DTZ file holds one wrong value
/// (rewritten whole, so every checksum holds) fails it, naming the position.
#[test]
fn verify_finds_one_altered_dtz_value() {
    let four = support_tables::default_tables();
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(four).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tbw") || name.ends_with(".tbd") || name.ends_with(".tbz") {
            std::fs::copy(entry.path(), dir.path().join(&name)).unwrap();
        }
    }
    let m: Material = "KQvKQ".parse().unwrap();
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    assert_eq!(
        shatranj_tb::generate::files::verify(&tb, m, &NoProgress)
            .unwrap()
            .mismatch_count,
        0
    );
    // a win of 7 plies that no zeroing move wins (so its value is read from the file)
    let index = shatranj_tb::index::TableIndex::new(m);
    let (slot, pos) = (0..index.size())
        .find_map(|i| {
            let board = index.decode(i)?;
            let pos = Position::from_board(board, Color::White).ok()?;
            (index.encode(&board) == Some(i)
                && tb.dtz(&pos).unwrap() == Dtz::from_plies(Wdl::Win, 7, MoveRule::None))
            .then_some((i, pos))
        })
        .expect("a win in 7 plies to a zeroing move");
    let path = dir.path().join("KQvKQ.counter-loss.tbz");
    let file = TableFile::open(&path).unwrap();
    let meta = file.meta().clone();
    let mut values = file.read_all().unwrap();
    drop(file);
    // the file keeps its values in the digit order its figures name
    let stats: DtzStats = serde_json::from_slice(&meta.extra).unwrap();
    let order =
        shatranj_tb::index::DigitOrder::new(&index, stats.digit_order.as_deref().unwrap()).unwrap();
    let slot = order.from_index(slot);
    assert_eq!(values[slot as usize], 7);
    values[slot as usize] = 9;
    let tb = rewrite(dir.path(), &path, &meta, &values);
    assert_eq!(
        tb.dtz(&pos).unwrap(),
        Dtz::from_plies(Wdl::Win, 9, MoveRule::None)
    );
    let report = shatranj_tb::generate::files::verify(&tb, m, &NoProgress).unwrap();
    // the position itself, and every predecessor whose DTZ went through it
    assert!(report.mismatch_count >= 1, "{report:?}");
    let fen = pos.fen();
    assert!(
        report.mismatches.iter().any(|l| l.starts_with(&fen)),
        "{fen} not among {:?}",
        report.mismatches
    );
}

/// A DTZ file of both sides to move (as files were written before DTZ files kept one
/// side) is still read: KRvKQ's values written so, for every position of both sides,
/// answer as the file of one side does.
#[test]
fn a_dtz_file_of_both_sides_is_still_read() {
    let m: Material = "KRvKQ".parse().unwrap();
    let (dir, path) = copy_of_default_table(m);
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let stats = tb.dtz_stats(m).unwrap();
    assert!(stats.side_stored.is_some(), "{stats:?}");
    let index = shatranj_tb::index::TableIndex::new(m);
    let dtz = dtz_of_every_slot(&tb, &index);
    let values: Vec<u16> = dtz
        .iter()
        .map(|d| match d {
            Some(d) if d.category != Category::Draw => d.plies as u16,
            _ => shatranj_tb::format::UNUSED,
        })
        .collect();
    let mut meta = TableFile::open(&path).unwrap().meta().clone();
    let both = DtzStats {
        side_stored: None,
        zeroing_wins_left_out: false,
        digit_order: None,
        ..stats
    };
    meta.index_scheme = shatranj_tb::index::INDEX_SCHEME;
    meta.extra = serde_json::to_vec(&both).unwrap();
    let tb = rewrite(dir.path(), &path, &meta, &values);
    assert_eq!(tb.dtz_stats(m).unwrap().side_stored, None);
    assert_eq!(slots_whose_dtz_differs(&tb, &index, &dtz), 0);
    assert!(
        dtz.iter()
            .flatten()
            .any(|d| d.category == Category::Win && d.plies > 20)
    );
}

/// A temporary folder holding a copy of the default files of the 4-man table `m`, and
/// the path of its DTZ file there.
fn copy_of_default_table(m: Material) -> (tempfile::TempDir, std::path::PathBuf) {
    let four = support_tables::default_tables();
    let dir = tempfile::tempdir().unwrap();
    for ext in ["tbw", "tbd", "tbz"] {
        let name = format!("{m}.counter-loss.{ext}");
        std::fs::copy(four.join(&name), dir.path().join(&name)).unwrap();
    }
    let path = dir.path().join(format!("{m}.counter-loss.tbz"));
    (dir, path)
}

/// The position of `slot` (both sides to move) where it names one (canonically).
fn position_at(index: &shatranj_tb::index::TableIndex, slot: u64) -> Option<Position> {
    let (turn, i) = index.split_slot(slot);
    let board = index.decode(i)?;
    let pos = Position::from_board(board, turn).ok()?;
    (index.encode(&board) == Some(i)).then_some(pos)
}

/// The DTZ `tb` gives the position of every slot of `index` (both sides to move).
fn dtz_of_every_slot(tb: &Tablebase, index: &shatranj_tb::index::TableIndex) -> Vec<Option<Dtz>> {
    (0..2 * index.size())
        .into_par_iter()
        .map(|s| position_at(index, s).map(|pos| tb.dtz(&pos).unwrap()))
        .collect()
}

/// How many positions `tb` gives a DTZ other than `dtz` (as [`dtz_of_every_slot`]).
fn slots_whose_dtz_differs(
    tb: &Tablebase,
    index: &shatranj_tb::index::TableIndex,
    dtz: &[Option<Dtz>],
) -> usize {
    (0..2 * index.size())
        .into_par_iter()
        .filter(|&s| {
            position_at(index, s).is_some_and(|pos| Some(tb.dtz(&pos).unwrap()) != dtz[s as usize])
        })
        .count()
}

/// A DTZ file keeps its side to move in the digit order its figures name (index scheme
/// 3); one in scheme 1's order (as files were written before) is still read, and gives
/// KRvKQ's every position the same DTZ; one whose figures name no digit order of its
/// table is an error naming the file and the order, not an answer.
#[test]
fn a_dtz_file_in_scheme_1_order_is_still_read_and_a_bad_digit_order_is_named() {
    use shatranj_tb::index::{DIGIT_ORDER_SCHEME, DigitOrder, INDEX_SCHEME, TableIndex};
    let m: Material = "KRvKQ".parse().unwrap();
    let (dir, path) = copy_of_default_table(m);
    let meta = TableFile::open(&path).unwrap().meta().clone();
    assert_eq!(meta.index_scheme, DIGIT_ORDER_SCHEME);
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let stats = tb.dtz_stats(m).unwrap();
    let order = stats.digit_order.clone().expect("a digit order");
    let values = tb.read_dtz_values(m).unwrap();
    let index = TableIndex::new(m);
    assert_eq!(values.len() as u64, index.size());
    let dtz = dtz_of_every_slot(&tb, &index);
    // the same values in scheme 1's order
    let mut scheme_1 = meta.clone();
    scheme_1.index_scheme = INDEX_SCHEME;
    scheme_1.extra = serde_json::to_vec(&DtzStats {
        digit_order: None,
        ..stats.clone()
    })
    .unwrap();
    let tb = rewrite(dir.path(), &path, &scheme_1, &values);
    assert_eq!(tb.dtz_stats(m).unwrap().digit_order, None);
    assert_eq!(
        TableFile::open(&path).unwrap().len(),
        index.size(),
        "scheme 1, one side"
    );
    assert_eq!(slots_whose_dtz_differs(&tb, &index, &dtz), 0);
    let wins = dtz.iter().flatten().filter(|d| d.category == Category::Win);
    assert!(wins.count() > 100_000);
    // a digit twice (and one missing) in scheme 3
    let mut bad = meta.clone();
    let mut twice = order.clone();
    twice[1] = twice[0];
    bad.extra = serde_json::to_vec(&DtzStats {
        digit_order: Some(twice),
        ..stats
    })
    .unwrap();
    let size = DigitOrder::new(&index, &order).unwrap().size() as usize;
    let tb = rewrite(dir.path(), &path, &bad, &vec![1u16; size]);
    let won = (0..2 * index.size()).find_map(|s| {
        position_at(&index, s)
            .filter(|_| dtz[s as usize].is_some_and(|d| d.category == Category::Win && d.plies > 1))
    });
    let err = tb.dtz(&won.expect("a win")).unwrap_err().to_string();
    assert!(
        err.contains("digit order") && err.contains("KRvKQ"),
        "{err}"
    );
}

/// Writes `values` as the table file at `path` (in `dir`) and opens the tablebase there
/// again.
fn rewrite(
    dir: &std::path::Path,
    path: &std::path::Path,
    meta: &shatranj_tb::format::TableMeta,
    values: &[u16],
) -> Tablebase {
    shatranj_tb::format::write_table_with(
        path,
        meta,
        values,
        &shatranj_tb::format::WriteOptions::default(),
    )
    .unwrap();
    Tablebase::open(dir, RuleSet::default()).unwrap()
}

//! The problem solver (`shatranj_tb::solve`) against the tables: with a 5-man table
//! removed, the search above the 4-man tables must give exactly the table's values,
//! keys and lines; and the classical problems of `tests/data/mansubat.csv`.

#[path = "support/random_position.rs"]
mod random_position;
#[path = "support/tables.rs"]
mod support_tables;

use std::sync::atomic::AtomicBool;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shatranj_tb::probe::Tablebase;
use shatranj_tb::solve::{self, NoProgress, Solution, SolveOptions, Verdict};
use shatranj_tb::{Color, Material, Position, Role, RuleSet, Value};

use random_position::{Params, place};
use support_tables::{default_tables, five_man_tables};

fn options(max_plies: u32) -> SolveOptions {
    SolveOptions {
        max_plies,
        hash_mb: 16,
        threads: 2,
        time_limit: None,
        tree_depth: 3,
    }
}

fn run(tb: &Tablebase, pos: &Position, opts: &SolveOptions) -> Solution {
    solve::solve(tb, pos, opts, &NoProgress, &AtomicBool::new(false))
        .unwrap_or_else(|e| panic!("solving {pos:?}: {e}"))
}

fn roles(s: &str) -> Vec<Role> {
    s.chars()
        .map(|c| Role::from_char(c).expect("a role letter"))
        .collect()
}

/// Random positions of `material` (e.g. "KBBvKN") whose table value is decisive within
/// `max_dtm` plies (and not over already): up to `per_kind` each of win and loss for each
/// side to move, among at most `tries` random placements each (some kinds are rare).
fn sample(
    tb5: &Tablebase,
    material: &str,
    max_dtm: u32,
    per_kind: usize,
    rng: &mut StdRng,
) -> Vec<(Position, Value)> {
    let (w, b) = material.split_once('v').expect("a material name");
    let (white, black) = (roles(&w[1..]), roles(&b[1..]));
    let params = Params {
        pawn_on_seventh: 0.0,
        ferz_on_last_rank: 0.0,
        ..Params::default()
    };
    let mut found = Vec::new();
    for turn in [Color::White, Color::Black] {
        for want_win in [true, false] {
            let mut n = 0;
            for _ in 0..100_000 {
                if n == per_kind {
                    break;
                }
                let Some(pos) = place(rng, &white, &black, turn, &params, 100) else {
                    continue;
                };
                let v = tb5.value(&pos).expect("the 5-man table answers");
                let ok = match v {
                    Value::Win(d) => want_win && d <= max_dtm,
                    Value::Loss(d) => !want_win && d <= max_dtm && d > 0,
                    Value::Draw => false,
                };
                if ok {
                    found.push((pos, v));
                    n += 1;
                }
            }
        }
    }
    found
}

/// 5-man positions with DTM up to 15 plies, both sides to move, wins and losses: the
/// solver over the 4-man tables alone gives the 5-man table's value, exactly the moves the
/// table rates best as keys, and a main line along which the table's distance falls by
/// one a ply. KBBvKN is the 5-man table the other suites generate too (a second table,
/// KRBvKR, cost the suite a minute and a half of generation on 2 cores).
#[test]
fn solver_matches_five_man_tables() {
    const TABLES: [&str; 1] = ["KBBvKN"];
    let materials: Vec<Material> = TABLES.iter().map(|m| m.parse().unwrap()).collect();
    let tb5 = Tablebase::open(five_man_tables(&materials), RuleSet::default()).unwrap();
    let tb4 = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let mut rng = StdRng::seed_from_u64(0x5017e);
    let mut checked = 0;
    let mut by_dtm = [0usize; 16];
    // White to move, Black to move, wins, losses
    let mut kinds = [0usize; 4];
    for material in TABLES {
        for (pos, v) in sample(&tb5, material, 15, 90, &mut rng) {
            assert!(!tb4.has_table(Material::from_board(pos.board())));
            let s = run(&tb4, &pos, &options(15));
            let expected = match v {
                Value::Win(_) => Verdict::Win,
                Value::Loss(_) => Verdict::Loss,
                Value::Draw => unreachable!(),
            };
            assert_eq!(
                (s.verdict, s.plies),
                (expected, v.dtm()),
                "{pos:?}: table says {v}, solver {}",
                s.in_words()
            );
            let probe = tb5.probe(&pos).unwrap();
            let mut best: Vec<String> = probe.best_moves().map(|m| m.uci.clone()).collect();
            let mut keys: Vec<String> = s.keys.iter().map(|k| k.mv.to_uci()).collect();
            best.sort();
            keys.sort();
            assert_eq!(keys, best, "{pos:?} ({v}): keys");
            assert!(s.keys.iter().all(|k| Some(k.plies) == v.dtm()));
            // the main line keeps the table's value falling by one a ply to the end
            let mut p = pos;
            let mut value = v;
            for m in &s.line {
                p = p.play_unchecked(m);
                let next = tb5.value(&p).unwrap();
                assert_eq!(next.parent(), value, "{pos:?}: line move {m} in the line");
                value = next;
            }
            assert_eq!(value.dtm(), Some(0), "{pos:?}: the line reaches the end");
            assert!(
                p.outcome(RuleSet::default()).is_some()
                    || Material::from_board(p.board()).is_decided_by_rules()
            );
            by_dtm[v.dtm().unwrap() as usize] += 1;
            kinds[usize::from(pos.turn() == Color::Black)] += 1;
            kinds[2 + usize::from(matches!(v, Value::Loss(_)))] += 1;
            checked += 1;
        }
    }
    println!(
        "solver = 5-man tables on {checked} positions (white/black to move, wins/losses: \
         {kinds:?}); by DTM: {by_dtm:?}"
    );
    assert!(checked >= 300, "{checked} positions");
    assert!(kinds.iter().all(|&k| k >= 60), "{kinds:?}");
}

/// A win longer than the bound is never reported: "no forced win within N plies".
#[test]
fn beyond_the_bound_is_unknown() {
    let materials: Vec<Material> = vec!["KBBvKN".parse().unwrap()];
    let tb5 = Tablebase::open(five_man_tables(&materials), RuleSet::default()).unwrap();
    let tb4 = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut done = 0;
    while done < 10 {
        let Some(pos) = place(
            &mut rng,
            &roles("BB"),
            &roles("N"),
            Color::White,
            &Params::default(),
            100,
        ) else {
            continue;
        };
        let v = tb5.value(&pos).unwrap();
        let Value::Win(d) = v else { continue };
        if !(9..=15).contains(&d) {
            continue;
        }
        let bound = d - 2 + rng.gen_range(0..2);
        let s = run(&tb4, &pos, &options(bound));
        assert_eq!(
            s.verdict,
            Verdict::Unknown,
            "{pos:?} wins in {d}, bound {bound}"
        );
        assert_eq!(s.plies, None);
        assert!(s.keys.is_empty() && s.line.is_empty());
        assert!(s.no_win_within.is_some_and(|n| n >= bound - 1));
        assert!(
            s.in_words().starts_with("no forced win within"),
            "{}",
            s.in_words()
        );
        done += 1;
    }
}

/// One problem of `tests/data/mansubat.txt`.
struct Problem {
    name: String,
    fen: String,
    result: Verdict,
    plies: u32,
    key: String,
}

fn mansubat() -> Vec<Problem> {
    let text = include_str!("data/mansubat.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let f: Vec<&str> = line.split(" | ").map(str::trim).collect();
            assert_eq!(f.len(), 6, "six fields: {line}");
            Problem {
                name: f[0].to_string(),
                fen: f[1].to_string(),
                result: match f[2] {
                    "win" => Verdict::Win,
                    "loss" => Verdict::Loss,
                    other => panic!("result {other}"),
                },
                plies: f[3].parse().expect("plies"),
                key: f[4].to_string(),
            }
        })
        .collect()
}

/// Every problem of the collection: the stated winner, the stated length proven
/// shortest, and the stated key the only one; its main line is legal and ends the game.
#[test]
fn mansubat_solve_as_published() {
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let problems = mansubat();
    assert!(problems.len() >= 5);
    for p in &problems {
        let pos = Position::from_fen(&p.fen).unwrap();
        let s = run(&tb, &pos, &options(p.plies));
        println!(
            "{}: {} ({} nodes, {:.2} s)",
            p.name,
            s.in_words(),
            s.nodes,
            s.seconds
        );
        assert_eq!(
            (s.verdict, s.plies),
            (p.result, Some(p.plies)),
            "{}",
            p.name
        );
        let keys: Vec<String> = s.keys.iter().map(|k| k.mv.to_uci()).collect();
        assert_eq!(keys, vec![p.key.clone()], "{}: keys", p.name);
        assert_eq!(s.line.len() as u32, p.plies, "{}: line length", p.name);
        let mut q = pos;
        for m in &s.line {
            let (_, next) = q.play_uci(&m.to_uci()).expect("a legal line");
            q = next;
        }
        assert!(
            q.outcome(RuleSet::default()).is_some(),
            "{}: the line ends the game",
            p.name
        );
    }
}

/// Dilaram's mate is a win in 11 plies by shah mat with the unique key Rh8+; with a
/// bound of 9 plies the solver says no more than that there is no win within 9.
#[test]
fn dilaram_within_and_beyond_the_bound() {
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let pos = Position::from_fen("1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1").unwrap();
    let s = run(&tb, &pos, &options(11));
    assert_eq!(s.in_words(), "White wins in 11 plies by shah mat");
    assert_eq!(s.end, Some(shatranj_tb::EndReason::Checkmate));
    // the tree: the key, then every defence of Black answered
    let tree = s.tree.as_ref().expect("a tree");
    assert_eq!(tree.moves.len(), 1);
    assert_eq!(tree.moves[0].0.to_uci(), "h4h8");
    let defences = &tree.moves[0].1.moves;
    assert_eq!(
        defences.len(),
        pos.play_uci("h4h8").unwrap().1.legal_moves().len()
    );
    let s = run(&tb, &pos, &options(9));
    assert_eq!(s.verdict, Verdict::Unknown);
    assert_eq!(s.no_win_within, Some(9));
    assert_eq!(s.in_words(), "no forced win within 9 plies");
}

/// One position of `tests/data/mates.txt`: its FEN, the length of the mate and every key,
/// as Popeye's `#=N` proved them on the same position.
struct Mate {
    name: String,
    fen: String,
    plies: u32,
    keys: Vec<String>,
    end: shatranj_tb::EndReason,
}

fn mates() -> Vec<Mate> {
    include_str!("data/mates.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let f: Vec<&str> = line.split(" | ").map(str::trim).collect();
            assert_eq!(f.len(), 7, "seven fields: {line}");
            assert_eq!(f[2], "win", "{line}");
            let mut keys: Vec<String> = f[4].split(',').map(str::to_string).collect();
            keys.sort();
            Mate {
                name: f[0].to_string(),
                fen: f[1].to_string(),
                plies: f[3].parse().expect("plies"),
                keys,
                end: match f[5] {
                    "checkmate" => shatranj_tb::EndReason::Checkmate,
                    "stalemate" => shatranj_tb::EndReason::Stalemate,
                    other => panic!("end {other}"),
                },
            }
        })
        .collect()
}

/// The forced mates from self-play (2 to 5 moves, many men on both sides, where the rules
/// of shatranj and of orthodox problems coincide): the solver proves the same length and
/// exactly the same keys as Popeye did, and a bound one move shorter finds no win.
#[test]
fn self_play_mates_agree_with_popeye() {
    let tb = Tablebase::open(default_tables(), RuleSet::default()).unwrap();
    let set = mates();
    assert!(set.len() >= 100, "{} positions", set.len());
    let (mut nodes, mut many_keys) = (0, 0);
    for (i, m) in set.iter().enumerate() {
        let pos = Position::from_fen(&m.fen).unwrap();
        assert!(pos.board().occupied().count() >= 8, "{}: many men", m.name);
        let mut opts = options(m.plies);
        opts.tree_depth = 0;
        // every other one on one thread: the root's moves then searched in turn on the
        // caller's thread, not taken from the queue by a pool's threads
        opts.threads = 1 + i % 2;
        let s = run(&tb, &pos, &opts);
        assert_eq!(
            (s.verdict, s.plies),
            (Verdict::Win, Some(m.plies)),
            "{}: {}",
            m.name,
            m.fen
        );
        let mut keys: Vec<String> = s
            .keys
            .iter()
            .filter(|k| k.plies == m.plies)
            .map(|k| k.mv.to_uci())
            .collect();
        keys.sort();
        assert_eq!(keys, m.keys, "{}: keys of {}", m.name, m.fen);
        assert_eq!(s.end, Some(m.end), "{}: how the main line ends", m.name);
        many_keys += usize::from(keys.len() > 1);
        nodes += s.nodes;
        if m.plies > 3 {
            let shorter = run(
                &tb,
                &pos,
                &SolveOptions {
                    max_plies: m.plies - 2,
                    ..opts
                },
            );
            assert_eq!(shorter.verdict, Verdict::Unknown, "{}: shorter", m.name);
        }
    }
    println!(
        "{} self-play mates agree with Popeye ({many_keys} with more than one key), {nodes} nodes",
        set.len()
    );
}

//! Differential test against an independent implementation: Fairy-Stockfish, through its
//! Python binding pyffish 0.0.90 (`tests/oracle/ffish_batch.py`).
//!
//! About 2,400 random legal positions of 3 to 8 men (fixed seed), drawn so that every
//! kind of case is well represented: a bare side to move against one piece or more, a
//! bare side not to move, checkmates and stalemates, checks, promotions of either
//! colour. For each we compare
//! (a) the sorted legal moves with pyffish's (`shatranj`, or `chaturanga`, which is
//!     shatranj without the bare-king rule, where pyffish's bare-king rule has already
//!     ended the game and so lists no moves);
//! (b) the verdict of `outcome` under the default rules with pyffish's, allowing for the
//!     one known difference: a bare side to move that cannot capture the opponent's last
//!     piece has lost *now* for us, while pyffish lets it move and reports the win one
//!     ply later, after every reply; that is checked reply by reply;
//! and for a third of the positions that pyffish sees them as legal too.
//!
//! The interpreter is `$SHATRANJ_ORACLE_PYTHON`, by default `target/oracle-venv/bin/python`;
//! `./scripts/test` installs it. Without it this test fails: it is never skipped.

#[path = "support/random_position.rs"]
mod random_position;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::StdRng;
use random_position::{Params, random_position};
use serde_json::Value;
use shatranj_tb::{Color, EndReason, Outcome, Position, Role, RuleSet};

const SEED: u64 = 0x005e_a70f_5ba7;
/// Value of a won game in pyffish, from the side to move's point of view.
const MATE: i64 = 32000;

/// Kinds of position, each with the number wanted.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The side to move is bare, the opponent has one piece.
    BareToMoveVsOne,
    /// The side to move is bare, the opponent has two pieces or more.
    BareToMoveVsMore,
    /// The side not to move is bare.
    BareNotToMove,
    /// No legal move, in check.
    Checkmate,
    /// No legal move, not in check.
    Stalemate,
    Check,
    WhitePromotes,
    BlackPromotes,
    Other,
}

impl Kind {
    const QUOTAS: [(Kind, usize); 9] = [
        (Kind::BareToMoveVsOne, 220),
        (Kind::BareToMoveVsMore, 100),
        (Kind::BareNotToMove, 150),
        (Kind::Checkmate, 100),
        (Kind::Stalemate, 40),
        (Kind::Check, 350),
        (Kind::WhitePromotes, 180),
        (Kind::BlackPromotes, 180),
        (Kind::Other, 1080),
    ];

    fn of(pos: &Position) -> Kind {
        let us = pos.turn();
        let them = !us;
        if pos.is_bare(us) {
            if pos.board().count(them) == 2 {
                Kind::BareToMoveVsOne
            } else {
                Kind::BareToMoveVsMore
            }
        } else if pos.is_bare(them) {
            Kind::BareNotToMove
        } else if !pos.has_legal_move() {
            if pos.is_check() {
                Kind::Checkmate
            } else {
                Kind::Stalemate
            }
        } else if pos.is_check() {
            Kind::Check
        } else if pos.legal_moves().iter().any(|m| m.promotion) {
            if us == Color::White {
                Kind::WhitePromotes
            } else {
                Kind::BlackPromotes
            }
        } else {
            Kind::Other
        }
    }
}

fn draw_positions() -> Vec<(Kind, Position)> {
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut quota: BTreeMap<Kind, usize> = Kind::QUOTAS.into_iter().collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let params = Params {
        bare_side: 0.3,
        ..Params::default()
    };
    for _ in 0..3_000_000 {
        if quota.values().all(|&n| n == 0) {
            break;
        }
        let pos = random_position(&mut rng, &params);
        let kind = Kind::of(&pos);
        let left = quota.get_mut(&kind).expect("every kind has a quota");
        if *left > 0 && seen.insert(pos) {
            *left -= 1;
            out.push((kind, pos));
        }
    }
    for (kind, left) in quota {
        assert!(
            left < 20,
            "could not draw enough positions of kind {kind:?}"
        );
    }
    out
}

fn oracle_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var_os("SHATRANJ_ORACLE_PYTHON")
        .map_or_else(|| root.join("target/oracle-venv/bin/python"), PathBuf::from);
    assert!(
        python.exists(),
        "the oracle's Python ({}) is missing. Install it with ./scripts/test (it creates \
         target/oracle-venv with pyffish==0.0.90), or by hand: python3 -m venv \
         target/oracle-venv && target/oracle-venv/bin/pip install pyffish==0.0.90; or point \
         SHATRANJ_ORACLE_PYTHON at an interpreter that has pyffish 0.0.90",
        python.display()
    );
    python
}

/// Sends every request in one batch; returns pyffish's version line and one answer each.
fn ask_oracle(requests: &[String]) -> (Value, Vec<Value>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/ffish_batch.py");
    let mut child = Command::new(oracle_python())
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the oracle's Python");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = requests.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(&l.expect("read the oracle")).expect("oracle JSON"))
        .collect();
    writer
        .join()
        .expect("writer thread")
        .expect("write to the oracle");
    let output = child.wait_with_output().expect("oracle exit");
    assert!(
        output.status.success() && !lines.is_empty(),
        "the oracle failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let header = lines.remove(0);
    assert_eq!(lines.len(), requests.len(), "one answer per request");
    (header, lines)
}

fn pair(v: &Value) -> (bool, i64) {
    (v[0].as_bool().expect("bool"), v[1].as_i64().expect("value"))
}

#[derive(Default, Debug)]
struct Tally {
    positions: usize,
    moves: usize,
    replies_one_ply_later: usize,
    sanity: usize,
    verdicts: BTreeMap<String, usize>,
}

/// Compares one position with pyffish's answer; returns what went wrong, if anything.
fn compare(pos: &Position, a: &Value, tally: &mut Tally) -> Result<(), String> {
    let us = pos.turn();
    let them = !us;
    let fen = pos.fen();
    if a["fen"].as_str() != Some(fen.as_str()) {
        return Err(format!("answer for another FEN: {}", a["fen"]));
    }
    if let Some(opposite_check) = a.get("opposite_check") {
        if opposite_check.as_bool() != Some(false) || a["validate"].as_i64() != Some(1) {
            return Err(format!("pyffish sees an illegal position: {a}"));
        }
        tally.sanity += 1;
    }

    // (a) the legal moves
    let legal = pos.legal_moves();
    let mut ours: Vec<String> = legal.iter().map(|m| m.to_uci()).collect();
    ours.sort();
    let theirs: Vec<String> = a["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m.as_str().expect("uci").to_string())
        .collect();
    if ours != theirs {
        return Err(format!(
            "moves differ ({}):\n  ours   {ours:?}\n  pyffish {theirs:?}",
            a["variant"]
        ));
    }
    tally.moves += ours.len();

    // (b) the verdict
    let (ended, value) = pair(&a["ended"]);
    let no_move = !ended && theirs.is_empty();
    let mated = |check: bool| -> Result<(), String> {
        if no_move && a["check"].as_bool() == Some(check) && a["result"].as_i64() == Some(-MATE) {
            Ok(())
        } else {
            Err(format!(
                "expected pyffish's {} loss, got {a}",
                if check { "checkmate" } else { "stalemate" }
            ))
        }
    };
    let outcome = pos.outcome(RuleSet::default());
    let label = match outcome {
        None => "none".to_string(),
        Some(o) => format!(
            "{}-{}",
            match o.winner() {
                Some(w) if w == us => "win",
                Some(_) => "loss",
                None => "draw",
            },
            o.reason()
        ),
    };
    *tally.verdicts.entry(label).or_default() += 1;
    match outcome {
        Some(Outcome::Decisive {
            winner,
            reason: EndReason::BareKing,
        }) if winner == us => {
            if (ended, value) != (true, MATE) {
                return Err(format!(
                    "we say the side to move has won (opponent bare): {a}"
                ));
            }
        }
        Some(Outcome::Decisive {
            winner,
            reason: EndReason::BareKing,
        }) if winner == them => {
            if pos.board().count(them) > 2 {
                if (ended, value) != (true, -MATE) {
                    return Err(format!("we say bare and lost (opponent K+2 or more): {a}"));
                }
            } else if no_move {
                // bare and without a move: pyffish's checkmate or stalemate
                mated(pos.is_check())?;
            } else {
                // the known ply offset: pyffish lets the bare side move, and after every
                // reply (none of which takes the last piece) declares the game won
                if ended {
                    return Err(format!("pyffish ended a bare-vs-K+1 position at once: {a}"));
                }
                let children = a["children"].as_object().ok_or("no children asked")?;
                for m in legal.iter() {
                    let got = pair(&children[&m.to_uci()]);
                    if m.capture.is_some() || got != (true, MATE) {
                        return Err(format!(
                            "after the bare side's reply {m} pyffish says {got:?}, \
                             expected (true, {MATE}) (opponent wins one ply later)"
                        ));
                    }
                    tally.replies_one_ply_later += 1;
                }
            }
        }
        Some(Outcome::Decisive {
            winner,
            reason: EndReason::Checkmate,
        }) if winner == them => {
            mated(true)?;
        }
        Some(Outcome::Decisive {
            winner,
            reason: EndReason::Stalemate,
        }) if winner == them => {
            mated(false)?;
        }
        None => {
            if ended || theirs.is_empty() {
                return Err(format!("we say the game goes on: {a}"));
            }
            // a bare side to move that can take the last piece: after the capture K v K
            // goes on, after any other reply the opponent has won
            if let Some(children) = a.get("children").and_then(Value::as_object) {
                for m in legal.iter() {
                    let got = pair(&children[&m.to_uci()]);
                    let expected_end = m.capture.is_none();
                    if got.0 != expected_end || (expected_end && got.1 != MATE) {
                        return Err(format!("after reply {m} pyffish says {got:?}"));
                    }
                    tally.replies_one_ply_later += 1;
                }
            }
        }
        other => return Err(format!("unexpected outcome {other:?}")),
    }
    tally.positions += 1;
    Ok(())
}

#[test]
fn agrees_with_fairy_stockfish() {
    let started = Instant::now();
    let positions = draw_positions();
    assert!(
        positions.len() >= 2000,
        "only {} positions",
        positions.len()
    );
    // every kind of piece appears, for both colours
    for role in Role::CAPTURABLE {
        for color in Color::ALL {
            let n = positions
                .iter()
                .filter(|(_, p)| p.board().by_piece(shatranj_tb::Piece { color, role }).any())
                .count();
            assert!(n >= 100, "{color} {role} appears in only {n} positions");
        }
    }
    let requests: Vec<String> = positions
        .iter()
        .enumerate()
        .map(|(i, (_, pos))| {
            let us = pos.turn();
            let children = pos.is_bare(us) && pos.board().count(!us) == 2;
            format!(
                "{}\t{}\t{}",
                pos.fen(),
                u8::from(children),
                u8::from(i % 3 == 0)
            )
        })
        .collect();
    let drawn = started.elapsed();
    let (header, answers) = ask_oracle(&requests);
    assert_eq!(header["pyffish"], serde_json::json!([0, 0, 90]), "{header}");

    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for ((kind, pos), answer) in positions.iter().zip(&answers) {
        if let Err(why) = compare(pos, answer, &mut tally) {
            failures.push(format!("{} ({kind:?}): {why}", pos.fen()));
        }
    }
    let mut kinds: BTreeMap<Kind, usize> = BTreeMap::new();
    for (kind, _) in &positions {
        *kinds.entry(*kind).or_default() += 1;
    }
    println!(
        "oracle: {} positions, {} moves compared, {} replies checked one ply later, \
         {} legality checks; kinds {kinds:?}; verdicts {:?}; drawn in {:.1} s, total {:.1} s \
         ({})",
        tally.positions,
        tally.moves,
        tally.replies_one_ply_later,
        tally.sanity,
        tally.verdicts,
        drawn.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        header["info"]
    );
    assert!(
        failures.is_empty(),
        "{} of {} positions disagree with pyffish; first ones:\n{}",
        failures.len(),
        positions.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Short algebraic notation ([`Position::san`]) against pyffish's `get_san` for every
/// legal move of about 250 random positions of 4 to 8 men (pieces pushed towards
/// promotion, several of a kind so that moves need disambiguating).
#[test]
fn san_agrees_with_fairy_stockfish() {
    let mut rng = StdRng::seed_from_u64(SEED ^ 0x5a4e);
    let params = Params {
        min_men: 4,
        max_men: 8,
        bare_side: 0.05,
        ..Params::default()
    };
    let positions: Vec<Position> = (0..250)
        .map(|_| random_position(&mut rng, &params))
        .collect();
    let requests: Vec<String> = positions
        .iter()
        .map(|p| format!("{}\t0\t0\t1", p.fen()))
        .collect();
    let (_, answers) = ask_oracle(&requests);
    let mut compared = 0;
    let mut marks = [0usize; 4]; // disambiguated, capture, check, mate
    let mut failures = Vec::new();
    for (pos, answer) in positions.iter().zip(&answers) {
        let theirs = answer["san"].as_object().expect("a san map");
        for m in pos.legal_moves().iter() {
            let ours = pos.san(m);
            let uci = m.to_uci();
            compared += 1;
            let body = ours.trim_end_matches(['+', '#']);
            let plain =
                body.len() - usize::from(m.capture.is_some()) - if m.promotion { 2 } else { 0 };
            marks[0] += usize::from(m.role != Role::Pawn && plain > 3);
            marks[1] += usize::from(m.capture.is_some());
            marks[2] += usize::from(ours.ends_with('+'));
            marks[3] += usize::from(ours.ends_with('#'));
            if theirs.get(&uci).and_then(Value::as_str) != Some(ours.as_str()) {
                failures.push(format!(
                    "{} {uci}: ours {ours}, pyffish {:?}",
                    pos.fen(),
                    theirs.get(&uci)
                ));
            }
        }
    }
    println!(
        "san: {} positions, {compared} moves; disambiguated {}, captures {}, checks {}, mates {}",
        positions.len(),
        marks[0],
        marks[1],
        marks[2],
        marks[3]
    );
    assert!(
        failures.is_empty(),
        "{} moves differ:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    assert!(compared > 2000, "only {compared} moves compared");
    assert!(
        marks.iter().all(|&n| n > 0),
        "every kind of mark is exercised: {marks:?}"
    );
}

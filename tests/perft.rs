//! Perft against reference numbers in `tests/data/*.perft` (each file cites its source).
//!
//! Our perft is pure move generation, so the references are Fairy-Stockfish's numbers for
//! positions and depths where no bare-king end cuts its tree, or its `chaturanga` numbers
//! (the same moves without the bare-king rule). A node limit keeps the default run short;
//! the `#[ignore]`d test runs every line.

use std::fs;
use std::path::Path;

use shatranj_tb::Position;

/// Nodes per line the default (CI) run goes up to.
const CI_NODE_LIMIT: u64 = 1_200_000;

struct Case {
    id: String,
    fen: String,
    depth: u32,
    nodes: u64,
}

fn read_cases(name: &str) -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut id, mut fen) = (String::new(), None::<String>);
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let at = || format!("{}:{}", path.display(), i + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "id" => {
                id = rest.to_string();
                fen = None;
            }
            "epd" => fen = Some(rest.to_string()),
            "perft" => {
                let mut it = rest.split_whitespace();
                let depth = it.next().and_then(|d| d.parse().ok());
                let nodes = it.next().and_then(|n| n.parse().ok());
                let (Some(depth), Some(nodes), Some(fen)) = (depth, nodes, fen.clone()) else {
                    panic!("{}: bad perft line", at());
                };
                cases.push(Case {
                    id: id.clone(),
                    fen,
                    depth,
                    nodes,
                });
            }
            _ => panic!("{}: unknown line {line:?}", at()),
        }
    }
    assert!(!cases.is_empty(), "{}: no cases", path.display());
    cases
}

fn check_file(name: &str, node_limit: u64) {
    let mut run = 0;
    for case in read_cases(name) {
        if case.nodes > node_limit {
            continue;
        }
        let pos = Position::from_fen(&case.fen).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        assert_eq!(
            pos.perft(case.depth),
            case.nodes,
            "{} ({}) depth {}",
            case.id,
            case.fen,
            case.depth
        );
        run += 1;
    }
    assert!(
        run > 0,
        "{name}: node limit {node_limit} skipped every case"
    );
}

#[test]
fn start_position() {
    check_file("start.perft", CI_NODE_LIMIT);
}

#[test]
fn endgames() {
    check_file("endgames.perft", CI_NODE_LIMIT);
}

/// Start position to depth 6 (19,864,709 nodes) and beyond: `cargo test -- --ignored`.
#[test]
#[ignore = "deep perft, about 400 million nodes"]
fn all_depths() {
    check_file("start.perft", u64::MAX);
    check_file("endgames.perft", u64::MAX);
}

/// The `--divide` figures of a bared shah's position, as Fairy-Stockfish 0.0.90 counts them
/// (`chaturanga`, whose moves are shatranj's without the bare-king rule: pure move
/// generation goes on below the game's end).
#[test]
fn divide_sums_and_no_cutoff() {
    let pos = Position::from_fen("8/8/8/4k3/8/8/7R/K7 b - - 0 1").unwrap();
    assert!(pos.outcome(shatranj_tb::RuleSet::default()).is_some());
    let mut divide: Vec<(String, u64)> = pos
        .legal_moves()
        .iter()
        .map(|m| (m.to_uci(), pos.play_unchecked(m).perft(2)))
        .collect();
    divide.sort();
    let want: Vec<(String, u64)> = [
        ("e5d4", 119),
        ("e5d5", 120),
        ("e5d6", 120),
        ("e5e4", 120),
        ("e5e6", 120),
        ("e5f4", 120),
        ("e5f5", 120),
        ("e5f6", 120),
    ]
    .iter()
    .map(|&(m, n)| (m.to_string(), n))
    .collect();
    assert_eq!(divide, want);
    assert_eq!(pos.perft(3), 959);
    assert_eq!(pos.perft(1), 8);
    assert_eq!(pos.perft(0), 1);
}

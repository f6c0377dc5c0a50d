//! FEN parsing never panics, and what it accepts round-trips.
//!
//! Inputs: purely random strings (ASCII, FEN-like alphabet, arbitrary Unicode) and
//! mutations of valid FENs (deletions, insertions, swaps, duplications, random bytes
//! including non-ASCII), with a fixed seed.

#[path = "support/random_position.rs"]
mod random_position;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use random_position::{Params, random_position};
use shatranj_tb::{Fen, Position};

const SEED: u64 = 0x00f3_f022;
const ALPHABET: &[u8] = b"KQFBAENRPkqfbaenrp12345678/ wb-09x";
const ODD: [&str; 8] = [
    "\u{e9}",
    "\u{2654}",
    "\u{0}",
    "\t",
    "\n",
    "\u{feff}",
    "\u{10ffff}",
    "\u{661}",
];

/// Parses and, where that works, checks the round trips. Returns whether it parsed.
fn check(s: &str) -> bool {
    let Ok(fen) = Fen::parse(s) else {
        assert!(Position::from_fen(s).is_err(), "{s:?}");
        return false;
    };
    // the written FEN reads back as the same setup, and is written the same again
    let written = fen.to_string();
    let again = Fen::parse(&written).unwrap_or_else(|e| panic!("{s:?} -> {written:?}: {e}"));
    assert_eq!(again, fen, "{s:?}");
    assert_eq!(again.to_string(), written);
    let fa = fen.to_string_fa();
    assert_eq!(Fen::parse(&fa).as_ref(), Ok(&fen), "{s:?} -> {fa:?}");
    if let Ok(pos) = fen.into_position() {
        let back = Position::from_fen(&pos.fen()).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        assert_eq!(back, pos);
        check_moves_and_outcome(&pos);
    }
    true
}

/// A legal position's moves lead to legal positions (the mover's shah not left in
/// check), each replayed from its UCI text; its outcome agrees with its moves.
fn check_moves_and_outcome(pos: &Position) {
    use shatranj_tb::{Color, EndReason, RuleSet};
    let fen = pos.fen();
    let moves = pos.legal_moves();
    for m in moves.iter() {
        let child = pos.play_unchecked(m);
        assert_eq!(child.turn(), pos.turn().other(), "{fen} {}", m.to_uci());
        let legal = Position::from_board(*child.board(), child.turn());
        assert!(legal.is_ok(), "{fen} {}: {legal:?}", m.to_uci());
        let (_, replayed) = pos
            .play_uci(&m.to_uci())
            .unwrap_or_else(|e| panic!("{fen} {}: {e}", m.to_uci()));
        assert_eq!(replayed, child, "{fen} {}", m.to_uci());
    }
    let bare = [Color::White, Color::Black].map(|c| pos.board().count(c) == 1);
    match pos.outcome(RuleSet::default()) {
        Some(o) if o.reason() == EndReason::BareKing => {
            assert!(bare[0] || bare[1], "{fen}: {o:?}");
        }
        // under the default rules, no move loses: mate or stalemate
        Some(o) => {
            assert!(moves.is_empty(), "{fen}: {o:?}");
            let mate = o.reason() == EndReason::Checkmate;
            assert_eq!(mate, pos.is_check(), "{fen}: {o:?}");
            assert_eq!(o.winner(), Some(pos.turn().other()), "{fen}: {o:?}");
        }
        None => {
            assert!(!moves.is_empty(), "{fen}: no move and no outcome");
            // a bare side plays on only while it can bare the other at once
            if bare[0] != bare[1] {
                let bared = if bare[0] { Color::White } else { Color::Black };
                assert_eq!(pos.turn(), bared, "{fen}: a bare side and no outcome");
            }
        }
    }
}

fn mutate(rng: &mut StdRng, s: &str) -> String {
    let mut chars: Vec<String> = s.chars().map(String::from).collect();
    for _ in 0..rng.gen_range(1..4) {
        let i = if chars.is_empty() {
            0
        } else {
            rng.gen_range(0..chars.len())
        };
        let random_piece = |rng: &mut StdRng| {
            if rng.gen_bool(0.2) {
                ODD[rng.gen_range(0..ODD.len())].to_string()
            } else {
                char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]).to_string()
            }
        };
        match rng.gen_range(0..5) {
            0 if !chars.is_empty() => {
                chars.remove(i);
            }
            1 => {
                let c = random_piece(rng);
                chars.insert(i.min(chars.len()), c);
            }
            2 if chars.len() > 1 => {
                let j = rng.gen_range(0..chars.len());
                chars.swap(i, j);
            }
            3 if !chars.is_empty() => chars[i] = random_piece(rng),
            _ if !chars.is_empty() => {
                let c = chars[i].clone();
                chars.insert(i, c);
            }
            _ => {}
        }
    }
    chars.concat()
}

#[test]
fn random_strings_never_panic() {
    let mut rng = StdRng::seed_from_u64(SEED);
    for _ in 0..20_000 {
        let len = rng.gen_range(0..80);
        let s: String = match rng.gen_range(0..3) {
            0 => (0..len)
                .map(|_| char::from(rng.gen_range(0x20u8..0x7f)))
                .collect(),
            1 => (0..len)
                .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
                .collect(),
            _ => (0..len)
                .map(|_| rng.gen_range('\u{0}'..='\u{2fff}'))
                .collect(),
        };
        check(&s);
    }
    // bytes that are not even UTF-8, seen through a lossy conversion
    for _ in 0..2_000 {
        let bytes: Vec<u8> = (0..rng.gen_range(0..60)).map(|_| rng.r#gen()).collect();
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn mutated_fens_never_panic_and_valid_ones_round_trip() {
    let mut rng = StdRng::seed_from_u64(SEED + 1);
    let mut seeds: Vec<String> = vec![
        "startpos".into(),
        shatranj_tb::fen::START_FEN.into(),
        "8/8/3k4/8/2bn4/8/8/R2QK3 w - - 0 1".into(),
        "7k/7p/8/8/3F4/8/8/K4A2 w".into(),
        "8/1P4k1/8/8/8/5q2/6P1/4K3 w - - 12 40".into(),
    ];
    let params = Params::default();
    seeds.extend((0..200).map(|_| random_position(&mut rng, &params).fen()));
    let (mut parsed, mut total) = (0, 0);
    for seed in &seeds {
        assert!(check(seed), "{seed}");
        for _ in 0..200 {
            let m = mutate(&mut rng, seed);
            parsed += usize::from(check(&m));
            total += 1;
        }
    }
    println!("fen_fuzz: {total} mutated FENs, {parsed} still parse");
    assert!(
        parsed > total / 20,
        "mutations too destructive to test round trips"
    );
}

//! Un-moves against forward moves, on 10,000 random legal positions (fixed seed) with
//! varied material, many pawns one step from promotion and ferzes on promotion ranks:
//! - every un-move (`UnMoveKinds::ALL`) leads to a legal position in which the matching
//!   forward move is legal and leads back;
//! - every legal move is found among the un-moves of the position it leads to;
//! - the quiet kinds give exactly the un-moves that neither un-capture nor un-promote.

#[path = "support/random_position.rs"]
mod random_position;

use rand::SeedableRng;
use rand::rngs::StdRng;
use random_position::{Params, random_position};
use shatranj_tb::retro::UnMoveKinds;
use shatranj_tb::{Move, Position, Role, UnMove};

const SEED: u64 = 0x0e70_5a1d;
const POSITIONS: usize = 10_000;

fn positions() -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(SEED);
    let params = Params {
        min_men: 3,
        max_men: 9,
        pawn_on_seventh: 0.3,
        ferz_on_last_rank: 0.4,
        bare_side: 0.1,
    };
    (0..POSITIONS)
        .map(|_| random_position(&mut rng, &params))
        .collect()
}

/// Whether `m` is the forward move that `um` takes back.
fn matches(um: &UnMove, m: &Move) -> bool {
    m.from == um.from
        && m.to == um.to
        && m.capture == um.uncapture
        && m.promotion == um.unpromotion
        && m.role == if um.unpromotion { Role::Pawn } else { um.role }
}

#[test]
fn unmoves_reverse_legal_moves() {
    let mut unmoves = 0usize;
    let mut kinds = [0usize; 4]; // quiet, uncapture, unpromotion, both
    for pos in positions() {
        let all = pos.unmoves(UnMoveKinds::ALL);
        for (um, prev) in &all {
            assert_eq!(prev.turn(), !pos.turn(), "{pos:?} {um}");
            assert_eq!(
                Position::from_board(*prev.board(), prev.turn()).as_ref(),
                Ok(prev),
                "un-move {um} of {pos:?} leads to an illegal position"
            );
            assert_eq!(pos.unplay_checked(um).as_ref(), Some(prev), "{pos:?} {um}");
            let forward: Vec<Move> = prev
                .legal_moves()
                .iter()
                .copied()
                .filter(|m| matches(um, m))
                .collect();
            assert_eq!(
                forward.len(),
                1,
                "un-move {um} of {pos:?}: forward move not legal in {prev:?}"
            );
            assert_eq!(prev.play_unchecked(&forward[0]), pos, "{pos:?} {um}");
            kinds[usize::from(um.uncapture.is_some()) + 2 * usize::from(um.unpromotion)] += 1;
        }
        unmoves += all.len();

        for m in pos.legal_moves().iter() {
            let next = pos.play_unchecked(m);
            let found = next
                .unmoves(UnMoveKinds::ALL)
                .into_iter()
                .filter(|(um, prev)| matches(um, m) && *prev == pos)
                .count();
            assert_eq!(
                found, 1,
                "move {m} of {pos:?} is not among the un-moves of {next:?}"
            );
        }

        let quiet = pos.unmoves(UnMoveKinds::QUIET);
        let expected: Vec<_> = all
            .iter()
            .filter(|(um, _)| !um.is_conversion())
            .cloned()
            .collect();
        assert_eq!(quiet, expected, "quiet un-moves of {pos:?}");
        let mut seen = Vec::new();
        pos.for_each_unmove(UnMoveKinds::ALL, |um, p| seen.push((um, p)));
        assert_eq!(seen, all);
    }
    println!(
        "retro: {POSITIONS} positions, {unmoves} un-moves (quiet, uncapture, unpromotion, both: {kinds:?})"
    );
    assert!(
        kinds.iter().all(|&n| n > 1000),
        "too few of some kind: {kinds:?}"
    );
}

/// Un-moves that no move could reverse are refused.
#[test]
fn unplay_checked_refuses_impossible_unmoves() {
    let pos = Position::from_fen("4k3/8/8/8/8/8/8/N3K3 b - - 0 1").unwrap();
    let sq = |s: &str| s.parse().unwrap();
    let bogus = [
        // a knight "coming back" from a square it cannot reach
        UnMove {
            role: Role::Knight,
            to: sq("a1"),
            from: sq("h8"),
            uncapture: None,
            unpromotion: false,
        },
        // a knight un-promoting
        UnMove {
            role: Role::Knight,
            to: sq("a1"),
            from: sq("b3"),
            uncapture: None,
            unpromotion: true,
        },
        // an un-capture of a shah
        UnMove {
            role: Role::Knight,
            to: sq("a1"),
            from: sq("b3"),
            uncapture: Some(Role::Shah),
            unpromotion: false,
        },
    ];
    for um in bogus {
        assert_eq!(pos.unplay_checked(&um), None, "{um}");
    }
    let ok = UnMove {
        role: Role::Knight,
        to: sq("a1"),
        from: sq("b3"),
        uncapture: None,
        unpromotion: false,
    };
    assert!(pos.unplay_checked(&ok).is_some());
    let white_ferz = Position::from_fen("Q3k3/8/8/8/8/8/8/4K3 b - - 0 1").unwrap();
    let unpromote = |from: &str, uncapture| UnMove {
        role: Role::Ferz,
        to: sq("a8"),
        from: sq(from),
        uncapture,
        unpromotion: true,
    };
    assert!(white_ferz.unplay_checked(&unpromote("a7", None)).is_some());
    assert!(
        white_ferz
            .unplay_checked(&unpromote("b7", Some(Role::Rook)))
            .is_some()
    );
    assert_eq!(
        white_ferz.unplay_checked(&unpromote("b7", None)),
        None,
        "a pawn moves diagonally only to capture"
    );
    assert_eq!(
        white_ferz.unplay_checked(&unpromote("a6", None)),
        None,
        "no double step"
    );
}

/// The conversion generator the WDL probe searches gives exactly the legal captures and
/// promotions, in the same order as the full generator.
#[test]
fn conversions_are_the_legal_captures_and_promotions() {
    let mut seen = 0;
    for pos in positions() {
        let want: Vec<Move> = pos
            .legal_moves()
            .iter()
            .filter(|m| m.is_conversion())
            .copied()
            .collect();
        let mut got = Vec::new();
        pos.for_each_conversion(|m| {
            got.push(m);
            true
        });
        assert_eq!(got, want, "{pos:?}");
        seen += got.len();
    }
    assert!(seen > 3_000, "{seen}");
}

/// The bulk count of quiet moves (the generator's seed) and of all moves equal the moves
/// the full generator lists.
#[test]
fn move_counts_equal_the_listed_moves() {
    let (mut quiet_seen, mut checks) = (0u64, 0);
    for pos in positions() {
        let moves = pos.legal_moves();
        let quiet = moves.iter().filter(|m| !m.is_conversion()).count() as u64;
        assert_eq!(pos.count_legal_moves(), moves.len() as u64, "{pos:?}");
        assert_eq!(pos.count_quiet_moves(), quiet, "{pos:?}");
        let mut conversions = Vec::new();
        let counted = pos.count_quiet_and_each_conversion(|m| {
            conversions.push(m);
            true
        });
        assert_eq!(counted, Some(quiet), "{pos:?}");
        let want: Vec<Move> = moves
            .iter()
            .filter(|m| m.is_conversion())
            .copied()
            .collect();
        assert_eq!(conversions, want, "{pos:?}");
        quiet_seen += quiet;
        checks += usize::from(pos.is_check());
    }
    assert!(quiet_seen > 50_000 && checks > 100, "{quiet_seen} {checks}");
}

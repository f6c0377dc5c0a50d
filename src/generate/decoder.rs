//! Decoding indices into boards, fast when they come in increasing order, with the
//! legality checks the seed needs.

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::index::TableIndex;
use crate::role::{Piece, Role};
use crate::square::Square;

/// Decodes indices that mostly come in increasing order: where the last group is one
/// piece or two like pieces, the rest of the board is decoded once per run of that
/// group's squares (64 or 48 indices for one piece, 2,016 or 1,128 for two).
pub(super) struct Decoder {
    /// The last group, as [`TableIndex::last_group`] gives it.
    last: Option<Last>,
    /// The first index of the run of the last group's squares decoded last (before the
    /// first, a value no index is within a run of), and the board without that group.
    prefix: (u64, Option<Board>),
    /// What the prefix board says of checks on the shah not to move, for one side to move
    /// (see [`Decoder::decode_legal`]).
    threats: Option<Threats>,
}

/// The last group of an index, whose pieces a run of indices places on a board decoded
/// once.
#[derive(Clone)]
struct Last {
    piece: Piece,
    /// Whether the group is two pieces (else one).
    pair: bool,
    /// The length of a run: the group's number of combinations.
    run: u64,
    /// Whether the squares of a run depend on the run (a split pawn's, on its file pair:
    /// see [`TableIndex::last_group`]).
    split: bool,
    /// The square of one piece at each index of the current run (unused for a pair).
    squares: [Square; 64],
}

impl Last {
    /// The squares of one piece at each index of the run of index `i`.
    fn squares_of(index: &TableIndex, count: usize, run: u64, i: u64) -> [Square; 64] {
        std::array::from_fn(|k| {
            if count == 1 && (k as u64) < run {
                index
                    .last_squares(i, k as u64)
                    .map_or(Square::new(0), |s| s.0)
            } else {
                Square::new(0)
            }
        })
    }
}

/// Whether one of `rooks` attacks `shah` on a board occupied by `occ`.
#[inline]
pub(super) fn rook_checks(rooks: Bitboard, shah: Square, occ: Bitboard) -> bool {
    rooks.any() && (attacks::rook_attacks(shah, occ) & rooks).any()
}

/// Checks on the shah of the side not to move in a board without its last piece.
#[derive(Clone, Copy)]
pub(super) struct Threats {
    turn: Color,
    /// The shah that must not be in check.
    shah: Square,
    /// Whether a piece other than a rook already checks it (no last piece can block that).
    leaper: bool,
    /// The rooks of the side to move: the last piece may open or close their lines.
    rooks: Bitboard,
}

impl Decoder {
    pub(super) fn new(index: &TableIndex) -> Decoder {
        Decoder {
            last: index.last_group().map(|(piece, count, run, split)| Last {
                piece,
                pair: count == 2,
                run,
                split,
                squares: Last::squares_of(index, count, run, 0),
            }),
            prefix: (1 << 63, None),
            threats: None,
        }
    }

    /// The board of index `i` if, with `turn` to move, the side not to move is not in
    /// check (the one thing a decoded board can get wrong; see
    /// [`Generator::position_of`]). The checks of the pieces decoded once per run are
    /// found once per run as well.
    #[inline]
    pub(super) fn decode_legal(
        &mut self,
        index: &TableIndex,
        i: u64,
        turn: Color,
    ) -> Option<Board> {
        let Some(last) = self.last.as_mut() else {
            let board = index.decode(i)?;
            let shah = board.shah_of(!turn)?;
            return (!board.attackers_to(shah, turn, board.occupied()).any()).then_some(board);
        };
        // within the run: no division
        if i.wrapping_sub(self.prefix.0) >= last.run {
            self.prefix = (index.last_run_start(i), index.decode_without_last(i));
            self.threats = None;
            if last.split && !last.pair {
                last.squares = Last::squares_of(index, 1, last.run, i);
            }
        }
        let last = &*last;
        let prefix = self.prefix.1?;
        let threats = match self.threats {
            Some(t) if t.turn == turn => t,
            _ => {
                let shah = prefix.shah_of(!turn)?;
                let rooks = prefix.by_piece(Piece {
                    color: turn,
                    role: Role::Rook,
                });
                let t = Threats {
                    turn,
                    shah,
                    leaper: (prefix.attackers_to(shah, turn, prefix.occupied()) & !rooks).any(),
                    rooks,
                };
                self.threats = Some(t);
                t
            }
        };
        if threats.leaper {
            return None;
        }
        let k = i - self.prefix.0;
        // A pair is placed out of line: inline, it slowed the one-piece path below (the
        // DTZ of KRQvKR, whose last group is one rook, from 3.3 s to 4.5 s).
        if last.pair {
            return Self::place_pair_legal(index, prefix, last, self.prefix.0, k, turn, threats);
        }
        let sq = last.squares[k as usize];
        if prefix.occupied().contains(sq) {
            return None;
        }
        let piece = last.piece;
        let mut board = prefix;
        board.put_on_empty(sq, piece);
        let occ = board.occupied();
        let checked = (piece.color == turn
            && attacks::attacks(piece.role, turn, sq, occ).contains(threats.shah))
            || rook_checks(threats.rooks, threats.shah, occ);
        debug_assert_eq!(
            checked,
            board.attackers_to(threats.shah, turn, occ).any(),
            "{board:?}"
        );
        (!checked).then_some(board)
    }

    /// [`Decoder::decode_legal`] where the last group is a pair: `prefix` with the pair at
    /// the `k`-th index of its run, if the squares are free and the shah not to move is
    /// not in check (no leaper checks it already: `threats`).
    #[inline(never)]
    fn place_pair_legal(
        index: &TableIndex,
        prefix: Board,
        last: &Last,
        start: u64,
        k: u64,
        turn: Color,
        threats: Threats,
    ) -> Option<Board> {
        let (sq, other) = index.last_squares(start, k)?;
        if prefix.occupied().contains(sq) || prefix.occupied().contains(other) {
            return None;
        }
        let piece = last.piece;
        let mut board = prefix;
        board.put_on_empty(sq, piece);
        board.put_on_empty(other, piece);
        let occ = board.occupied();
        let checks = |s| attacks::attacks(piece.role, turn, s, occ).contains(threats.shah);
        let checked = (piece.color == turn && (checks(sq) || checks(other)))
            || rook_checks(threats.rooks, threats.shah, occ);
        debug_assert_eq!(checked, board.attackers_to(threats.shah, turn, occ).any());
        (!checked).then_some(board)
    }

    /// `prefix` with the pair of `last` at the `k`-th index of its run (which starts at
    /// index `start`), if both squares are free.
    #[inline(never)]
    fn place_pair(
        index: &TableIndex,
        prefix: Option<Board>,
        last: &Last,
        start: u64,
        k: u64,
    ) -> Option<Board> {
        let (sq, other) = index.last_squares(start, k)?;
        let mut b = prefix?;
        if b.occupied().contains(sq) || b.occupied().contains(other) {
            return None;
        }
        b.put_on_empty(sq, last.piece);
        b.put_on_empty(other, last.piece);
        Some(b)
    }

    /// The board of index `i` (see [`TableIndex::decode`]).
    #[inline]
    pub(super) fn decode(&mut self, index: &TableIndex, i: u64) -> Option<Board> {
        let board = match &mut self.last {
            Some(last) => {
                if i.wrapping_sub(self.prefix.0) >= last.run {
                    self.prefix = (index.last_run_start(i), index.decode_without_last(i));
                    self.threats = None;
                    if last.split && !last.pair {
                        last.squares = Last::squares_of(index, 1, last.run, i);
                    }
                }
                let last = &*last;
                let k = i - self.prefix.0;
                if last.pair {
                    return Self::place_pair(index, self.prefix.1, last, self.prefix.0, k);
                }
                let sq = last.squares[k as usize];
                self.prefix
                    .1
                    .filter(|b| !b.occupied().contains(sq))
                    .map(|mut b| {
                        b.put_on_empty(sq, last.piece);
                        b
                    })
            }
            None => index.decode(i),
        };
        #[cfg(debug_assertions)]
        if super::cross_checked(i) {
            assert_eq!(board, index.decode(i), "index {i}");
        }
        board
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;
    use rand::{Rng, SeedableRng};

    /// Runs of consecutive indices from random starts (the order the seed decodes in,
    /// crossing runs of the last piece's squares), on 6-man materials with and without
    /// pawns and with a last group of one piece or of two: the decoder's boards are the
    /// index's, and `decode_legal` keeps exactly the boards whose side not to move is not
    /// in check.
    #[test]
    fn six_man_indices_decode_as_the_index_does() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(6);
        // scheme 2 splits KRPvKRP's lone pawn and the pair of KRRvKPP (the last group)
        // and KPPvKNB
        for (name, scheme) in [
            ("KRRvKRR", 1),
            ("KQBNvKR", 1),
            ("KRPvKRP", 1),
            ("KRPvKRP", 2),
            ("KRRvKPP", 1),
            ("KRRvKPP", 2),
            ("KPPvKNB", 2),
            ("KPPPvKR", 1),
            ("KRRvKNB", 1),
        ] {
            let m: Material = name.parse::<Material>().unwrap().normalized();
            let index = TableIndex::try_with_scheme(m, scheme).unwrap();
            let mut decoder = Decoder::new(&index);
            let (mut boards, mut legal, mut illegal) = (0, 0, 0);
            for _ in 0..200 {
                let start = rng.gen_range(0..index.size() - 300);
                let turn = if rng.gen_bool(0.5) {
                    Color::White
                } else {
                    Color::Black
                };
                for i in start..start + 300 {
                    let want = index.decode(i);
                    assert_eq!(decoder.decode(&index, i), want, "{name} {scheme} {i}");
                    let legal_board = want.filter(|b| {
                        let shah = b.shah_of(!turn).unwrap();
                        !b.attackers_to(shah, turn, b.occupied()).any()
                    });
                    assert_eq!(
                        decoder.decode_legal(&index, i, turn),
                        legal_board,
                        "{name} {i} {turn:?}"
                    );
                    boards += usize::from(want.is_some());
                    legal += usize::from(legal_board.is_some());
                    illegal += usize::from(want.is_some() && legal_board.is_none());
                }
            }
            assert!(
                boards > 30_000 && legal > 20_000 && illegal > 100,
                "{name}: {boards} {legal} {illegal}"
            );
        }
    }
}

//! Short algebraic notation (SAN), as Fairy-Stockfish writes shatranj moves.
//!
//! The piece letter (`K` shah, `Q` ferz, `B` alfil, `N` knight, `R` rook; none for a
//! pawn), the origin's file, rank or both when another piece of the same kind could go
//! to the same square (file first, then rank, then both, as in chess), `x` for a
//! capture (a pawn capture starts with the pawn's file), the destination, `=Q` for a
//! promotion, and `+` for a check or `#` for a check the opponent has no answer to: no
//! legal move, or (as Fairy-Stockfish counts it) a bare shah whose opponent keeps more
//! than one piece, so that it cannot bare it in return. Nothing marks a stalemate or
//! another bare shah. Examples: `Qb2`, `N1c2`, `Rxh8+`, `gxf1=Q`, `Rg8#`.
//!
//! `tests/san.rs` compares this with pyffish's `get_san` on random positions.

use std::fmt::Write as _;

use crate::position::{Move, Position};
use crate::role::Role;
use crate::square::Square;

fn push_square(out: &mut String, sq: Square) {
    out.push(char::from(b'a' + sq.file() as u8));
    out.push(char::from(b'1' + sq.rank() as u8));
}

impl Position {
    /// The SAN of `m`, a legal move of this position (see the [module](crate::san)
    /// documentation). A move that is not legal here gets a SAN all the same, written
    /// from its fields, but its check mark and disambiguation mean nothing.
    #[must_use]
    pub fn san(&self, m: &Move) -> String {
        let mut out = String::with_capacity(8);
        if m.role == Role::Pawn {
            if m.capture.is_some() {
                out.push(char::from(b'a' + m.from.file() as u8));
                out.push('x');
            }
            push_square(&mut out, m.to);
            if m.promotion {
                let _ = write!(out, "={}", Role::Ferz.upper_char());
            }
        } else {
            out.push(m.role.upper_char());
            // Other pieces of the same kind that could go to the same square.
            let mut same_file = false;
            let mut same_rank = false;
            let mut ambiguous = false;
            self.for_each_legal_move(|o| {
                if o.role == m.role && o.to == m.to && o.from != m.from {
                    ambiguous = true;
                    same_file |= o.from.file() == m.from.file();
                    same_rank |= o.from.rank() == m.from.rank();
                }
                true
            });
            if ambiguous {
                if !same_file {
                    out.push(char::from(b'a' + m.from.file() as u8));
                } else if !same_rank {
                    out.push(char::from(b'1' + m.from.rank() as u8));
                } else {
                    push_square(&mut out, m.from);
                }
            }
            if m.capture.is_some() {
                out.push('x');
            }
            push_square(&mut out, m.to);
        }
        let after = self.play_unchecked(m);
        if after.is_check() {
            // Fairy-Stockfish's `#`: the checked side has no move, by the move rules or
            // because this capture bared it and it cannot bare the mover in return (the
            // mover keeps more than one piece).
            let them = after.turn();
            let no_reply = m.capture.is_some()
                && after.is_bare(them)
                && after.board().by_color(!them).count() > 2;
            out.push(if after.has_legal_move() && !no_reply {
                '+'
            } else {
                '#'
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::Position;

    fn sans(fen: &str) -> Vec<(String, String)> {
        let pos = Position::from_fen(fen).unwrap();
        let mut v: Vec<_> = pos
            .legal_moves()
            .iter()
            .map(|m| (m.to_uci(), pos.san(m)))
            .collect();
        v.sort();
        v
    }

    fn san_of(fen: &str, uci: &str) -> String {
        sans(fen)
            .into_iter()
            .find(|(u, _)| u == uci)
            .unwrap_or_else(|| panic!("{uci} is not legal in {fen}"))
            .1
    }

    // Expected strings from pyffish 0.0.90 `get_san("shatranj", fen, uci)`.
    #[test]
    fn writes_as_fairy_stockfish() {
        let diamond = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1";
        assert_eq!(san_of(diamond, "c3b2"), "Qb2");
        assert_eq!(san_of(diamond, "b3b4"), "Kb4");
        let promo = "3k4/8/8/8/8/8/6p1/3K1R1R b - - 0 1";
        assert_eq!(san_of(promo, "g2f1q"), "gxf1=Q");
        assert_eq!(san_of(promo, "g2g1q"), "g1=Q");
        let knights = "3k4/7p/8/8/8/N7/8/N2K4 w - - 0 1";
        assert_eq!(san_of(knights, "a1c2"), "N1c2");
        assert_eq!(san_of(knights, "a3c2"), "N3c2");
        assert_eq!(san_of(knights, "a3c4"), "Nc4");
        let ferzes = "3k4/7p/8/8/8/8/8/Q1QK4 w - - 0 1";
        assert_eq!(san_of(ferzes, "a1b2"), "Qab2");
        let rooks = "3k4/8/1r6/8/8/1R6/8/R2K4 w - - 0 1";
        assert_eq!(san_of(rooks, "a1a8"), "Ra8+");
        assert_eq!(san_of(rooks, "b3b6"), "Rxb6");
        assert_eq!(san_of(rooks, "b3b1"), "Rbb1");
        assert_eq!(san_of("k7/7p/1K6/8/8/8/8/6R1 w - - 0 1", "g1g8"), "Rg8#");
        assert_eq!(san_of("k6n/8/1K6/8/8/8/8/7R w - - 0 1", "h1h8"), "Rxh8#");
        assert_eq!(san_of("3k3n/8/8/8/8/8/8/3K3R w - - 0 1", "h1h8"), "Rxh8+");
        // bared in check by an opponent with more than one piece: no answer
        assert_eq!(
            san_of("1q6/3p4/8/8/k2K4/1r1Q4/6r1/8 b - - 0 1", "b3d3"),
            "Rxd3#"
        );
    }
}

//! Standard algebraic notation for the HTTP answers (`san` fields), as Fairy-Stockfish
//! writes it for shatranj: piece letters `K Q B N R` (ferz `Q`, alfil `B`), nothing for a
//! pawn, `x` for a capture (a pawn's capture starts with its file: `exd5`), the origin's
//! file, rank or square when another piece of the same kind could go to the same square
//! (file first, then rank, then both), `=Q` for a promotion, `+` for check and `#` for a
//! check with no legal reply.
//!
//! This writer is private to the HTTP module and kept apart on purpose: the library is to
//! get its own SAN writer, and this file is then replaced by a call to it.

use crate::{Move, Position, Role};

/// The SAN of `m`, a legal move of `pos`, among `legal` (every legal move of `pos`, for
/// the disambiguation), given the position after it (for the check mark).
#[must_use]
pub fn san(
    pos: &Position,
    m: &Move,
    legal: impl IntoIterator<Item = Move>,
    after: &Position,
) -> String {
    let mut s = String::with_capacity(8);
    let square = |s: &mut String, sq: crate::Square| {
        s.push(file_char(sq.file()));
        s.push(rank_char(sq.rank()));
    };
    if m.role == Role::Pawn {
        if m.capture.is_some() {
            s.push(file_char(m.from.file()));
            s.push('x');
        }
        square(&mut s, m.to);
        if m.promotion {
            s.push_str("=Q");
        }
    } else {
        s.push(m.role.upper_char());
        if m.role != Role::Shah {
            let (mut any, mut same_file, mut same_rank) = (false, false, false);
            for o in legal {
                if o.role == m.role && o.to == m.to && o.from != m.from {
                    any = true;
                    same_file |= o.from.file() == m.from.file();
                    same_rank |= o.from.rank() == m.from.rank();
                }
            }
            if any {
                if !same_file {
                    s.push(file_char(m.from.file()));
                } else if !same_rank {
                    s.push(rank_char(m.from.rank()));
                } else {
                    square(&mut s, m.from);
                }
            }
        }
        if m.capture.is_some() {
            s.push('x');
        }
        square(&mut s, m.to);
    }
    debug_assert_eq!(after.turn(), !pos.turn());
    if after.is_check() {
        s.push(if after.has_legal_move() { '+' } else { '#' });
    }
    s
}

fn file_char(file: u32) -> char {
    char::from(b'a' + file as u8)
}

fn rank_char(rank: u32) -> char {
    char::from(b'1' + rank as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SAN of a UCI move in a FEN.
    fn san_of(fen: &str, uci: &str) -> String {
        let pos = Position::from_fen(fen).unwrap();
        let (m, after) = pos.play_uci(uci).unwrap();
        san(&pos, &m, pos.legal_moves().iter().copied(), &after)
    }

    /// Each expected value is what Fairy-Stockfish 0.0.90 (pyffish `get_san`, variant
    /// shatranj) writes for the same move.
    #[test]
    fn writes_what_fairy_stockfish_writes() {
        let cases = [
            ("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", "b3b4", "Kb4"),
            ("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1", "c3d4", "Qd4"),
            ("4k2r/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q", "a8=Q"),
            ("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q", "axb8=Q"),
            ("4k2r/8/8/8/8/8/8/R3K2R w - - 0 1", "a1d1", "Rd1"),
            ("4k2r/8/8/8/8/R7/8/R3K3 w - - 0 1", "a1a2", "R1a2"),
            ("4k2r/8/8/8/8/8/8/1N1NK3 w - - 0 1", "b1c3", "Nbc3"),
            ("4k2r/8/8/8/8/8/8/B1B1K3 w - - 0 1", "a1c3", "Bc3"),
            ("3k3r/8/3K4/8/8/8/8/R7 w - - 0 1", "a1a8", "Ra8#"),
            ("N3k2r/8/N7/8/N7/8/8/4K3 w - - 0 1", "a6c5", "N6c5"),
            ("N3k2r/8/N7/8/N7/8/8/4K3 w - - 0 1", "a8c7", "N8c7+"),
            ("N1N1k2r/8/N7/8/N7/8/8/4K3 w - - 0 1", "a8b6", "Na8b6"),
            ("4k2r/8/8/8/8/2p5/1P1P4/4K3 w - - 0 1", "d2c3", "dxc3"),
            ("4k2r/8/8/8/8/8/1P1P4/4K3 w - - 0 1", "b2b3", "b3"),
            ("7k/5K2/8/8/8/8/8/r5R1 w - - 0 1", "g1g8", "Rg8+"),
            ("k1q5/8/1K6/8/8/8/8/7R w - - 0 1", "h1h8", "Rh8"),
            ("4k3/8/8/8/8/8/3p4/2Q1K3 w - - 0 1", "e1d2", "Kxd2"),
        ];
        for (fen, uci, want) in cases {
            assert_eq!(san_of(fen, uci), want, "{fen} {uci}");
        }
    }
}

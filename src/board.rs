//! Piece placement: one bitboard per colour and per role.

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::role::{Piece, Role};
use crate::square::Square;

/// Where the pieces stand. No legality is implied.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Board {
    colors: [Bitboard; 2],
    roles: [Bitboard; 6],
    occupied: Bitboard,
}

impl Board {
    /// A board without pieces.
    #[must_use]
    pub const fn empty() -> Board {
        Board {
            colors: [Bitboard::EMPTY; 2],
            roles: [Bitboard::EMPTY; 6],
            occupied: Bitboard::EMPTY,
        }
    }

    /// The board of one bitboard per colour and one per role (in the order of
    /// [`Role::ALL`]), or `None` if they do not describe one piece a square: the colours
    /// overlap, the roles overlap, or the squares of the colours are not those of the
    /// roles.
    #[inline]
    #[must_use]
    pub fn from_bitboards(colors: [Bitboard; 2], roles: [Bitboard; 6]) -> Option<Board> {
        let occupied = colors[0].0 | colors[1].0;
        let mut union = 0u64;
        let mut overlap = colors[0].0 & colors[1].0;
        for r in roles {
            overlap |= union & r.0;
            union |= r.0;
        }
        (overlap == 0 && union == occupied).then_some(Board {
            colors,
            roles,
            occupied: Bitboard(occupied),
        })
    }

    #[inline]
    #[must_use]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    #[inline]
    #[must_use]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.colors[color.index()]
    }

    #[inline]
    #[must_use]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.roles[role.index()]
    }

    #[inline]
    #[must_use]
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        self.colors[piece.color.index()] & self.roles[piece.role.index()]
    }

    /// The square of the shah of `color`, if there is exactly one.
    #[inline]
    #[must_use]
    pub fn shah_of(&self, color: Color) -> Option<Square> {
        (self.by_piece(Piece {
            color,
            role: Role::Shah,
        }))
        .single_square()
    }

    /// The role standing on `sq`, if any.
    #[inline]
    #[must_use]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied.contains(sq) {
            return None;
        }
        // Exactly one role board holds an occupied square: add up the role indices of the
        // boards that hold it (no branch per role).
        let s = sq.index();
        let index: u64 = self
            .roles
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.0 >> s) & 1) * i as u64)
            .sum();
        Some(Role::ALL[index as usize])
    }

    /// The colour of the piece on `sq`, if any.
    #[inline]
    #[must_use]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.colors[0].contains(sq) {
            Some(Color::White)
        } else if self.colors[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// The piece on `sq`, if any.
    #[inline]
    #[must_use]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Some(Piece {
            color: self.color_at(sq)?,
            role: self.role_at(sq)?,
        })
    }

    /// Puts `piece` on `sq`, replacing what stood there.
    #[inline]
    pub fn set_piece_at(&mut self, sq: Square, piece: Piece) {
        self.discard_piece_at(sq);
        self.colors[piece.color.index()].insert(sq);
        self.roles[piece.role.index()].insert(sq);
        self.occupied.insert(sq);
    }

    /// Removes and returns the piece on `sq`.
    #[inline]
    pub fn remove_piece_at(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.piece_at(sq)?;
        self.colors[piece.color.index()].remove(sq);
        self.roles[piece.role.index()].remove(sq);
        self.occupied.remove(sq);
        Some(piece)
    }

    /// Moves the piece of `color` and `role` on `from` to `to`, where it becomes `placed`
    /// (the same role, or a ferz for a promotion), removing whatever stood on `to`.
    ///
    /// The caller vouches that such a piece stands on `from`.
    #[inline]
    pub fn move_piece(&mut self, color: Color, role: Role, from: Square, to: Square, placed: Role) {
        debug_assert!(self.by_piece(Piece { color, role }).contains(from));
        let f = Bitboard::from_square(from).0;
        let t = Bitboard::from_square(to).0;
        for r in &mut self.roles {
            r.0 &= !t;
        }
        self.colors[color.other().index()].0 &= !t;
        self.colors[color.index()].0 = (self.colors[color.index()].0 & !f) | t;
        self.roles[role.index()].0 &= !f;
        self.roles[placed.index()].0 |= t;
        self.occupied.0 = (self.occupied.0 & !f) | t;
    }

    /// Puts `piece` on `sq`, which the caller vouches is empty.
    #[inline]
    pub fn put_on_empty(&mut self, sq: Square, piece: Piece) {
        debug_assert!(!self.occupied.contains(sq));
        self.colors[piece.color.index()].insert(sq);
        self.roles[piece.role.index()].insert(sq);
        self.occupied.insert(sq);
    }

    /// Removes what stands on `sq`, if anything.
    #[inline]
    pub fn discard_piece_at(&mut self, sq: Square) {
        if self.occupied.contains(sq) {
            let _ = self.remove_piece_at(sq);
        }
    }

    /// The pieces of `attacker` that attack `sq`, with `occupied` blocking the rooks.
    #[inline]
    #[must_use]
    pub fn attackers_to(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        let r = &self.roles;
        (attacks::shah_attacks(sq) & r[Role::Shah.index()]
            | attacks::ferz_attacks(sq) & r[Role::Ferz.index()]
            | attacks::alfil_attacks(sq) & r[Role::Alfil.index()]
            | attacks::knight_attacks(sq) & r[Role::Knight.index()]
            | attacks::pawn_attacks(attacker.other(), sq) & r[Role::Pawn.index()]
            | attacks::rook_attacks(sq, occupied) & r[Role::Rook.index()])
            & self.colors[attacker.index()]
    }

    /// Number of men (shah included) of `color`.
    #[inline]
    #[must_use]
    pub fn count(&self, color: Color) -> u32 {
        self.by_color(color).count()
    }

    /// Every piece with its square, a1 first.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied
            .into_iter()
            .filter_map(move |sq| self.piece_at(sq).map(|p| (sq, p)))
    }

    /// The board with every square mapped through `f` (a symmetry of the board).
    #[must_use]
    pub fn transform(&self, f: impl Fn(Square) -> Square) -> Board {
        let mut b = Board::empty();
        for (sq, p) in self.pieces() {
            b.set_piece_at(f(sq), p);
        }
        b
    }

    /// The board with ranks flipped and colours swapped (White's pieces become Black's).
    #[must_use]
    pub fn swap_colors(&self) -> Board {
        // Flipping ranks reverses the bytes of each bitboard (one rank a byte).
        let flip = |b: Bitboard| Bitboard(b.0.swap_bytes());
        Board {
            colors: [flip(self.colors[1]), flip(self.colors[0])],
            roles: self.roles.map(flip),
            occupied: flip(self.occupied),
        }
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f)?;
        for rank in (0..8).rev() {
            for file in 0..8 {
                let c = self
                    .piece_at(Square::from_coords(file, rank))
                    .map_or('.', Piece::char);
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_colors_flips_ranks_and_colours() {
        let pos = crate::Position::from_fen("8/1P4k1/8/2r5/8/5q2/6P1/4K2N w - - 0 1").unwrap();
        let board = pos.board();
        let mut expected = Board::empty();
        for (sq, p) in board.pieces() {
            expected.set_piece_at(
                sq.flip_vertical(),
                Piece {
                    color: p.color.other(),
                    role: p.role,
                },
            );
        }
        assert_eq!(board.swap_colors(), expected);
        assert_eq!(board.swap_colors().swap_colors(), *board);
    }
}

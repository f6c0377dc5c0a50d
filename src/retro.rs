//! Un-moves: the moves that could have led to a position.
//!
//! Built on the same attack tables as the forward moves (every shatranj piece but the
//! pawn moves the same way backwards as forwards), so the two directions cannot drift
//! apart; `tests/retro.rs` checks that each un-move reverses a legal move and that every
//! legal move is found among the un-moves of its result.

use std::fmt;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::position::{MAX_MEN_PER_SIDE, MAX_PAWNS_PER_SIDE, Position};
use crate::role::{Piece, Role};
use crate::square::Square;

/// A move taken back. Applied to a position it gives the position before the move, with
/// the side that made the move to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnMove {
    /// The role of the piece as it stands now (a ferz, for an un-promotion).
    pub role: Role,
    /// Where the piece stands now.
    pub to: Square,
    /// Where it goes back to.
    pub from: Square,
    /// The opponent's piece restored on `to` (an un-capture).
    pub uncapture: Option<Role>,
    /// The ferz on `to` goes back as a pawn.
    pub unpromotion: bool,
}

impl UnMove {
    /// Whether this un-move leaves the table's material (restores a piece or a pawn).
    #[must_use]
    pub const fn is_conversion(&self) -> bool {
        self.uncapture.is_some() || self.unpromotion
    }
}

impl fmt::Display for UnMove {
    /// The forward move in UCI (`e7e8q`), marked with what it restores: `x` and the
    /// captured letter.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if self.unpromotion {
            f.write_str("q")?;
        }
        if let Some(r) = self.uncapture {
            write!(f, "x{}", r.upper_char())?;
        }
        Ok(())
    }
}

/// Which un-moves to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnMoveKinds {
    /// Roles the un-captures may restore (empty: no un-captures).
    pub uncaptures: &'static [Role],
    /// Whether to generate un-promotions.
    pub unpromotions: bool,
}

impl UnMoveKinds {
    /// Quiet un-moves only: what stays within one material.
    pub const QUIET: UnMoveKinds = UnMoveKinds {
        uncaptures: &[],
        unpromotions: false,
    };
    /// Every kind: un-captures of every capturable role and un-promotions.
    pub const ALL: UnMoveKinds = UnMoveKinds {
        uncaptures: &Role::CAPTURABLE,
        unpromotions: true,
    };
}

impl Position {
    /// Calls `f` with every un-move of the given kinds and the legal position it leads to.
    pub fn for_each_unmove(&self, kinds: UnMoveKinds, mut f: impl FnMut(UnMove, Position)) {
        let mover = !self.turn();
        let board = self.board();
        let occ = board.occupied();
        let empty = !occ;
        let back = mover.fold(-1, 1);
        let mover_first_rank = Bitboard::rank(mover.fold(0, 7));
        let mover_last_rank = Bitboard::rank(mover.fold(7, 0));

        let emit = |um: UnMove, f: &mut dyn FnMut(UnMove, Position)| {
            // the geometry is right by construction: only legality is left to check
            if let Some(p) = self.unplay_legal(&um) {
                f(um, p);
            }
        };

        for to in board.by_color(mover) {
            let role = board.role_at(to).expect("occupied");
            // where the piece could have come from, and whether an enemy piece could
            // have stood on `to` (pawns capture differently from how they move)
            let (quiet_from, capture_from) = match role {
                Role::Pawn => {
                    let quiet = to
                        .offset(0, back)
                        .map_or(Bitboard::EMPTY, Bitboard::from_square)
                        & empty
                        & !mover_first_rank;
                    let capture = attacks::pawn_attacks(!mover, to) & empty & !mover_first_rank;
                    (quiet, capture)
                }
                _ => {
                    let from = attacks::attacks(role, mover, to, occ) & empty;
                    (from, from)
                }
            };
            for from in quiet_from {
                emit(
                    UnMove {
                        role,
                        to,
                        from,
                        uncapture: None,
                        unpromotion: false,
                    },
                    &mut f,
                );
            }
            for from in capture_from {
                for &r in kinds.uncaptures {
                    emit(
                        UnMove {
                            role,
                            to,
                            from,
                            uncapture: Some(r),
                            unpromotion: false,
                        },
                        &mut f,
                    );
                }
            }
            if kinds.unpromotions && role == Role::Ferz && mover_last_rank.contains(to) {
                if let Some(from) = to.offset(0, back) {
                    if empty.contains(from) {
                        emit(
                            UnMove {
                                role,
                                to,
                                from,
                                uncapture: None,
                                unpromotion: true,
                            },
                            &mut f,
                        );
                    }
                }
                for from in attacks::pawn_attacks(!mover, to) & empty {
                    for &r in kinds.uncaptures {
                        emit(
                            UnMove {
                                role,
                                to,
                                from,
                                uncapture: Some(r),
                                unpromotion: true,
                            },
                            &mut f,
                        );
                    }
                }
            }
        }
    }

    /// Every un-move of the given kinds with the position it leads to.
    #[must_use]
    pub fn unmoves(&self, kinds: UnMoveKinds) -> Vec<(UnMove, Position)> {
        let mut v = Vec::new();
        self.for_each_unmove(kinds, |um, p| v.push((um, p)));
        v
    }

    /// The position before `um`, if `um` takes back a legal move: the mover's piece back
    /// on `from` (a pawn again after an un-promotion), the un-captured piece on `to`, the
    /// mover to move. `None` if the piece could not have moved from `from` to `to` that
    /// way, or if the position before would be illegal.
    #[must_use]
    pub fn unplay_checked(&self, um: &UnMove) -> Option<Position> {
        let prev = self.unplay_legal(um)?;
        let mover = prev.turn();
        let geometry_ok = if um.unpromotion || um.role == Role::Pawn {
            let forward = Bitboard::from_square(um.from)
                .0
                .rotate_left(mover.fold(8, 56));
            let last_rank = Bitboard::rank(mover.fold(7, 0)).contains(um.to);
            let step = if um.uncapture.is_some() {
                attacks::pawn_attacks(mover, um.from).contains(um.to)
            } else {
                forward == Bitboard::from_square(um.to).0
            };
            step && (um.role == Role::Ferz) == um.unpromotion && last_rank == um.unpromotion
        } else {
            attacks::attacks(um.role, mover, um.from, prev.board().occupied()).contains(um.to)
        };
        geometry_ok.then_some(prev)
    }

    /// [`Position::unplay_checked`] without the check that the piece could make the move.
    fn unplay_legal(&self, um: &UnMove) -> Option<Position> {
        let mover = !self.turn();
        let mut board: Board = *self.board();
        let piece = board.remove_piece_at(um.to)?;
        if piece.color != mover || piece.role != um.role || board.occupied().contains(um.from) {
            return None;
        }
        let back_role = if um.unpromotion { Role::Pawn } else { um.role };
        board.set_piece_at(
            um.from,
            Piece {
                color: mover,
                role: back_role,
            },
        );
        if let Some(r) = um.uncapture {
            if r == Role::Shah || (r == Role::Pawn && (um.to.rank() == 0 || um.to.rank() == 7)) {
                return None;
            }
            board.set_piece_at(
                um.to,
                Piece {
                    color: !mover,
                    role: r,
                },
            );
            let victims = board.by_color(!mover);
            if victims.count() > MAX_MEN_PER_SIDE
                || (victims & board.by_role(Role::Pawn)).count() > MAX_PAWNS_PER_SIDE
            {
                return None;
            }
        }
        if um.unpromotion
            && (board.by_color(mover) & board.by_role(Role::Pawn)).count() > MAX_PAWNS_PER_SIDE
        {
            return None;
        }
        // The position before the move must be legal: shahs apart, and the side that did
        // not move (to move now) not in check there.
        let ws = board.shah_of(Color::White)?;
        let bs = board.shah_of(Color::Black)?;
        if ws.distance(bs) <= 1 {
            return None;
        }
        let victim_shah = if mover == Color::White { bs } else { ws };
        if board
            .attackers_to(victim_shah, mover, board.occupied())
            .any()
        {
            return None;
        }
        Some(Position::from_board_unchecked(board, mover))
    }
}

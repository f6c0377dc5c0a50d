//! Random legal positions for the property tests (`tests/oracle.rs`, `tests/retro.rs`).
//!
//! A material is drawn first (each side a shah plus some of pawn, knight, alfil, ferz,
//! rook), then the men are dropped on random squares until the placement is legal. Pawns
//! and ferzes may be pushed towards the squares where promotions happen, so that
//! promotions and un-promotions are common rather than rare.

#![allow(dead_code)] // each test binary uses part of this

use rand::Rng;
use shatranj_tb::{Board, Color, Piece, Position, Role, Square};

/// How to draw positions.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Fewest and most men on the board, shahs included.
    pub min_men: usize,
    pub max_men: usize,
    /// Chance that a pawn stands one step from promotion.
    pub pawn_on_seventh: f64,
    /// Chance that a ferz stands on its side's last rank (where promotions land).
    pub ferz_on_last_rank: f64,
    /// Chance that one side is drawn bare (shah alone).
    pub bare_side: f64,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            min_men: 3,
            max_men: 8,
            pawn_on_seventh: 0.3,
            ferz_on_last_rank: 0.2,
            bare_side: 0.2,
        }
    }
}

/// A random role other than the shah, pawns and rooks a little more often.
pub fn random_role(rng: &mut impl Rng) -> Role {
    const ROLES: [Role; 8] = [
        Role::Pawn,
        Role::Pawn,
        Role::Knight,
        Role::Alfil,
        Role::Ferz,
        Role::Ferz,
        Role::Rook,
        Role::Rook,
    ];
    ROLES[rng.gen_range(0..ROLES.len())]
}

/// A random material: the pieces (not the shahs) of White and of Black.
pub fn random_material(rng: &mut impl Rng, p: &Params) -> (Vec<Role>, Vec<Role>) {
    let men = rng.gen_range(p.min_men.max(2)..=p.max_men);
    let pieces = men - 2;
    let (mut white, mut black) = (Vec::new(), Vec::new());
    let bare = rng.gen_bool(p.bare_side);
    let bare_white = rng.gen_bool(0.5);
    for _ in 0..pieces {
        let to_white = if bare { !bare_white } else { rng.gen_bool(0.5) };
        if to_white {
            white.push(random_role(rng));
        } else {
            black.push(random_role(rng));
        }
    }
    (white, black)
}

fn random_square_for(rng: &mut impl Rng, piece: Piece, p: &Params) -> Square {
    match piece.role {
        Role::Pawn => {
            let seventh = piece.color.fold(6, 1);
            let rank = if rng.gen_bool(p.pawn_on_seventh) {
                seventh
            } else {
                rng.gen_range(1..7)
            };
            Square::from_coords(rng.gen_range(0..8), rank)
        }
        Role::Ferz if rng.gen_bool(p.ferz_on_last_rank) => {
            Square::from_coords(rng.gen_range(0..8), piece.color.fold(7, 0))
        }
        _ => Square::new(rng.gen_range(0..64)),
    }
}

/// A legal position with this material and side to move, or `None` if `tries` random
/// placements all failed.
pub fn place(
    rng: &mut impl Rng,
    white: &[Role],
    black: &[Role],
    turn: Color,
    p: &Params,
    tries: usize,
) -> Option<Position> {
    'attempt: for _ in 0..tries {
        let mut board = Board::empty();
        let men = [(Color::White, Role::Shah), (Color::Black, Role::Shah)]
            .into_iter()
            .chain(white.iter().map(|&r| (Color::White, r)))
            .chain(black.iter().map(|&r| (Color::Black, r)));
        for (color, role) in men {
            let piece = Piece { color, role };
            let mut placed = false;
            for _ in 0..32 {
                let sq = random_square_for(rng, piece, p);
                if !board.occupied().contains(sq) {
                    board.set_piece_at(sq, piece);
                    placed = true;
                    break;
                }
            }
            if !placed {
                continue 'attempt;
            }
        }
        if let Ok(pos) = Position::from_board(board, turn) {
            return Some(pos);
        }
    }
    None
}

/// A random legal position drawn with `p`.
pub fn random_position(rng: &mut impl Rng, p: &Params) -> Position {
    loop {
        let (white, black) = random_material(rng, p);
        let turn = if rng.gen_bool(0.5) {
            Color::White
        } else {
            Color::Black
        };
        if let Some(pos) = place(rng, &white, &black, turn, p, 100) {
            return pos;
        }
    }
}

//! The position index: decode(encode(p)) is p's canonical form, for every index of a 4-man
//! table (see the unit tests) and for random positions of 5-man tables, with and without
//! pawns.

use rand::{Rng, SeedableRng};
use shatranj_tb::index::TableIndex;
use shatranj_tb::{Board, Color, Material, Piece, Position, Role, Square};

/// A random legal position of `m` (stored colours), by dropping the men on random squares.
fn random_position(m: Material, rng: &mut impl Rng) -> Position {
    loop {
        let mut board = Board::empty();
        let mut ok = true;
        for color in Color::ALL {
            let mut men = vec![Role::Shah];
            for role in Role::CAPTURABLE {
                for _ in 0..m.side(color).count(role) {
                    men.push(role);
                }
            }
            for role in men {
                let sq = Square::new(rng.gen_range(0..64));
                if board.occupied().contains(sq) {
                    ok = false;
                }
                board.set_piece_at(sq, Piece { color, role });
            }
        }
        let turn = if rng.r#gen::<bool>() {
            Color::White
        } else {
            Color::Black
        };
        if ok {
            if let Ok(p) = Position::from_board(board, turn) {
                return p;
            }
        }
    }
}

#[test]
fn five_man_round_trips_and_symmetry() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for name in [
        "KRQvKR", "KNBvKQ", "KRRvKN", "KRPvKR", "KPPvKB", "KQvKPP", "KRvKNP",
    ] {
        let m: Material = name.parse().unwrap();
        let index = TableIndex::new(m.normalized());
        for _ in 0..20_000 {
            let p = random_position(m.normalized(), &mut rng);
            let i = index
                .encode(p.board())
                .expect("a legal position has an index");
            assert!(i < index.size());
            let back = index.decode(i).expect("an index of a position decodes");
            // the decoded board is a symmetric image of p: same index, same material
            assert_eq!(index.encode(&back), Some(i), "{name} {p:?}");
            assert_eq!(Material::from_board(&back), Material::from_board(p.board()));
            let q = Position::from_board(back, p.turn()).expect("the image is legal");
            // mirror images of p share its index
            let mirror = p.board().transform(Square::flip_horizontal);
            assert_eq!(index.encode(&mirror), Some(i), "{name} mirror of {p:?}");
            if !m.has_pawns() {
                for f in [Square::flip_vertical, Square::flip_diagonal] {
                    assert_eq!(index.encode(&p.board().transform(f)), Some(i), "{name}");
                }
            }
            assert_eq!(q.legal_moves().len(), p.legal_moves().len());
        }
    }
}

//! The position index: decode(encode(p)) is p's canonical form, for every index of a 4-man
//! table (see the unit tests) and for random positions of 5- and 6-man tables, with and
//! without pawns; the sizes of 6-man indices are the formula's.

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

/// Random legal positions of each material in `names` (as written: stored colours or
/// not) encode to an index that decodes to a symmetric image of the same position.
fn round_trips_and_symmetry(names: &[&str], per_material: usize, seed: u64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for &name in names {
        let m: Material = name.parse().unwrap();
        let index = TableIndex::new(m.normalized());
        for _ in 0..per_material {
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

#[test]
fn five_man_round_trips_and_symmetry() {
    round_trips_and_symmetry(
        &[
            "KRQvKR", "KNBvKQ", "KRRvKN", "KRPvKR", "KPPvKB", "KQvKPP", "KRvKNP",
        ],
        20_000,
        5,
    );
}

#[test]
fn six_man_round_trips_and_symmetry() {
    round_trips_and_symmetry(
        &[
            // without pawns: two pairs, a triple, three singles
            "KRRvKRR", "KNNvKBB", "KRRRvKQ", "KRQvKRN", "KQBNvKR",
            // with pawns: one side's, both sides', three of them
            "KRPvKRP", "KRRvKPP", "KPPPvKR", "KQPvKNB", "KPPvKPP",
        ],
        20_000,
        6,
    );
}

/// C(n, k).
fn choose(n: u64, k: u64) -> u64 {
    (0..k).fold(1, |c, i| c * (n - i) / (i + 1))
}

#[test]
fn six_man_sizes_are_the_formula() {
    // shah pairs (462 without pawns, 1,806 with), times one combination a group of like
    // pieces: of 64 squares, or 48 for pawns
    let cases: [(&str, u64); 7] = [
        ("KRRvKRR", 462 * choose(64, 2) * choose(64, 2)),
        ("KNNvKBB", 462 * choose(64, 2) * choose(64, 2)),
        ("KRRRvKQ", 462 * choose(64, 3) * 64),
        ("KQBNvKR", 462 * 64 * 64 * 64 * 64),
        ("KRPvKRP", 1806 * 64 * 48 * 64 * 48),
        ("KPPPvKR", 1806 * choose(48, 3) * 64),
        ("KRRvKPP", 1806 * choose(64, 2) * choose(48, 2)),
    ];
    for (name, size) in cases {
        // the size does not depend on which colour is stored first
        let m: Material = name.parse::<Material>().unwrap().normalized();
        let index = TableIndex::new(m);
        assert_eq!(index.size(), size, "{name}");
        assert_eq!(index.kk_count(), if m.has_pawns() { 1806 } else { 462 });
    }
    // the largest 6-man pawnless pair table: 1.88 G positions a side
    assert_eq!(
        TableIndex::new("KRRvKRR".parse().unwrap()).size(),
        1_877_686_272
    );
}

/// The slices of an index cover it, in order, and no move that stays in the table (no
/// capture, no promotion) leaves its slice: a table with a lone pawn falls into four
/// slices, one a file pair of that pawn, and one whose pawns all come in groups into ten,
/// one a pair of file pairs of its first pair of pawns, each made alone by the generator.
#[test]
fn no_move_within_a_table_leaves_its_slice() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(24);
    for (name, slices) in [
        ("KRPvKR", 4),
        ("KPvKP", 4),
        ("KPPvKR", 10),
        ("KRvKNP", 4),
        ("KPvKPP", 4),
        ("KPPvKP", 4),
        ("KRvKPP", 10),
        ("KPPPvKR", 1),
        ("KRQvKR", 1),
        // from 6 men, each side's pawns where they are one or two
        ("KRPvKBP", 16),
        ("KRPvKPP", 40),
        ("KPPvKPP", 100),
        ("KNBvKPP", 10),
        ("KRBPvKR", 4),
    ] {
        let m: Material = name.parse::<Material>().unwrap().normalized();
        let index = TableIndex::try_with_scheme(m, 2).unwrap();
        assert_eq!(index.scheme(), if slices > 1 { 2 } else { 1 }, "{name}");
        let ranges = index.slices();
        assert_eq!(ranges.len(), slices, "{name}");
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges.last().unwrap().end, index.size());
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "{name}");
        let slice_of = |i: u64| ranges.iter().position(|r| r.contains(&i)).unwrap();
        let mut seen = vec![false; ranges.len()];
        let mut moves = 0;
        for _ in 0..3_000 {
            let p = random_position(m, &mut rng);
            let i = index.encode(p.board()).unwrap();
            let s = slice_of(i);
            seen[s] = true;
            for mv in p.legal_moves().iter() {
                let child = p.play_unchecked(mv);
                if Material::from_board(child.board()) != m {
                    continue;
                }
                let j = index.encode(child.board()).unwrap();
                assert_eq!(slice_of(j), s, "{name}: {p:?} then {mv:?}");
                moves += 1;
            }
        }
        assert!(seen.iter().all(|&s| s), "{name}: a slice never met");
        assert!(moves > 10_000, "{name}: {moves} moves");
    }
}

/// Scheme 1, the order tables with a lone pawn were written in before their slices, still
/// round-trips (it is kept for comparisons with files written before); where there is no
/// lone pawn, both schemes are the same.
#[test]
fn scheme_1_round_trips_with_pawns() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for name in ["KRPvKR", "KPPvKP", "KNvKP", "KQvKPP", "KPPvKR", "KPPPvKR"] {
        let m: Material = name.parse::<Material>().unwrap().normalized();
        let one = TableIndex::try_with_scheme(m, 1).unwrap();
        let two = TableIndex::new(m);
        let split = two.slices().len() > 1;
        assert_eq!(one.size(), two.size());
        assert_eq!(
            one.slices(),
            std::iter::once(0..one.size()).collect::<Vec<_>>()
        );
        let mut differ = 0;
        for _ in 0..5_000 {
            let p = random_position(m, &mut rng);
            let i = one.encode(p.board()).unwrap();
            let back = one.decode(i).unwrap();
            assert_eq!(one.encode(&back), Some(i), "{name} {p:?}");
            assert_eq!(two.encode(&back), two.encode(p.board()), "{name} {p:?}");
            differ += usize::from(two.encode(p.board()) != Some(i));
        }
        if split {
            assert!(
                differ > 4_000,
                "{name}: the schemes differ at only {differ} positions"
            );
        } else {
            assert_eq!(differ, 0, "{name}");
        }
    }
}

/// Scheme 2 of a table whose pawns are split (a pair, a lone pawn and a pair, two lone
/// pawns, two pairs): every index that
/// decodes encodes back to itself, every position's index decodes, and the index the files
/// number it by ([`TableIndex::file_index`]) is scheme 1's; the split pair's digits that
/// name no position (both pawns in one file pair, past the 66 used) decode to nothing.
#[test]
fn a_split_pair_round_trips_and_maps_to_the_files_order() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2);
    // the 6-man ones split both sides' pawns: KPPvKPP two pairs (100 slices), KRPvKPP a
    // lone pawn and a pair (40), KRPvKBP two lone pawns (16)
    for name in [
        "KPPvKR", "KRvKPP", "KPvKPP", "KPPvKPP", "KRRvKPP", "KPPvKNB", "KRPvKPP", "KRPvKBP",
    ] {
        let m: Material = name.parse::<Material>().unwrap().normalized();
        let one = TableIndex::try_with_scheme(m, 1).unwrap();
        let two = TableIndex::try_with_scheme(m, 2).unwrap();
        let layout = two.split_layout().expect("split");
        let pair = layout.outer.pair || layout.inner.is_some_and(|d| d.pair);
        // 10 slices of 144 values where scheme 1 has 1,128 combinations
        assert_eq!(two.file_size(), one.size(), "{name}");
        assert_eq!(layout.file_size(), one.size(), "{name}");
        assert_eq!(layout.size(), two.size(), "{name}");
        for _ in 0..4_000 {
            let p = random_position(m, &mut rng);
            let i = two.encode(p.board()).expect("a position has an index");
            let back = two.decode(i).expect("and it decodes");
            assert_eq!(two.encode(&back), Some(i), "{name} {p:?}");
            assert_eq!(one.encode(&back), one.encode(p.board()), "{name} {p:?}");
            assert_eq!(two.file_index(i), one.encode(p.board()), "{name} {p:?}");
        }
        // strided over the whole index: decoding and encoding agree, and the unused
        // digits name nothing
        let mut step = (two.size() / 100_003) | 1;
        // (odd and prime to 3: every value of every digit comes up)
        while step % 3 == 0 {
            step += 2;
        }
        let (mut used, mut unused) = (0, 0);
        let mut i = 0;
        while i < two.size() {
            match two.decode(i) {
                Some(board) => {
                    assert_eq!(two.encode(&board), Some(i), "{name} {i}");
                    let f = two.file_index(i).expect("a position has a file index");
                    assert_eq!(one.decode(f), Some(board), "{name} {i}");
                    used += 1;
                }
                None => unused += usize::from(two.file_index(i).is_none()),
            }
            i += step;
        }
        // only a split pair leaves values unused
        assert!(used > 30_000, "{name}: {used}");
        assert_eq!(unused > 1_000, pair, "{name}: {unused} unused");
    }
}

/// The pawn digit's two numberings are inverse: each of scheme 1's (48 places of a lone
/// pawn, 1,128 combinations of a pair) is one slice digit of scheme 2, and back.
#[test]
fn split_digits_are_a_bijection() {
    for (name, runs, slices, per_slice) in [("KRPvKR", 48, 4, 12), ("KPPvKR", 1128, 10, 144)] {
        let m: Material = name.parse::<Material>().unwrap().normalized();
        let layout = TableIndex::try_with_scheme(m, 2)
            .unwrap()
            .split_layout()
            .unwrap()
            .outer;
        assert_eq!(layout.file_runs(), runs);
        assert_eq!(layout.slices(), slices);
        assert_eq!(layout.slice_runs(), per_slice);
        let mut seen = std::collections::HashSet::new();
        for p in 0..runs {
            let (slice, q) = layout.slice_place(p);
            assert!(slice < slices && q < per_slice, "{name} {p}");
            assert_eq!(layout.file_place(slice, q), Some(p), "{name} {p}");
            assert!(seen.insert((slice, q)), "{name} {p}");
        }
        let valid = (0..slices)
            .flat_map(|s| (0..per_slice).map(move |q| (s, q)))
            .filter(|&(s, q)| layout.file_place(s, q).is_some())
            .count();
        assert_eq!(valid as u64, runs, "{name}");
    }
}

/// The generator splits a pair of pawns from six men only (a 5-man table made whole fits
/// in well under a GiB, and its slices cost time); a lone pawn always.
#[test]
fn the_generator_splits_pairs_from_six_men() {
    for (name, slices) in [
        ("KPPvKR", 1),
        ("KPPvKP", 4),
        ("KRPPvKR", 10),
        ("KNBvKPP", 10),
        ("KPPvKPP", 100),
        ("KRPvKPP", 40),
        ("KRPvKBP", 16),
        ("KRBPvKR", 4),
        ("KPPPvKR", 1),
        ("KRRvKRR", 1),
    ] {
        let m: Material = name.parse::<Material>().unwrap().normalized();
        assert_eq!(
            TableIndex::for_generation(m).slices().len(),
            slices,
            "{name}"
        );
    }
}

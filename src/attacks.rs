//! Attack tables, built at compile time.
//!
//! Every piece except the rook is a leaper (a fixed set of target squares whatever stands
//! between): the shah (one step any way), the ferz (one step diagonally), the alfil (a
//! jump of exactly two squares diagonally, never blocked), the knight, and the pawn's
//! diagonal capture. The rook slides along ranks and files until blocked. The un-move
//! generator uses these same tables, so forward and backward moves cannot disagree.

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::role::Role;
use crate::square::Square;

const fn leaper_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let f = (sq % 8) as i32;
        let r = (sq / 8) as i32;
        let mut i = 0;
        let mut bb = 0u64;
        while i < deltas.len() {
            let nf = f + deltas[i].0;
            let nr = r + deltas[i].1;
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                bb |= 1u64 << (nr * 8 + nf);
            }
            i += 1;
        }
        table[sq] = bb;
        sq += 1;
    }
    table
}

static SHAH: [u64; 64] = leaper_table(&[
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
]);
static FERZ: [u64; 64] = leaper_table(&[(-1, -1), (1, -1), (-1, 1), (1, 1)]);
static ALFIL: [u64; 64] = leaper_table(&[(-2, -2), (2, -2), (-2, 2), (2, 2)]);
static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static PAWN_WHITE: [u64; 64] = leaper_table(&[(-1, 1), (1, 1)]);
static PAWN_BLACK: [u64; 64] = leaper_table(&[(-1, -1), (1, -1)]);

/// Rays in the four rook directions, without the origin: north, east, south, west.
static RAYS: [[u64; 64]; 4] = {
    let dirs: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
    let mut rays = [[0u64; 64]; 4];
    let mut d = 0;
    while d < 4 {
        let mut sq = 0;
        while sq < 64 {
            let mut f = (sq % 8) as i32 + dirs[d].0;
            let mut r = (sq / 8) as i32 + dirs[d].1;
            let mut bb = 0u64;
            while f >= 0 && f < 8 && r >= 0 && r < 8 {
                bb |= 1u64 << (r * 8 + f);
                f += dirs[d].0;
                r += dirs[d].1;
            }
            rays[d][sq] = bb;
            sq += 1;
        }
        d += 1;
    }
    rays
};

/// Squares strictly between two squares on one rank or file (empty otherwise).
static BETWEEN: [[u64; 64]; 64] = {
    let mut t = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut d = 0;
        while d < 4 {
            let ray = RAYS[d][a];
            let mut b = 0;
            while b < 64 {
                if ray & (1u64 << b) != 0 {
                    // squares on the ray from a, closer to a than b
                    t[a][b] = ray & !RAYS[d][b] & !(1u64 << b);
                }
                b += 1;
            }
            d += 1;
        }
        a += 1;
    }
    t
};

/// The whole rank or file through two squares, if they share one (empty otherwise).
static LINE: [[u64; 64]; 64] = {
    let mut t = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            if a != b {
                if a % 8 == b % 8 {
                    t[a][b] = 0x0101_0101_0101_0101u64 << (a % 8);
                } else if a / 8 == b / 8 {
                    t[a][b] = 0xffu64 << (8 * (a / 8));
                }
            }
            b += 1;
        }
        a += 1;
    }
    t
};

#[inline]
#[must_use]
pub fn shah_attacks(sq: Square) -> Bitboard {
    Bitboard(SHAH[sq.index()])
}

#[inline]
#[must_use]
pub fn ferz_attacks(sq: Square) -> Bitboard {
    Bitboard(FERZ[sq.index()])
}

#[inline]
#[must_use]
pub fn alfil_attacks(sq: Square) -> Bitboard {
    Bitboard(ALFIL[sq.index()])
}

#[inline]
#[must_use]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

/// The squares a pawn of `color` on `sq` attacks (diagonally forward).
#[inline]
#[must_use]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    match color {
        Color::White => Bitboard(PAWN_WHITE[sq.index()]),
        Color::Black => Bitboard(PAWN_BLACK[sq.index()]),
    }
}

/// The squares a slider on file `f` of a line of 8 attacks, the inner squares of the line
/// occupied as the 6 bits of `inner` say (bit `i` for square `i + 1`; the end squares
/// never block anything beyond them).
const fn line_attacks(f: i32, inner: u32) -> u32 {
    let occ = inner << 1;
    let mut out = 0;
    let mut step = -1;
    while step <= 1 {
        let mut g = f + step;
        while g >= 0 && g < 8 {
            out |= 1 << g;
            if occ & (1 << g) != 0 {
                break;
            }
            g += step;
        }
        step += 2;
    }
    out
}

/// `[file][inner occupancy of the rank]`: a rook's attacks along the first rank.
static RANK_ATTACKS: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut f = 0;
    while f < 8 {
        let mut inner = 0;
        while inner < 64 {
            t[f][inner] = line_attacks(f as i32, inner as u32) as u8;
            inner += 1;
        }
        f += 1;
    }
    t
};

/// `[rank][inner occupancy of the file]`: a rook's attacks along the a-file.
static FILE_ATTACKS: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut r = 0;
    while r < 8 {
        let mut inner = 0;
        while inner < 64 {
            let along = line_attacks(r as i32, inner as u32);
            let mut bb = 0u64;
            let mut k = 0;
            while k < 8 {
                if along & (1 << k) != 0 {
                    bb |= 1 << (8 * k);
                }
                k += 1;
            }
            t[r][inner] = bb;
            inner += 1;
        }
        r += 1;
    }
    t
};

/// Multiplying the a-file by this (the h2-c7 diagonal) brings the squares a2..a7 to the
/// six highest bits, in order, without carries.
const FILE_TO_TOP: u64 = 0x0004_0810_2040_8000;

/// The squares a rook on `sq` attacks with `occupied` blocking it.
///
/// The rank and the file are looked up apart, each by its six inner squares
/// ("kindergarten" bitboards): no branch, two small tables.
#[inline]
#[must_use]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    let s = sq.index();
    let (file, rank) = (s % 8, s / 8);
    let occ = occupied.0;
    let rank_inner = ((occ >> (8 * rank + 1)) & 63) as usize;
    let along_rank = u64::from(RANK_ATTACKS[file][rank_inner]) << (8 * rank);
    let file_inner =
        (((occ >> file) & Bitboard::file(0).0).wrapping_mul(FILE_TO_TOP) >> 58) as usize;
    let along_file = FILE_ATTACKS[rank][file_inner] << file;
    Bitboard(along_rank | along_file)
}

/// The squares a piece of `role` and `color` on `sq` attacks.
#[inline(always)]
#[must_use]
pub fn attacks(role: Role, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Alfil => alfil_attacks(sq),
        Role::Ferz => ferz_attacks(sq),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Shah => shah_attacks(sq),
    }
}

/// Squares strictly between `a` and `b` if they share a rank or file.
#[inline]
#[must_use]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index()][b.index()])
}

/// The rank or file through `a` and `b`, if they share one.
#[inline]
#[must_use]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a.index()][b.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_rook(sq: Square, occ: Bitboard) -> Bitboard {
        let mut bb = Bitboard::EMPTY;
        for (df, dr) in [(0, 1), (1, 0), (0, -1), (-1, 0)] {
            let mut cur = sq;
            while let Some(next) = cur.offset(df, dr) {
                bb.insert(next);
                if occ.contains(next) {
                    break;
                }
                cur = next;
            }
        }
        bb
    }

    #[test]
    fn rook_attacks_exhaustive_on_lines() {
        // every square, every subset of the squares on its rank and file
        for sq in Square::ALL {
            let mask = (Bitboard::rank(sq.rank()) | Bitboard::file(sq.file())).without(sq);
            let mut subset = 0u64;
            loop {
                let occ = Bitboard(subset);
                assert_eq!(rook_attacks(sq, occ), slow_rook(sq, occ), "{sq} {occ:?}");
                // pieces off the rook's lines change nothing
                let off = Bitboard(0x9bd1_4f27_3ac8_e561 & !mask.0).without(sq);
                assert_eq!(
                    rook_attacks(sq, occ | off),
                    slow_rook(sq, occ),
                    "{sq} {occ:?}"
                );
                subset = subset.wrapping_sub(mask.0) & mask.0;
                if subset == 0 {
                    break;
                }
            }
        }
    }

    #[test]
    fn leapers() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        assert_eq!(
            alfil_attacks(sq("d1")),
            Bitboard::from(sq("b3")) | sq("f3").into()
        );
        assert_eq!(alfil_attacks(sq("a1")).count(), 1);
        assert_eq!(ferz_attacks(sq("a1")), Bitboard::from(sq("b2")));
        assert_eq!(ferz_attacks(sq("d4")).count(), 4);
        assert_eq!(knight_attacks(sq("a1")).count(), 2);
        assert_eq!(shah_attacks(sq("e4")).count(), 8);
        assert_eq!(
            pawn_attacks(Color::White, sq("a2")),
            Bitboard::from(sq("b3"))
        );
        assert_eq!(
            pawn_attacks(Color::Black, sq("h7")),
            Bitboard::from(sq("g6"))
        );
        // the alfil reaches 8 squares from any start, counting its own
        let mut seen = Bitboard::from(sq("c1"));
        let mut frontier = seen;
        while frontier.any() {
            let mut next = Bitboard::EMPTY;
            for s in frontier {
                next |= alfil_attacks(s);
            }
            frontier = next & !seen;
            seen |= next;
        }
        assert_eq!(seen.count(), 8);
    }

    #[test]
    fn between_and_line() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        assert_eq!(between(sq("a1"), sq("a4")).count(), 2);
        assert_eq!(between(sq("a4"), sq("a1")).count(), 2);
        assert_eq!(between(sq("a1"), sq("b2")), Bitboard::EMPTY);
        assert_eq!(line(sq("c3"), sq("c7")), Bitboard::file(2));
        assert_eq!(line(sq("c3"), sq("d4")), Bitboard::EMPTY);
    }
}

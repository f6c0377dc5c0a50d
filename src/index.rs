//! The position index of a table: every position of a material <-> a dense integer.
//!
//! Layout of scheme 1 (every table without pawns): `index = kk * prod(group sizes) +
//! groups`, mixed radix, where
//! - `kk` numbers the placements of the two shahs up to symmetry: without pawns, the
//!   White shah in the triangle a1-d1-d4 and, when it stands on the a1-h8 diagonal, the
//!   Black shah on or below that diagonal (462 pairs); with pawns, only the left-right
//!   mirror applies and the White shah stands on files a-d (1,806 pairs);
//! - each group of like pieces (one colour and role) is numbered as a combination of
//!   squares (64 squares, or for pawns the 48 squares of ranks 2-7), White's groups
//!   first, in the order rook, knight, ferz, alfil, pawn.
//!
//! Table files are numbered by scheme 1 ([`INDEX_SCHEME`]). The generator numbers a table
//! with a lone pawn of one side by scheme 2 ([`TableIndex::for_generation`]), the same but
//! for one digit, so that the table falls into [slices](TableIndex::slices) that no move
//! inside the table leaves, each a range of indices: the first lone pawn's place is
//! split into its *file pair* (files a and h, b and g, c and f, d and e), a digit of four
//! values before `kk`, the most significant, and its place within the pair (twelve: rank
//! by rank, the left file first), where scheme 1 has its square among the 48. A pawn keeps
//! its file pair (it leaves its file only by capturing, which leaves the table, and the
//! mirror swaps the files of a pair), so a position's slice never changes. The generator
//! makes one slice at a time, and writes the files in scheme 1
//! ([`TableIndex::file_index`], [`SplitLayout`]).
//!
//! A table with no lone pawn but a pair of like pawns (KPPvKR, KNBvKPP) splits the first
//! such pair the same way: the two pawns' file pairs (ten slices: a and h with a and h,
//! a and h with b and g, ..., d and e with d and e) are the most significant digit, and
//! the pair's digit is their places within them (144: twelve for the pawn of the smaller
//! file pair, then twelve for the other; where both share a file pair, only the first 66
//! are used, the two places in colex order, and the other digits name no position). Each
//! pawn keeps its file pair, so a slice is again closed under the table's moves, and the
//! largest is an eighth of the table (144 of scheme 1's 1,128 combinations). From 6 men
//! ([`TWO_SPLIT_MEN`]) each side's pawns are split where they are one or two, so a table
//! with pawns on both sides has two split groups and their slices combined (KRPvKBP 16,
//! KRPvKPP 40, KPPvKPP 100). Tables whose pawns all come in groups of three or more, and
//! tables without pawns, are the same in both schemes.
//!
//! Some indices name no legal position (pieces on one square, the side not to move in
//! check) and, without pawns, some name a mirror image of another index when both shahs
//! stand on the diagonal; [`TableIndex::is_canonical`] tells which one is kept.
//! A position's side to move is not part of the index: tables keep one array per side.

mod digits;

pub use digits::{DIGIT_ORDER_SCHEME, DigitOrder};

use std::fmt;
use std::sync::OnceLock;

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::material::{Material, PIECE_ORDER};
use crate::role::{Piece, Role};
use crate::square::Square;

/// The index scheme written into table headers.
pub const INDEX_SCHEME: u32 = 1;

/// Where the pieces of a group may stand, numbered: its *places*.
#[derive(Debug)]
struct Places {
    /// Square -> place, `u8::MAX` where the group may not stand.
    place_of: [u8; 64],
    /// Place -> square.
    square_of: [u8; 64],
    /// Number of places.
    count: u32,
}

impl Places {
    /// Places from a map place -> square of `count` places.
    const fn new(square_of: [u8; 64], count: u32) -> Places {
        let mut place_of = [u8::MAX; 64];
        let mut p = 0;
        while p < count as usize {
            place_of[square_of[p] as usize] = p as u8;
            p += 1;
        }
        Places {
            place_of,
            square_of,
            count,
        }
    }

    #[inline]
    fn square(&self, place: u32) -> Square {
        Square::new(u32::from(self.square_of[place as usize]))
    }
}

/// A piece other than a pawn: every square, in order.
static PIECE_PLACES: Places = {
    let mut t = [0u8; 64];
    let mut s = 0;
    while s < 64 {
        t[s] = s as u8;
        s += 1;
    }
    Places::new(t, 64)
};

/// Pawns in scheme 1: ranks 2-7, in the order of squares.
static PAWN_PLACES_1: Places = {
    let mut t = [0u8; 64];
    let mut p = 0;
    while p < 48 {
        t[p] = (p + 8) as u8;
        p += 1;
    }
    Places::new(t, 48)
};

/// A lone pawn split by file pair in scheme 2: ranks 2-7 by file pair (a and h, b and g,
/// c and f, d and e), twelve places a pair, rank by rank, the left file first. Its digit
/// is the place within the pair, the pair a digit of its own.
static PAWN_PLACES_2: Places = {
    let mut t = [0u8; 64];
    let mut p = 0;
    while p < 48 {
        let pair = p / 12;
        let rank = 1 + (p % 12) % 6;
        let file = if p % 12 < 6 { pair } else { 7 - pair };
        t[p] = (rank * 8 + file) as u8;
        p += 1;
    }
    Places::new(t, 48)
};

/// Places of a pawn's file pair in scheme 2.
const PAIR_PLACES: u32 = 12;

/// File pairs: the slices of a table split by a lone pawn.
const PAIRS: u64 = 4;

/// The slices of a table split by a pair of like pawns (scheme 2, where no side has a
/// lone pawn): the file pairs of its two pawns, the smaller first, each pawn keeping its
/// own (a pawn leaves its file only by capturing, which leaves the table).
const PAIR_SLICES: [(u32, u32); 10] = [
    (0, 0),
    (0, 1),
    (0, 2),
    (0, 3),
    (1, 1),
    (1, 2),
    (1, 3),
    (2, 2),
    (2, 3),
    (3, 3),
];

/// The digit of a split pair within its slice: 12 places of each pawn's file pair, the
/// pawn of the smaller pair the more significant. When both stand in one file pair only
/// the first C(12, 2) = 66 digits are used (the two places in colex order); the others
/// name no position.
const SPLIT_PAIR_PLACES: u32 = PAIR_PLACES * PAIR_PLACES;

/// From this many men scheme 2 splits each side's pawns where they are one or two (two
/// split groups where both sides have such pawns: KRPvKBP in 16 slices, KRPvKPP in 40),
/// and the generator uses it for tables whose pawns come in pairs
/// ([`TableIndex::for_generation`]); below it, scheme 2 splits one group, and the
/// generator only a lone pawn. A 5-man table with a pair made whole fits in well under a
/// GiB (KPPvKR peaks at 536 MiB on 2 threads, 83 s), and its ten slices cost time (107 s,
/// at 433 MiB, its files the same bytes); a 6-man one made whole needs up to 56 GiB.
pub const TWO_SPLIT_MEN: u32 = 6;

/// Runs of a unit in scheme 1 for a split pair: its combinations of two of the 48 places.
const PAIR_FILE_RUNS: u64 = 1128;

/// The slice of a split pair whose pawns stand in file pairs `a <= b`.
#[inline]
const fn pair_slice(a: u32, b: u32) -> u32 {
    // the slices of smaller first pairs: 4 + 3 + ... for each
    let mut s = 0;
    let mut x = 0;
    while x < a {
        s += 4 - x;
        x += 1;
    }
    s + (b - a)
}

/// The slice and digit of a split pair on scheme 2 places `p` and `q` (0..48, distinct;
/// see [`PAWN_PLACES_2`]).
#[inline]
fn split_pair_digit(p: u32, q: u32) -> (u64, u64) {
    let (lo, hi) = if (p / PAIR_PLACES, p) < (q / PAIR_PLACES, q) {
        (p, q)
    } else {
        (q, p)
    };
    let (a, qa) = (lo / PAIR_PLACES, lo % PAIR_PLACES);
    let (b, qb) = (hi / PAIR_PLACES, hi % PAIR_PLACES);
    let digit = if a < b {
        qa * PAIR_PLACES + qb
    } else {
        // one file pair: colex, qb > qa
        qb * (qb - 1) / 2 + qa
    };
    (u64::from(pair_slice(a, b)), u64::from(digit))
}

/// The scheme 2 places (the larger first) of digit `d` of a split pair in slice `slice`,
/// or `None` for a digit that names no position.
#[inline]
fn split_pair_places(slice: u64, d: u64) -> Option<(u32, u32)> {
    let (a, b) = PAIR_SLICES[slice as usize];
    let d = d as u32;
    if a < b {
        let (qa, qb) = (d / PAIR_PLACES, d % PAIR_PLACES);
        Some((b * PAIR_PLACES + qb, a * PAIR_PLACES + qa))
    } else if u64::from(d) < BINOM[PAIR_PLACES as usize][2] {
        let (hi, lo) = TableIndex::pair_squares(u64::from(d));
        Some((a * PAIR_PLACES + hi, a * PAIR_PLACES + lo))
    } else {
        None
    }
}

/// Transforms of the board: bit 0 mirrors files, bit 1 mirrors ranks, bit 2 flips on the
/// a1-h8 diagonal, applied in that order.
static TRANSFORMS: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut id = 0;
    while id < 8 {
        let mut s = 0;
        while s < 64 {
            let mut f = s % 8;
            let mut r = s / 8;
            if id & 1 != 0 {
                f = 7 - f;
            }
            if id & 2 != 0 {
                r = 7 - r;
            }
            if id & 4 != 0 {
                let tmp = f;
                f = r;
                r = tmp;
            }
            t[id][s] = (r * 8 + f) as u8;
            s += 1;
        }
        id += 1;
    }
    t
};

const BINOM_N: usize = 65;
const BINOM_K: usize = 8;

/// Binomial coefficients C(n, k) for n <= 64, k < 8.
static BINOM: [[u64; BINOM_K]; BINOM_N] = {
    let mut b = [[0u64; BINOM_K]; BINOM_N];
    let mut n = 0;
    while n < BINOM_N {
        b[n][0] = 1;
        let mut k = 1;
        while k < BINOM_K {
            b[n][k] = if n == 0 {
                0
            } else {
                b[n - 1][k - 1] + b[n - 1][k]
            };
            k += 1;
        }
        n += 1;
    }
    b
};

const NO_KK: u32 = u32::MAX;

/// A bitboard reflected in the a1-h8 diagonal (square `(file, rank)` to `(rank, file)`).
const fn flip_a1h8(mut x: u64) -> u64 {
    const K1: u64 = 0x5500_5500_5500_5500;
    const K2: u64 = 0x3333_0000_3333_0000;
    const K4: u64 = 0x0f0f_0f0f_0000_0000;
    let t = K4 & (x ^ (x << 28));
    x ^= t ^ (t >> 28);
    let t = K2 & (x ^ (x << 14));
    x ^= t ^ (t >> 14);
    let t = K1 & (x ^ (x << 7));
    x ^= t ^ (t >> 7);
    x
}

/// A bitboard reflected in the a8-h1 diagonal (square `(file, rank)` to
/// `(7 - rank, 7 - file)`).
const fn flip_a8h1(x: u64) -> u64 {
    // the a1-h8 reflection, then the 180 degree rotation
    flip_a1h8(x).reverse_bits()
}

struct KkTable {
    /// `[wk][bk]` -> kk number, or `NO_KK` for a non-canonical or illegal pair.
    index: Vec<u32>,
    /// kk number -> (wk, bk).
    pairs: Vec<(u8, u8)>,
    /// `[wk][bk]` -> the transform that brings the shahs into place, plus
    /// [`AMBIGUOUS`] when its a1-h8 flip does as well (see [`TableIndex::transform`]).
    transforms: Vec<u8>,
}

/// Marks an ambiguous transform in [`KkTable::transforms`].
const AMBIGUOUS: u8 = 8;

/// The transform that brings shahs on `wk` and `bk` into their canonical places, and
/// whether it is ambiguous (both shahs then on the diagonal, no pawns: the transform and
/// its a1-h8 flip both do).
fn canonical_transform(pawns: bool, wk: usize, bk: usize) -> (usize, bool) {
    let mut t = 0usize;
    if wk % 8 > 3 {
        t |= 1;
    }
    if !pawns {
        let w1 = TRANSFORMS[t][wk] as usize;
        if w1 / 8 > 3 {
            t |= 2;
        }
        let w2 = TRANSFORMS[t][wk] as usize;
        if w2 / 8 > w2 % 8 {
            t |= 4;
        }
        let w3 = TRANSFORMS[t][wk] as usize;
        if w3 / 8 == w3 % 8 {
            let b3 = TRANSFORMS[t][bk] as usize;
            if b3 / 8 > b3 % 8 {
                t ^= 4;
            } else if b3 / 8 == b3 % 8 {
                return (t, true);
            }
        }
    }
    (t, false)
}

fn kk_table(pawns: bool) -> &'static KkTable {
    static PAWNLESS: OnceLock<KkTable> = OnceLock::new();
    static PAWNFUL: OnceLock<KkTable> = OnceLock::new();
    let cell = if pawns { &PAWNFUL } else { &PAWNLESS };
    cell.get_or_init(|| {
        let mut index = vec![NO_KK; 64 * 64];
        let mut pairs = Vec::new();
        for wk in 0..64u32 {
            let w = Square::new(wk);
            let ok_w = if pawns {
                w.file() <= 3
            } else {
                w.file() <= 3 && w.rank() <= w.file()
            };
            if !ok_w {
                continue;
            }
            for bk in 0..64u32 {
                let b = Square::new(bk);
                if w.distance(b) <= 1 {
                    continue;
                }
                if !pawns && w.rank() == w.file() && b.rank() > b.file() {
                    continue;
                }
                index[(wk * 64 + bk) as usize] = pairs.len() as u32;
                pairs.push((wk as u8, bk as u8));
            }
        }
        let transforms = (0..64 * 64)
            .map(|k| match canonical_transform(pawns, k / 64, k % 64) {
                (t, false) => t as u8,
                (t, true) => t as u8 | AMBIGUOUS,
            })
            .collect();
        KkTable {
            index,
            pairs,
            transforms,
        }
    })
}

/// Division by a number fixed when a table's index is made, by a multiply and a shift
/// (no divide instruction): exact for every numerator below 2^48.
#[derive(Clone, Copy, Debug)]
struct Divisor {
    d: u64,
    m: u64,
    s: u32,
}

/// Numerators [`Divisor`] divides exactly are below `1 << DIVIDEND_BITS`.
const DIVIDEND_BITS: u32 = 48;

impl Divisor {
    fn new(d: u64) -> Divisor {
        assert!(d > 0 && d < 1 << DIVIDEND_BITS, "divisor {d} out of range");
        // s = 48 + ceil(log2 d) and m = ceil(2^s / d): then 2^s <= m d < 2^s + 2^(s - 48),
        // which makes floor(n m / 2^s) = floor(n / d) for every n < 2^48
        let s = DIVIDEND_BITS + (64 - (d - 1).leading_zeros());
        let m = (1u128 << s).div_ceil(u128::from(d));
        Divisor {
            d,
            m: u64::try_from(m).expect("below 2^49"),
            s,
        }
    }

    /// `(n / d, n % d)`.
    #[inline]
    fn div_rem(self, n: u64) -> (u64, u64) {
        debug_assert!(n < 1 << DIVIDEND_BITS);
        let q = ((u128::from(n) * u128::from(self.m)) >> self.s) as u64;
        (q, n - q * self.d)
    }
}

/// For each colex rank `c` of a pair of squares, the larger square: the largest `s` with
/// C(s, 2) <= c (the smaller square is `c - C(s, 2)`).
static PAIR_TOP: [u8; 2016] = {
    let mut t = [0u8; 2016];
    let mut s = 1;
    while s < 64 {
        let mut c = s * (s - 1) / 2;
        while c < s * (s + 1) / 2 {
            t[c] = s as u8;
            c += 1;
        }
        s += 1;
    }
    t
};

/// One group of like pieces in the index.
#[derive(Clone, Copy, Debug)]
struct Group {
    piece: Piece,
    count: usize,
    /// Number of squares the group's pieces may stand on (64, or 48 for pawns).
    squares: u32,
    /// Number of combinations: C(squares, count).
    size: u64,
    /// Divides by `size`.
    size_div: Divisor,
    /// Product of the sizes of the digits after this one (its place value in the index).
    weight: u64,
    /// Where the group's pieces may stand.
    places: &'static Places,
}

impl Group {
    /// Calls `f` with the place (see [`Places`]) of each piece of combination `c`, the
    /// largest first (colex order), until it returns false; whether it ran to the end.
    #[inline]
    fn for_each_square(&self, mut c: u64, mut f: impl FnMut(u32) -> bool) -> bool {
        if self.count == 1 {
            return f(c as u32);
        }
        let mut top = self.squares;
        for k in (3..=self.count).rev() {
            // the largest s below `top` with C(s, k) <= c, by bisection: C(k - 1, k) = 0
            let (mut lo, mut hi) = (k as u32 - 1, top - 1);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if BINOM[mid as usize][k] <= c {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            c -= BINOM[lo as usize][k];
            top = lo;
            if !f(lo) {
                return false;
            }
        }
        // the last two by table and by value: colex ranks do not depend on the squares
        let (s, t) = TableIndex::pair_squares(c);
        f(s) && f(t)
    }
}

/// The index of one material's table.
#[derive(Clone, Debug)]
pub struct TableIndex {
    material: Material,
    pawns: bool,
    /// The groups in the order of their digits, the most significant first.
    groups: Vec<Group>,
    /// The group of the lone pawn whose file pair is a digit of its own (scheme 2), the
    /// most significant: the group's digit is then its place within the pair. Where no
    /// side has a lone pawn, a pair of like pawns whose two file pairs are that digit
    /// (see [`PAIR_SLICES`], [`SPLIT_PAIR_PLACES`]).
    split: Option<usize>,
    /// A second split group, after [`TableIndex::split`] (6 men or more: the other side's
    /// pawns, lone or a pair): the slice digit is then the first group's slice times the
    /// second's slices plus the second's.
    split2: Option<usize>,
    /// Slices of the second split group (1 without one).
    slices2: u64,
    /// Values of the most significant digit: the slices (1 without a split).
    slice_count: u64,
    /// Product of the sizes of the groups.
    rest: u64,
    /// Divides by `rest`.
    rest_div: Divisor,
    kk_count: u64,
    /// Divides by `kk_count`.
    kk_div: Divisor,
    /// Number of indices.
    size: u64,
    /// `color * 6 + role` -> position in `groups` (`u8::MAX` for none).
    group_of: [u8; 12],
}

/// Why a material has no index: [`TableIndex::try_new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexError {
    /// The material is not in stored form (see [`Material::normalized`]).
    NotStored(Material),
    /// A side is a bare shah: the rules decide, there is no table.
    BareSide(Material),
    /// More like pieces of one kind than the index numbers.
    TooManyLike(Material),
    /// The positions of the material do not fit the index's integers.
    TooLarge(Material),
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::NotStored(m) => write!(f, "material {m} is not in stored form"),
            IndexError::BareSide(m) => write!(f, "no table for {m}: a side has a bare shah"),
            IndexError::TooManyLike(m) => write!(
                f,
                "material {m} has more than {} like pieces of one kind",
                BINOM_K - 1
            ),
            IndexError::TooLarge(m) => write!(
                f,
                "material {m} has too many positions to index (at most 2^{DIVIDEND_BITS} a side to move)"
            ),
        }
    }
}

impl std::error::Error for IndexError {}

impl TableIndex {
    /// The index of a material in its stored form (see [`Material::normalized`]).
    ///
    /// # Panics
    /// If the material has no index (see [`TableIndex::try_new`]).
    #[track_caller]
    #[must_use]
    pub fn new(material: Material) -> TableIndex {
        TableIndex::try_new(material).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The index of a material in its stored form, or why it has none: not in stored
    /// form, a bare side, or more positions than the index's integers hold (the sizes
    /// are multiplied with overflow checks, in every build).
    pub fn try_new(material: Material) -> Result<TableIndex, IndexError> {
        TableIndex::try_with_scheme(material, INDEX_SCHEME)
    }

    /// The index the generator numbers a table of `material` by: scheme 2, in slices,
    /// where it has a lone pawn, or a pair of like pawns and at least
    /// [`TWO_SPLIT_MEN`] men (else scheme 1, the files' own). With a pair, scheme 2 has
    /// more indices than scheme 1 ([`TableIndex::file_size`]).
    ///
    /// # Panics
    /// If the material has no index (see [`TableIndex::try_new`]).
    #[must_use]
    pub fn for_generation(material: Material) -> TableIndex {
        let lone_pawn = Color::ALL
            .iter()
            .any(|&c| material.side(c).count(Role::Pawn) == 1);
        let scheme = if lone_pawn || material.men() >= TWO_SPLIT_MEN {
            2
        } else {
            1
        };
        TableIndex::try_with_scheme(material, scheme).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The index of a material in index scheme 1 (the files') or 2 (the generator's).
    ///
    /// # Panics
    /// If `scheme` is neither 1 nor 2.
    pub fn try_with_scheme(material: Material, scheme: u32) -> Result<TableIndex, IndexError> {
        assert!(scheme == 1 || scheme == 2, "index scheme {scheme}");
        if material != material.normalized() {
            return Err(IndexError::NotStored(material));
        }
        if material.is_decided_by_rules() {
            return Err(IndexError::BareSide(material));
        }
        let pawns = material.has_pawns();
        let mut groups = Vec::new();
        for color in Color::ALL {
            for role in PIECE_ORDER {
                let count = usize::from(material.side(color).count(role));
                if count > 0 {
                    if count >= BINOM_K {
                        return Err(IndexError::TooManyLike(material));
                    }
                    let places = if role == Role::Pawn {
                        &PAWN_PLACES_1
                    } else {
                        &PIECE_PLACES
                    };
                    let squares = places.count;
                    let size = BINOM[squares as usize][count];
                    if size >= 1 << DIVIDEND_BITS {
                        return Err(IndexError::TooLarge(material));
                    }
                    groups.push(Group {
                        piece: Piece { color, role },
                        count,
                        squares,
                        size,
                        size_div: Divisor::new(size),
                        weight: 0,
                        places,
                    });
                }
            }
        }
        // scheme 2: the first lone pawn's place splits into its file pair and its place
        // within the pair; without a lone pawn, the first pair of like pawns' places into
        // their two file pairs and their places within them; from 6 men, each side's pawns
        // so, where they are one or two
        let pawns_of = |count: usize| {
            groups
                .iter()
                .position(|g: &Group| g.piece.role == Role::Pawn && g.count == count)
        };
        let (split, split2) = if scheme != 2 {
            (None, None)
        } else if material.men() >= TWO_SPLIT_MEN {
            let mut both = groups
                .iter()
                .enumerate()
                .filter(|(_, g)| g.piece.role == Role::Pawn && g.count <= 2)
                .map(|(i, _)| i);
            (both.next(), both.next())
        } else {
            (pawns_of(1).or_else(|| pawns_of(2)), None)
        };
        let mut slice_count = 1;
        let mut slices2 = 1;
        for (k, i) in [split, split2].into_iter().enumerate() {
            let Some(i) = i else { continue };
            let g = &mut groups[i];
            g.places = &PAWN_PLACES_2;
            let slices = if g.count == 1 {
                g.squares = PAIR_PLACES;
                g.size = u64::from(PAIR_PLACES);
                PAIRS
            } else {
                g.size = u64::from(SPLIT_PAIR_PLACES);
                PAIR_SLICES.len() as u64
            };
            g.size_div = Divisor::new(g.size);
            slice_count *= slices;
            if k == 1 {
                slices2 = slices;
            }
        }
        let too_large = || IndexError::TooLarge(material);
        let kk_count = kk_table(pawns).pairs.len() as u64;
        let mut weight: u64 = 1;
        let mut group_of = [u8::MAX; 12];
        for (i, g) in groups.iter_mut().enumerate().rev() {
            g.weight = weight;
            weight = weight.checked_mul(g.size).ok_or_else(too_large)?;
            group_of[g.piece.color.index() * 6 + g.piece.role.index()] = i as u8;
        }
        let rest = weight;
        let size = slice_count
            .checked_mul(kk_count)
            .and_then(|n| n.checked_mul(rest))
            .ok_or_else(too_large)?;
        // The index divides numbers below 2^DIVIDEND_BITS.
        if size >= 1 << DIVIDEND_BITS {
            return Err(too_large());
        }
        Ok(TableIndex {
            material,
            pawns,
            groups,
            split,
            split2,
            slices2,
            slice_count,
            rest,
            rest_div: Divisor::new(rest),
            kk_count,
            kk_div: Divisor::new(kk_count),
            group_of,
            size,
        })
    }

    #[must_use]
    pub fn material(&self) -> Material {
        self.material
    }

    /// Number of indices for one side to move.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The place values of the second and third fastest digits: a row and a plane of the
    /// numbering (the shahs' digit after the groups'), along which a file's unused slots
    /// may be filled ([`crate::format::Values::fill_periods`]).
    #[must_use]
    pub fn fill_periods(&self) -> Vec<usize> {
        let mut weights: Vec<u64> = self.groups.iter().map(|g| g.weight).collect();
        weights.push(self.rest);
        weights.retain(|&w| w > 1);
        weights.sort_unstable();
        weights.dedup();
        weights.into_iter().take(2).map(|w| w as usize).collect()
    }

    /// The index scheme (1 or 2, see the module documentation): 2 only where it differs
    /// from 1 (a lone pawn, or a pair of like pawns).
    #[must_use]
    pub fn scheme(&self) -> u32 {
        if self.split.is_some() { 2 } else { 1 }
    }

    /// Indices of scheme 1 (the files'), a side to move: [`TableIndex::size`] but for a
    /// split pair (see [`SplitLayout::file_size`]).
    #[must_use]
    pub fn file_size(&self) -> u64 {
        self.split_layout().map_or(self.size, |l| l.file_size())
    }

    /// The index in scheme 1 (the files') of the position of index `i`: `i` itself but
    /// in scheme 2 with a split pawn; `None` for an index of a split pair that names no
    /// position (see [`SPLIT_PAIR_PLACES`]).
    #[inline]
    #[must_use]
    pub fn file_index(&self, i: u64) -> Option<u64> {
        match self.split_layout() {
            Some(l) => l.file_index(i),
            None => Some(i),
        }
    }

    /// How scheme 2 splits this index, where it does (see [`SplitLayout`]).
    #[must_use]
    pub fn split_layout(&self) -> Option<SplitLayout> {
        let digit = |k: usize| {
            let g = &self.groups[k];
            SplitDigit {
                pair: g.count == 2,
                run: g.weight,
            }
        };
        Some(SplitLayout {
            slice: self.size / self.slice_count,
            outer: digit(self.split?),
            inner: self.split2.map(digit),
        })
    }

    /// Whether group `k` is split (scheme 2).
    #[inline]
    fn is_split(&self, k: usize) -> bool {
        self.split == Some(k) || self.split2 == Some(k)
    }

    /// The slice of split group `k` within the slice digit `slice`.
    #[inline]
    fn group_slice(&self, k: usize, slice: u64) -> u64 {
        match self.split2 {
            // one split group (every table below 6 men): no division
            None => slice,
            Some(j) if j == k => slice % self.slices2,
            Some(_) => slice / self.slices2,
        }
    }

    /// The slices of the index: ranges that together cover every index, none of which a
    /// move that stays in the table leaves (in scheme 2, one a file pair of the split
    /// lone pawn, a quarter of the index each, or one a pair of file pairs of a split pair
    /// of pawns, a tenth each, or with two split groups one a combination of both; else
    /// the whole index). In order.
    #[must_use]
    pub fn slices(&self) -> Vec<std::ops::Range<u64>> {
        let n = self.size / self.slice_count;
        (0..self.slice_count).map(|s| s * n..(s + 1) * n).collect()
    }

    /// Number of shah placements (462 without pawns, 1,806 with).
    #[must_use]
    pub fn kk_count(&self) -> u64 {
        self.kk_count
    }

    /// The slot of an index in a table that keeps White to move (`0..size`), then Black
    /// to move (`size..2 * size`).
    #[must_use]
    pub fn slot(&self, turn: Color, index: u64) -> u64 {
        turn.index() as u64 * self.size() + index
    }

    /// The side to move and index of a slot (see [`TableIndex::slot`]).
    #[must_use]
    pub fn split_slot(&self, slot: u64) -> (Color, u64) {
        let n = self.size();
        if slot < n {
            (Color::White, slot)
        } else {
            (Color::Black, slot - n)
        }
    }

    /// The board of an index, or `None` if two pieces would share a square.
    #[must_use]
    pub fn decode(&self, index: u64) -> Option<Board> {
        self.decode_groups(index, self.groups.len())
    }

    /// The last group (the index's least significant digit) when it is one piece or two
    /// like pieces: the piece, how many, its number of combinations (the length of a run
    /// of consecutive indices that differ in the last group only), and whether its
    /// squares depend on the run (a split pawn's, on its file pair). Combination `c` of
    /// the run of index `i` stands on the squares [`TableIndex::last_squares`] gives.
    #[must_use]
    pub fn last_group(&self) -> Option<(Piece, usize, u64, bool)> {
        let g = self.groups.last()?;
        let split = self.is_split(self.groups.len() - 1);
        (g.count <= 2).then_some((g.piece, g.count, g.size, split))
    }

    /// The squares of combination `c` of the last group in the run of index `i` (see
    /// [`TableIndex::last_group`]): of a pair, the larger place first; one piece stands on
    /// both. `None` for a split pair's digit that names no position.
    #[inline]
    #[must_use]
    pub fn last_squares(&self, i: u64, c: u64) -> Option<(Square, Square)> {
        let last = self.groups.len() - 1;
        let g = &self.groups[last];
        if g.count == 1 {
            let s = g.places.square(self.place(last, c as u32, i));
            Some((s, s))
        } else if self.is_split(last) {
            let (a, b) = split_pair_places(self.group_slice(last, self.pair_of(i)), c)?;
            Some((g.places.square(a), g.places.square(b)))
        } else {
            let (a, b) = TableIndex::pair_squares(c);
            Some((g.places.square(a), g.places.square(b)))
        }
    }

    /// Calls `f` with the place (see [`Places`]) of each piece of group `k` whose digit is
    /// `c`, in an index whose slice digit is `slice`, until it returns false; whether it
    /// ran to the end (not for a split pair's digit that names no position).
    #[inline]
    fn for_each_place(&self, k: usize, c: u64, slice: u64, mut f: impl FnMut(u32) -> bool) -> bool {
        let g = &self.groups[k];
        if !self.is_split(k) {
            return g.for_each_square(c, f);
        }
        let slice = self.group_slice(k, slice);
        if g.count == 1 {
            return f(slice as u32 * PAIR_PLACES + c as u32);
        }
        match split_pair_places(slice, c) {
            Some((a, b)) => f(a) && f(b),
            None => false,
        }
    }

    /// The place of a piece of group `g` at place `p` of its digit, in index `i`: for the
    /// split pawn, its place among the 48 (its file pair's twelve, then `p`).
    #[inline]
    fn place(&self, g: usize, p: u32, i: u64) -> u32 {
        if self.is_split(g) {
            self.group_slice(g, self.pair_of(i)) as u32 * PAIR_PLACES + p
        } else {
            p
        }
    }

    /// The file pair digit of index `i` (0 without a split pawn).
    #[inline]
    fn pair_of(&self, i: u64) -> u64 {
        if self.split.is_none() {
            return 0;
        }
        let (q, _) = self.rest_div.div_rem(i);
        self.kk_div.div_rem(q).0
    }

    /// The places of the pair of colex rank `c` (a group of two like pieces): the larger
    /// first.
    #[inline]
    #[must_use]
    fn pair_squares(c: u64) -> (u32, u32) {
        let s = u32::from(PAIR_TOP[c as usize]);
        (s, (c - BINOM[s as usize][2]) as u32)
    }

    /// The first index of the run of `index` over the last group's values: `index` less
    /// its last digit.
    #[inline]
    #[must_use]
    pub fn last_run_start(&self, index: u64) -> u64 {
        self.groups
            .last()
            .map_or(index, |g| index - g.size_div.div_rem(index).1)
    }

    /// The board of `index` without the last group's pieces (`None` where the placed
    /// pieces collide): with [`TableIndex::last_group`], consecutive indices decode by
    /// adding one or two pieces to a board decoded once.
    #[must_use]
    pub fn decode_without_last(&self, index: u64) -> Option<Board> {
        self.decode_groups(index, self.groups.len().saturating_sub(1))
    }

    /// How far the pawns of the position at `index` have come: for each White pawn its
    /// ranks above the second, for each Black pawn its ranks below the seventh (0 in a
    /// table without pawns). A pawn's step forward that neither captures nor promotes, the
    /// only pawn move that stays in the table, raises it by one; no other move within the
    /// table changes it. At most [`TableIndex::max_pawn_advance`].
    #[must_use]
    pub fn pawn_advance(&self, index: u64) -> u32 {
        let (digits, _, pair) = self.digits(index);
        let mut sum = 0;
        for (k, (g, &c)) in self.groups.iter().zip(&digits).enumerate() {
            if g.piece.role != Role::Pawn {
                continue;
            }
            let advance = |p: u32| {
                // ranks 2-7
                let rank = g.places.square(p).rank();
                if g.piece.color == Color::White {
                    rank - 1
                } else {
                    6 - rank
                }
            };
            self.for_each_place(k, c, pair, |p| {
                sum += advance(p);
                true
            });
        }
        sum
    }

    /// The largest [`TableIndex::pawn_advance`]: 5 a pawn.
    #[must_use]
    pub fn max_pawn_advance(&self) -> u32 {
        self.groups
            .iter()
            .filter(|g| g.piece.role == Role::Pawn)
            .map(|g| 5 * g.count as u32)
            .sum()
    }

    /// The digits of `index` (below [`TableIndex::size`]): each group's combination, in
    /// the order of `groups`, the shah pair's number and the file pair (0 without a split
    /// pawn).
    #[inline]
    fn digits(&self, index: u64) -> ([u64; 16], u64, u64) {
        // mixed radix, the last group least significant
        let mut digits = [0u64; 16];
        let mut rem = index;
        for (i, g) in self.groups.iter().enumerate().rev() {
            (rem, digits[i]) = g.size_div.div_rem(rem);
        }
        let (pair, kk) = self.kk_div.div_rem(rem);
        (digits, kk, pair)
    }

    /// Decodes the shahs and the first `placed` groups of `index`.
    fn decode_groups(&self, index: u64, placed: usize) -> Option<Board> {
        if index >= self.size() {
            return None;
        }
        let (digits, kk, pair) = self.digits(index);
        let (wk, bk) = kk_table(self.pawns).pairs[kk as usize];
        let mut board = Board::empty();
        board.put_on_empty(
            Square::new(u32::from(wk)),
            Piece {
                color: Color::White,
                role: Role::Shah,
            },
        );
        board.put_on_empty(
            Square::new(u32::from(bk)),
            Piece {
                color: Color::Black,
                role: Role::Shah,
            },
        );
        for (i, g) in self.groups.iter().enumerate().take(placed) {
            let placed_all = self.for_each_place(i, digits[i], pair, |p| {
                let sq = g.places.square(p);
                if board.occupied().contains(sq) {
                    return false;
                }
                board.put_on_empty(sq, g.piece);
                true
            });
            if !placed_all {
                return None;
            }
        }
        Some(board)
    }

    /// The index of a board of this material (in stored colours), under the symmetry
    /// chosen by the shahs. Returns `None` if the board has another material or the
    /// shahs stand on adjacent squares.
    #[must_use]
    pub fn encode(&self, board: &Board) -> Option<u64> {
        let wk = board.shah_of(Color::White)?.index();
        let bk = board.shah_of(Color::Black)?.index();
        match self.transform(wk, bk) {
            (t, false) => self.encode_with(board, t),
            (t, true) => {
                // both shahs on the diagonal: the smaller of the two mirror images
                let a = self.encode_with(board, t)?;
                let b = self.encode_with(board, t ^ 4)?;
                Some(a.min(b))
            }
        }
    }

    fn encode_with(&self, board: &Board, t: usize) -> Option<u64> {
        let tr = &TRANSFORMS[t];
        let wk = tr[board.shah_of(Color::White)?.index()] as usize;
        let bk = tr[board.shah_of(Color::Black)?.index()] as usize;
        let kk = kk_table(self.pawns).index[wk * 64 + bk];
        if kk == NO_KK {
            return None;
        }
        let mut idx = 0;
        // the split groups' slices, the first's times the second's slices plus the second's
        let mut pair = 0;
        let mut seen = 2;
        for (j, g) in self.groups.iter().enumerate() {
            let bb = board.by_piece(g.piece);
            if bb.count() as usize != g.count {
                return None;
            }
            let place = |s: Square| match g.places.place_of[usize::from(tr[s.index()])] {
                u8::MAX => None,
                p => Some(p),
            };
            if g.count == 1 {
                let mut p = place(bb.first()?)?;
                if self.is_split(j) {
                    let slice = u64::from(p) / u64::from(PAIR_PLACES);
                    pair = if self.split2 == Some(j) {
                        pair * self.slices2 + slice
                    } else {
                        slice
                    };
                    p %= PAIR_PLACES as u8;
                }
                idx = idx * g.size + u64::from(p);
                seen += 1;
                continue;
            }
            let mut places = [0u8; 16];
            for (i, s) in bb.into_iter().enumerate() {
                places[i] = place(s)?;
            }
            if self.is_split(j) {
                let (slice, digit) = split_pair_digit(places[0].into(), places[1].into());
                pair = if self.split2 == Some(j) {
                    pair * self.slices2 + slice
                } else {
                    slice
                };
                idx = idx * g.size + digit;
                seen += 2;
                continue;
            }
            let places = &mut places[..g.count];
            places.sort_unstable();
            let mut c = 0;
            for (k, &p) in places.iter().enumerate() {
                c += BINOM[p as usize][k + 1];
            }
            idx = idx * g.size + c;
            seen += g.count;
        }
        idx += (pair * self.kk_count + u64::from(kk)) * self.rest;
        if seen as u32 != board.occupied().count() {
            return None;
        }
        Some(idx)
    }

    /// Whether an index is the one [`TableIndex::encode`] gives for its board (the other
    /// mirror image is never used).
    #[must_use]
    pub fn is_canonical(&self, index: u64, board: &Board) -> bool {
        self.encode(board) == Some(index)
    }

    /// Whether two different moves from this position could lead to one index.
    ///
    /// Two successors share an index only if one is the mirror image of the other under a
    /// symmetry that leaves the shah of the side not moving in place (whether or not the
    /// moving side's shah moved), so that shah must stand on a long diagonal (a1-h8 or
    /// a8-h1), the axes of the only symmetries with fixed squares; with pawns there are no
    /// such symmetries. Moreover each successor differs from the board in two placements
    /// (a piece off one square, onto another), so if the mirror image of one successor is
    /// the other, the board and its mirror image differ in at most four placements.
    ///
    /// The same holds for predecessors (positions one un-move back): call this with the
    /// side to move before the un-move, `!pos.turn()`.
    #[must_use]
    pub fn successors_may_coincide(&self, board: &Board, turn: Color) -> bool {
        if self.pawns {
            return false;
        }
        let Some(s) = board.shah_of(!turn) else {
            return false;
        };
        let flip: fn(u64) -> u64 = if s.rank() == s.file() {
            flip_a1h8
        } else if s.rank() + s.file() == 7 {
            flip_a8h1
        } else {
            return false;
        };
        // A square where exactly one of it and its mirror is occupied differs in some
        // piece's bitboard: more than four such squares settle it at once.
        let occ = board.occupied().0;
        if (occ ^ flip(occ)).count_ones() > 4 {
            return false;
        }
        let mut differ = 0;
        for color in Color::ALL {
            for role in Role::ALL {
                let bb = board.by_piece(Piece { color, role }).0;
                differ += (bb ^ flip(bb)).count_ones();
            }
        }
        differ <= 4
    }

    /// The index after a move or un-move of a piece other than a shah, computed from
    /// the index alone: `board` is the board of `index` as [`TableIndex::decode`] gives it,
    /// `index` is canonical and not [`TableIndex::may_be_mirror`] (so the symmetry that
    /// puts the shahs in place is the identity, and stays so while they stand still),
    /// `piece` stands on `from` and `to` is empty (a pawn stays on ranks 2-7, and in its
    /// file pair, as every move within a table keeps it).
    #[inline]
    #[must_use]
    pub fn index_after_move(
        &self,
        index: u64,
        board: &Board,
        piece: Piece,
        from: Square,
        to: Square,
    ) -> u64 {
        debug_assert!(piece.role != Role::Shah && !self.may_be_mirror(index));
        self.index_after_group_move(index, piece, || board.by_piece(piece), from, to)
    }

    /// The index after `piece` moves from `from` to `to` on a board of `index`, all in
    /// the orientation of the index; `squares` gives the squares of the piece's group
    /// (asked for only when the group has more than one piece).
    #[inline]
    fn index_after_group_move(
        &self,
        index: u64,
        piece: Piece,
        squares: impl FnOnce() -> Bitboard,
        from: Square,
        to: Square,
    ) -> u64 {
        let k = usize::from(self.group_of[piece.color.index() * 6 + piece.role.index()]);
        let g = &self.groups[k];
        let place = |s: Square| u64::from(g.places.place_of[s.index()]);
        let (old, new) = if g.count == 1 {
            // a split pawn keeps its file pair: the pair's part of its place cancels out
            (place(from), place(to))
        } else if self.is_split(k) {
            TableIndex::split_pair_move(g, squares(), from, to)
        } else {
            // a group of several keeps scheme 1's places, in the order of squares (only a
            // lone pawn or a pair is split), so a bitboard gives them in order
            let bb = squares();
            let colex = |bb: Bitboard| -> u64 {
                bb.into_iter()
                    .enumerate()
                    .map(|(k, s)| BINOM[place(s) as usize][k + 1])
                    .sum()
            };
            (colex(bb), colex(bb.without(from).with(to)))
        };
        index + new * g.weight - old * g.weight
    }

    /// The digits of a split pair (group `g`, standing on `bb`) before and after one of its
    /// pawns steps from `from` to `to`: each pawn keeps its file pair, so the slice stays.
    /// Out of line: inline, it slowed the un-moves of every other piece (KRPvKR's table
    /// stage by 8 %).
    #[inline(never)]
    fn split_pair_move(g: &Group, bb: Bitboard, from: Square, to: Square) -> (u64, u64) {
        let place = |s: Square| u32::from(g.places.place_of[s.index()]);
        let digit = |bb: Bitboard| {
            let mut it = bb.into_iter();
            match (it.next(), it.next()) {
                (Some(a), Some(b)) => split_pair_digit(place(a), place(b)).1,
                // a pair is two pawns (the caller's board is of this material)
                _ => 0,
            }
        };
        (digit(bb), digit(bb.without(from).with(to)))
    }

    /// The index after a shah of a board of `index` moves, the shahs then standing on `wk`
    /// and `bk` (all in the orientation of the index, as [`TableIndex::decode`] gives it),
    /// when the board keeps its orientation: `None` when the new pair needs another
    /// symmetry (or both shahs then stand on the diagonal), where [`TableIndex::encode`]
    /// must tell.
    #[inline]
    #[must_use]
    pub fn index_after_shah_move(&self, index: u64, wk: Square, bk: Square) -> Option<u64> {
        let kk = kk_table(self.pawns).index[wk.index() * 64 + bk.index()];
        let on_diagonal = |s: Square| s.rank() == s.file();
        if kk == NO_KK || (!self.pawns && on_diagonal(wk) && on_diagonal(bk)) {
            return None;
        }
        let (q, r) = self.rest_div.div_rem(index);
        // the file pair above the shah pair (none in scheme 1)
        let high = if self.split.is_none() {
            0
        } else {
            self.kk_div.div_rem(q).0 * self.kk_count
        };
        Some((high + u64::from(kk)) * self.rest + r)
    }

    /// The frame in which the quiet moves of a piece other than a shah from `board` (in
    /// stored colours) are indexed by arithmetic ([`MoveFrame::index_after_move`]), or
    /// `None` when the symmetry [`TableIndex::encode`] applies is ambiguous (both shahs
    /// on the diagonal, no pawns: then encode the board after the move) or the board is
    /// not of this material. While the shahs stand still the symmetry stays the same, so
    /// one frame serves every such move of the position.
    #[must_use]
    pub fn move_frame(&self, board: &Board) -> Option<MoveFrame<'_>> {
        let wk = board.shah_of(Color::White)?.index();
        let bk = board.shah_of(Color::Black)?.index();
        let t = self.symmetry(wk, bk)?;
        let base = self.encode_with(board, t)?;
        Some(MoveFrame {
            index: self,
            t,
            base,
        })
    }

    /// The transform [`TableIndex::encode`] applies for shahs on `wk` and `bk`, or `None`
    /// if it is ambiguous (both shahs on the diagonal, no pawns: then `encode` takes the
    /// smaller index of two images).
    #[inline]
    fn symmetry(&self, wk: usize, bk: usize) -> Option<usize> {
        match self.transform(wk, bk) {
            (t, false) => Some(t),
            (_, true) => None,
        }
    }

    /// The transform that brings the shahs on `wk` and `bk` into their canonical places,
    /// and whether it is ambiguous (both shahs then on the diagonal, no pawns: the
    /// transform and its a1-h8 flip both do). A table lookup: the branches of working it
    /// out are hard to predict.
    #[inline]
    fn transform(&self, wk: usize, bk: usize) -> (usize, bool) {
        let t = kk_table(self.pawns).transforms[wk * 64 + bk];
        (usize::from(t & !AMBIGUOUS), t & AMBIGUOUS != 0)
    }

    /// Whether the index could be a non-canonical mirror image (both shahs on the
    /// diagonal, no pawns): only such indices need [`TableIndex::is_canonical`].
    #[must_use]
    pub fn may_be_mirror(&self, index: u64) -> bool {
        if self.pawns {
            return false;
        }
        let (wk, bk) = kk_table(false).pairs[self.rest_div.div_rem(index).0 as usize];
        wk / 8 == wk % 8 && bk / 8 == bk % 8
    }
}

/// How scheme 2 orders a table with a split pawn against scheme 1. In scheme 1 a *unit*
/// (the digits before the split pawn's, the shah pair's first) holds a *run* of
/// `outer.run` indices (the digits after the pawn's) for each value of the pawn's digit: 48
/// pawn places from a2 to h7, or 1,128 combinations of two for a pair. In scheme 2 each
/// slice holds every unit in the same order, each with the slice's runs: a lone pawn's 12
/// (its file pair's two files, a2-a7 then h2-h7 for the first pair), a pair's 144 (of
/// which 66 are used where both pawns share a file pair). With a second split group (6
/// men), a run of the first is in turn units of the second's: the digits between the two,
/// then the second's digit, then its run; the slice is the first's times the second's
/// slices plus the second's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitLayout {
    /// Indices of one slice of scheme 2.
    pub slice: u64,
    /// The first split group's digit.
    pub outer: SplitDigit,
    /// The second split group's digit, if any.
    pub inner: Option<SplitDigit>,
}

/// One split group's digit in a [`SplitLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitDigit {
    /// Whether the group is a pair of pawns (else a lone pawn).
    pub pair: bool,
    /// Indices of one value of the digit in scheme 2 (its weight there).
    pub run: u64,
}

impl SplitDigit {
    /// Its slices.
    #[inline]
    #[must_use]
    pub fn slices(&self) -> u64 {
        if self.pair {
            PAIR_SLICES.len() as u64
        } else {
            PAIRS
        }
    }

    /// Its values in scheme 1.
    #[inline]
    #[must_use]
    pub fn file_runs(&self) -> u64 {
        if self.pair { PAIR_FILE_RUNS } else { 48 }
    }

    /// Its values in scheme 2, in one slice.
    #[inline]
    #[must_use]
    pub fn slice_runs(&self) -> u64 {
        u64::from(if self.pair {
            SPLIT_PAIR_PLACES
        } else {
            PAIR_PLACES
        })
    }

    /// The scheme 1 value (a lone pawn's place, a2 0 ... h7 47; a pair's colex rank of two
    /// such places) of value `q` of slice `slice`, `None` where it names no position.
    #[inline]
    #[must_use]
    pub fn file_place(&self, slice: u64, q: u64) -> Option<u64> {
        let square = |p: u32| u64::from(PAWN_PLACES_2.square_of[p as usize]) - 8;
        if self.pair {
            let (a, b) = split_pair_places(slice, q)?;
            let (hi, lo) = (square(a).max(square(b)), square(a).min(square(b)));
            Some(BINOM[hi as usize][2] + lo)
        } else {
            Some(square((slice * u64::from(PAIR_PLACES) + q) as u32))
        }
    }

    /// The slice and value within it of scheme 1 value `p` (see
    /// [`SplitDigit::file_place`]).
    #[inline]
    #[must_use]
    pub fn slice_place(&self, p: u64) -> (u64, u64) {
        let place = |sq: u64| u32::from(PAWN_PLACES_2.place_of[sq as usize + 8]);
        if self.pair {
            let (hi, lo) = TableIndex::pair_squares(p);
            split_pair_digit(place(u64::from(hi)), place(u64::from(lo)))
        } else {
            let q = u64::from(place(p));
            (q / u64::from(PAIR_PLACES), q % u64::from(PAIR_PLACES))
        }
    }
}

impl SplitLayout {
    /// Slices of scheme 2.
    #[inline]
    #[must_use]
    pub fn slices(&self) -> u64 {
        self.outer.slices() * self.inner.map_or(1, |d| d.slices())
    }

    /// Indices of scheme 1 a side to move (the files'): fewer than scheme 2's where a pair
    /// is split, whose slices where both pawns share a file pair leave values unused.
    #[must_use]
    pub fn file_size(&self) -> u64 {
        let (f, s) = self.file_and_slice_unit();
        self.slice / s * f
    }

    /// Indices of scheme 2 a side to move.
    #[must_use]
    pub fn size(&self) -> u64 {
        self.slice * self.slices()
    }

    /// The lengths of a unit in scheme 1 and in a slice of scheme 2.
    #[must_use]
    pub fn file_and_slice_unit(&self) -> (u64, u64) {
        let (m, fi, si, r) = self.shape();
        let (fo, so) = (self.outer.file_runs(), self.outer.slice_runs());
        (fo * m * fi * r, so * m * si * r)
    }

    /// The shape of a run of the outer digit: the digits between the two split groups
    /// (how many values), the inner digit's values in scheme 1 and in a slice, and the
    /// inner run; without a second group, `(1, 1, 1, outer.run)`.
    #[inline]
    #[must_use]
    pub fn shape(&self) -> (u64, u64, u64, u64) {
        match self.inner {
            Some(d) => (
                self.outer.run / (d.slice_runs() * d.run),
                d.file_runs(),
                d.slice_runs(),
                d.run,
            ),
            None => (1, 1, 1, self.outer.run),
        }
    }

    /// The scheme 1 index of scheme 2 index `i`, `None` where `i` names no position (a
    /// split pair's unused value).
    #[inline]
    #[must_use]
    pub fn file_index(&self, i: u64) -> Option<u64> {
        let (slice, r) = (i / self.slice, i % self.slice);
        let n2 = self.inner.map_or(1, |d| d.slices());
        let (so, si) = (slice / n2, slice % n2);
        let (m, fi, _, run) = self.shape();
        let unit_len = self.outer.slice_runs() * self.outer.run;
        let (unit, r) = (r / unit_len, r % unit_len);
        let (q, r) = (r / self.outer.run, r % self.outer.run);
        let p = self.outer.file_place(so, q)?;
        let (mid, r, pi) = match self.inner {
            Some(d) => {
                let inner_len = d.slice_runs() * d.run;
                let (mid, r) = (r / inner_len, r % inner_len);
                let (qi, r) = (r / d.run, r % d.run);
                (mid, r, d.file_place(si, qi)?)
            }
            None => (0, r, 0),
        };
        Some((((unit * self.outer.file_runs() + p) * m + mid) * fi + pi) * run + r)
    }
}

/// A board's place in its table's index, for computing the indices of its quiet moves
/// without encoding each board anew (see [`TableIndex::move_frame`]).
#[derive(Clone, Copy, Debug)]
pub struct MoveFrame<'a> {
    index: &'a TableIndex,
    /// The transform of the board (see `TRANSFORMS`).
    t: usize,
    /// The index of the board itself.
    base: u64,
}

impl MoveFrame<'_> {
    /// The index of the board itself.
    #[must_use]
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The index after `piece` (not a shah), which stands on `from` of `board` (the board
    /// of this frame, in the same colours), moves to the empty square `to` (a pawn stays
    /// on ranks 2-7): what [`TableIndex::encode`] gives for the board after the move.
    #[inline]
    #[must_use]
    pub fn index_after_move(&self, board: &Board, piece: Piece, from: Square, to: Square) -> u64 {
        debug_assert!(piece.role != Role::Shah);
        let image = |s: Square| Square::new(u32::from(TRANSFORMS[self.t][s.index()]));
        let squares = || {
            let mut out = Bitboard::EMPTY;
            for s in board.by_piece(piece) {
                out.insert(image(s));
            }
            out
        };
        self.index
            .index_after_group_move(self.base, piece, squares, image(from), image(to))
    }

    /// The index after the shah of `color` of `board` (the board of this frame) moves to
    /// the empty square `to`, if the move keeps the symmetry of the board: then only the
    /// shah pair's number changes. `None` otherwise (then encode the board after the
    /// move), and for a move next to the other shah.
    #[inline]
    #[must_use]
    pub fn index_after_shah_move(&self, board: &Board, color: Color, to: Square) -> Option<u64> {
        let image = |s: Square| Square::new(u32::from(TRANSFORMS[self.t][s.index()]));
        let (wk, bk) = match color {
            Color::White => (to, board.shah_of(Color::Black)?),
            Color::Black => (board.shah_of(Color::White)?, to),
        };
        // The images of the new shahs are a canonical, unambiguous pair exactly when this
        // frame's transform is the one `encode` picks for them.
        self.index
            .index_after_shah_move(self.base, image(wk), image(bk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square's file pair (a and h 0, ..., d and e 3): a pawn's moves within a table keep
    /// it.
    fn file_pair(s: Square) -> u32 {
        s.file().min(7 - s.file())
    }

    #[test]
    fn a_material_too_large_to_index_is_an_error_not_a_wrapped_size() {
        // Four groups of seven like pieces: the product of the group sizes passes 2^64.
        let huge: Material = "KRRRRRRRNNNNNNNvKQQQQQQQBBBBBBB".parse().unwrap();
        let huge = huge.normalized();
        assert_eq!(
            TableIndex::try_new(huge).unwrap_err(),
            IndexError::TooLarge(huge)
        );
        // Two groups fit a u64, the shah pairs then overflow it.
        let two: Material = "KRRRRRRRvKNNNNNNN"
            .parse::<Material>()
            .unwrap()
            .normalized();
        assert_eq!(
            TableIndex::try_new(two).unwrap_err(),
            IndexError::TooLarge(two)
        );
        // Below 2^64 but above the index's 2^48.
        let big: Material = "KRRRRRvKNNNN".parse::<Material>().unwrap().normalized();
        assert_eq!(
            TableIndex::try_new(big).unwrap_err(),
            IndexError::TooLarge(big)
        );
        let msg = IndexError::TooLarge(huge).to_string();
        assert!(
            msg.contains(&huge.to_string()) && msg.contains("too many positions"),
            "{msg}"
        );
        // Eight pawns of a side are more like pieces than the binomial table holds.
        let pawns: Material = "KPPPPPPPPvKR".parse::<Material>().unwrap().normalized();
        assert_eq!(
            TableIndex::try_new(pawns).unwrap_err(),
            IndexError::TooManyLike(pawns)
        );
        let bare: Material = "KRvK".parse().unwrap();
        assert_eq!(
            TableIndex::try_new(bare).unwrap_err(),
            IndexError::BareSide(bare)
        );
        let unsorted: Material = "KQvKR".parse().unwrap();
        assert_eq!(
            TableIndex::try_new(unsorted).unwrap_err(),
            IndexError::NotStored(unsorted)
        );
        // The largest tables in use still fit.
        let five: Material = "KRRvKQ".parse().unwrap();
        assert_eq!(
            TableIndex::try_new(five).unwrap().size(),
            TableIndex::new(five).size()
        );
    }

    #[test]
    #[should_panic(expected = "too many positions to index")]
    fn new_panics_with_the_reason() {
        let huge: Material = "KRRRRRRRNNNNNNNvKQQQQQQQBBBBBBB".parse().unwrap();
        let _ = TableIndex::new(huge.normalized());
    }

    #[test]
    fn divisor_is_exact() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let max = (1u64 << DIVIDEND_BITS) - 1;
        for d in (1..70).chain([2016, 41_664, 462 * 64 * 64 * 64, max / 3, max]) {
            let div = Divisor::new(d);
            let some = (0..2000).map(|_| next() & max);
            let edges = [0, 1, d - 1, d, d + 1, max - 1, max].into_iter();
            for n in some.chain(edges.filter(|&n| n <= max)) {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    #[test]
    fn kk_counts() {
        assert_eq!(kk_table(false).pairs.len(), 462);
        assert_eq!(kk_table(true).pairs.len(), 1806);
    }

    #[test]
    fn sizes() {
        let krvkq = TableIndex::new("KRvKQ".parse().unwrap());
        assert_eq!(krvkq.size(), 462 * 64 * 64);
        let krrvk = TableIndex::new("KRRvKQ".parse().unwrap());
        assert_eq!(krrvk.size(), 462 * 2016 * 64);
        let kpvkp = TableIndex::new("KPvKP".parse().unwrap());
        assert_eq!(kpvkp.size(), 1806 * 48 * 48);
    }

    #[test]
    fn diagonal_flips() {
        for sq in 0..64u32 {
            let s = Square::new(sq);
            let a1h8 = Square::from_coords(s.rank(), s.file());
            let a8h1 = Square::from_coords(7 - s.rank(), 7 - s.file());
            assert_eq!(flip_a1h8(1 << sq), 1 << a1h8.index(), "{s}");
            assert_eq!(flip_a8h1(1 << sq), 1 << a8h1.index(), "{s}");
        }
    }

    /// Materials and index schemes the move tests index by: scheme 2 splits KPPvKB's and
    /// KRvKPP's pairs, KBvKP's lone pawn.
    const MOVE_CASES: [(&str, u32); 8] = [
        ("KRvKQ", 1),
        ("KRRvKN", 1),
        ("KPPvKB", 1),
        ("KPPvKB", 2),
        ("KRvKPP", 2),
        ("KBvKP", 1),
        ("KBvKP", 2),
        ("KNNvKQ", 1),
    ];

    #[test]
    fn index_after_move_matches_encode() {
        for (name, scheme) in MOVE_CASES {
            let m = name.parse::<Material>().unwrap().normalized();
            let idx = TableIndex::try_with_scheme(m, scheme).unwrap();
            let mut checked = 0;
            for i in (0..idx.size()).step_by(97) {
                let Some(board) = idx.decode(i) else { continue };
                if idx.may_be_mirror(i) || idx.encode(&board) != Some(i) {
                    continue;
                }
                for (from, piece) in board.pieces() {
                    if piece.role == Role::Shah {
                        continue;
                    }
                    for to in 0..64 {
                        let to = Square::new(to);
                        if board.occupied().contains(to)
                            || (piece.role == Role::Pawn
                                && (!(1..7).contains(&to.rank())
                                    || file_pair(to) != file_pair(from)))
                        {
                            continue;
                        }
                        let mut b = board;
                        b.move_piece(piece.color, piece.role, from, to, piece.role);
                        assert_eq!(
                            Some(idx.index_after_move(i, &board, piece, from, to)),
                            idx.encode(&b),
                            "{name} {i} {from}{to}"
                        );
                        checked += 1;
                    }
                }
            }
            assert!(checked > 1000);
        }
    }

    #[test]
    fn index_after_shah_move_matches_encode() {
        for (name, scheme) in [
            ("KRvKQ", 1),
            ("KRQvKR", 1),
            ("KBvKP", 1),
            ("KNvKP", 1),
            ("KNvKP", 2),
            ("KPPvKN", 2),
        ] {
            let m = name.parse::<Material>().unwrap().normalized();
            let idx = TableIndex::try_with_scheme(m, scheme).unwrap();
            let (mut checked, mut refused) = (0, 0);
            for i in (0..idx.size()).step_by(89) {
                let Some(board) = idx.decode(i) else { continue };
                if idx.may_be_mirror(i) || idx.encode(&board) != Some(i) {
                    continue;
                }
                let shah = |c| board.shah_of(c).unwrap();
                for color in [Color::White, Color::Black] {
                    let from = shah(color);
                    for to in crate::attacks::shah_attacks(from) & !board.occupied() {
                        if to.distance(shah(!color)) <= 1 {
                            continue;
                        }
                        let mut b = board;
                        b.move_piece(color, Role::Shah, from, to, Role::Shah);
                        let (wk, bk) = (shah_after(&b, Color::White), shah_after(&b, Color::Black));
                        match idx.index_after_shah_move(i, wk, bk) {
                            Some(k) => {
                                assert_eq!(Some(k), idx.encode(&b), "{name} {i} {from}{to}");
                                checked += 1;
                            }
                            None => refused += 1,
                        }
                    }
                }
            }
            assert!(
                checked > 1000 && refused > 10,
                "{name}: {checked} {refused}"
            );
        }
    }

    fn shah_after(board: &Board, color: Color) -> Square {
        board.shah_of(color).unwrap()
    }

    #[test]
    fn move_frame_matches_encode() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        // and, on 6 men, both sides' pawns split
        let six = [("KQvKQ", 1), ("KRPvKBP", 2), ("KRPvKPP", 2), ("KPPvKPP", 2)];
        for (name, scheme) in MOVE_CASES.into_iter().chain(six) {
            let m = name.parse::<Material>().unwrap().normalized();
            let idx = TableIndex::try_with_scheme(m, scheme).unwrap();
            let (mut framed, mut checked, mut shah_moves) = (0, 0, 0);
            for _ in 0..3000 {
                // a random board of the material, in any orientation
                let Some(board) = idx.decode(rng.gen_range(0..idx.size())) else {
                    continue;
                };
                let t = rng.gen_range(0..if idx.pawns { 2 } else { 8 });
                let board = board.transform(|s| Square::new(u32::from(TRANSFORMS[t][s.index()])));
                let Some(frame) = idx.move_frame(&board) else {
                    continue;
                };
                framed += 1;
                assert_eq!(Some(frame.base()), idx.encode(&board), "{name} {board:?}");
                for (from, piece) in board.pieces() {
                    for to in 0..64 {
                        let to = Square::new(to);
                        if board.occupied().contains(to)
                            || (piece.role == Role::Pawn
                                && (!(1..7).contains(&to.rank())
                                    || file_pair(to) != file_pair(from)))
                        {
                            continue;
                        }
                        let mut b = board;
                        b.move_piece(piece.color, piece.role, from, to, piece.role);
                        if piece.role == Role::Shah {
                            // None for a changed symmetry, or shahs side by side
                            if let Some(i) = frame.index_after_shah_move(&board, piece.color, to) {
                                assert_eq!(Some(i), idx.encode(&b), "{name} {board:?} {from}{to}");
                                shah_moves += 1;
                            }
                            continue;
                        }
                        assert_eq!(
                            Some(frame.index_after_move(&board, piece, from, to)),
                            idx.encode(&b),
                            "{name} {board:?} {from}{to}"
                        );
                        checked += 1;
                    }
                }
            }
            assert!(
                framed > 1000 && checked > 10_000 && shah_moves > 10_000,
                "{name}: {framed} {checked} {shah_moves}"
            );
        }
    }

    /// `for_each_square` inverts the colex rank (the sum of C(s_k, k + 1), as `encode`
    /// ranks a group) of every combination of 1 to 4 squares of 64 (every one of up to 3;
    /// for 4, a stride through them), and of pawns' 48 squares, largest square first.
    #[test]
    fn combinations_decode_to_their_squares() {
        for (count, squares) in [(1, 64), (2, 64), (3, 64), (4, 64), (2, 48), (3, 48)] {
            let g = Group {
                piece: Piece {
                    color: Color::White,
                    role: Role::Rook,
                },
                count,
                squares,
                size: BINOM[squares as usize][count],
                size_div: Divisor::new(BINOM[squares as usize][count]),
                weight: 1,
                places: &PIECE_PLACES,
            };
            let step = if count == 4 { 97 } else { 1 };
            let mut c = 0;
            while c < g.size {
                let mut got = Vec::new();
                assert!(g.for_each_square(c, |s| {
                    got.push(s);
                    true
                }));
                assert_eq!(got.len(), count);
                assert!(got.windows(2).all(|w| w[0] > w[1]), "{got:?}");
                assert!(got[0] < squares);
                let rank: u64 = got
                    .iter()
                    .rev()
                    .enumerate()
                    .map(|(k, &s)| BINOM[s as usize][k + 1])
                    .sum();
                assert_eq!(rank, c, "{count} of {squares}: {got:?}");
                c += step;
            }
        }
    }

    /// A row is the fastest group's size, a plane the two fastest groups'.
    #[test]
    fn fill_periods_are_a_row_and_a_plane() {
        let periods = |name: &str| {
            TableIndex::new(name.parse::<Material>().unwrap().normalized()).fill_periods()
        };
        assert_eq!(periods("KRvKN"), [64, 64 * 64]);
        assert_eq!(periods("KRRvKN"), [64, 64 * 2016]);
        assert_eq!(periods("KRNvKB"), [64, 64 * 64]);
    }

    #[test]
    fn round_trip_every_index_of_a_small_table() {
        for name in ["KRvKQ", "KBvKP", "KPvKP"] {
            let idx = TableIndex::new(name.parse().unwrap());
            let mut used = 0;
            for i in 0..idx.size() {
                if let Some(board) = idx.decode(i) {
                    let e = idx.encode(&board).unwrap();
                    if idx.may_be_mirror(i) {
                        assert!(e <= i);
                    } else {
                        assert_eq!(e, i, "{name} {i} {board:?}");
                    }
                    if e == i {
                        used += 1;
                    }
                }
            }
            assert!(used > 0);
        }
    }
}

#[cfg(test)]
mod pawn_advance_tests {
    use super::*;

    /// The advance from the decoded board, square by square.
    fn advance_of(board: &Board) -> u32 {
        let mut sum = 0;
        for color in [Color::White, Color::Black] {
            for sq in board.by_piece(Piece {
                color,
                role: Role::Pawn,
            }) {
                let rank = (sq.index() / 8) as u32; // 1..=6
                sum += if color == Color::White {
                    rank - 1
                } else {
                    6 - rank
                };
            }
        }
        sum
    }

    #[test]
    fn pawn_advance_is_that_of_the_decoded_board() {
        for (m, scheme) in [
            ("KPvKR", 1),
            ("KRPvKP", 1),
            ("KPPvKP", 1),
            ("KPPvKR", 1),
            ("KPPvKR", 2),
            ("KRvKPP", 2),
            ("KRvKNP", 1),
            ("KQvKR", 1),
            ("KRPvKPP", 2),
        ] {
            let material = m.parse::<Material>().unwrap().normalized();
            let index = TableIndex::try_with_scheme(material, scheme).unwrap();
            let max = index.max_pawn_advance();
            let mut seen = vec![false; max as usize + 1];
            // a stride prime to 48 and 64 visits every value of every group's digit
            let mut step = (index.size() / 200_003).max(1) | 1;
            while step % 3 == 0 {
                step += 2;
            }
            let mut i = 0;
            while i < index.size() {
                if let Some(board) = index.decode(i) {
                    let a = index.pawn_advance(i);
                    assert_eq!(a, advance_of(&board), "{m} index {i}");
                    seen[a as usize] = true;
                }
                i += step;
            }
            assert!(
                seen.iter().all(|&s| s),
                "{m}: some advance never seen: {seen:?}"
            );
        }
    }
}

//! Materials: which pieces each side has, named like `KRvKQ`.
//!
//! Names use the FEN letters (`Q` ferz, `B` alfil; `F` and `A`/`E` accepted on input),
//! White's pieces first. Within a side the pieces are written strongest first:
//! rook, knight, ferz, alfil, pawn. A material and its colour mirror (`KRvKQ` and
//! `KQvKR`) share one table, stored under the [`Material::normalized`] form.

use std::fmt;
use std::str::FromStr;

use crate::board::Board;
use crate::color::{ByColor, Color};
use crate::role::Role;

/// The roles other than the shah, strongest first: the order pieces are written in.
pub const PIECE_ORDER: [Role; 5] = [
    Role::Rook,
    Role::Knight,
    Role::Ferz,
    Role::Alfil,
    Role::Pawn,
];

/// How many pieces of each role one side has, the shah not counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaterialSide {
    counts: [u8; 6],
}

impl MaterialSide {
    #[must_use]
    pub fn count(&self, role: Role) -> u8 {
        self.counts[role.index()]
    }

    pub fn set_count(&mut self, role: Role, n: u8) {
        debug_assert!(role != Role::Shah);
        self.counts[role.index()] = n;
    }

    /// Number of pieces besides the shah.
    #[inline]
    #[must_use]
    pub fn pieces(&self) -> u32 {
        self.counts.iter().map(|&c| u32::from(c)).sum()
    }

    /// Nothing but the shah.
    #[inline]
    #[must_use]
    pub fn is_bare(&self) -> bool {
        self.pieces() == 0
    }

    /// A strength key: more pieces first, then stronger pieces first.
    #[inline]
    fn key(&self) -> (u32, [u8; 5]) {
        (self.pieces(), PIECE_ORDER.map(|r| self.counts[r.index()]))
    }

    /// Writes `K` and the pieces, strongest first.
    fn write(&self, out: &mut String) {
        out.push('K');
        for r in PIECE_ORDER {
            for _ in 0..self.counts[r.index()] {
                out.push(r.upper_char());
            }
        }
    }
}

/// The pieces of both sides.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    pub white: MaterialSide,
    pub black: MaterialSide,
}

impl Material {
    /// The material of a board (shahs not counted).
    #[inline]
    #[must_use]
    pub fn from_board(board: &Board) -> Material {
        let mut m = Material::default();
        for color in Color::ALL {
            let ours = board.by_color(color);
            let side = m.side_mut(color);
            for role in PIECE_ORDER {
                side.counts[role.index()] = (ours & board.by_role(role)).count() as u8;
            }
        }
        m
    }

    #[must_use]
    pub fn side(&self, color: Color) -> &MaterialSide {
        match color {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    pub fn side_mut(&mut self, color: Color) -> &mut MaterialSide {
        match color {
            Color::White => &mut self.white,
            Color::Black => &mut self.black,
        }
    }

    /// Number of men on the board, shahs included.
    #[must_use]
    pub fn men(&self) -> u32 {
        2 + self.white.pieces() + self.black.pieces()
    }

    /// Whether any pawn is on the board.
    #[must_use]
    pub fn has_pawns(&self) -> bool {
        self.white.count(Role::Pawn) > 0 || self.black.count(Role::Pawn) > 0
    }

    /// The colours swapped.
    #[must_use]
    pub fn mirrored(&self) -> Material {
        Material {
            white: self.black,
            black: self.white,
        }
    }

    /// Whether the material is its own colour mirror (both sides have the same pieces).
    #[inline]
    #[must_use]
    pub fn is_symmetric(&self) -> bool {
        self.white == self.black
    }

    /// Whether the stored form puts Black's pieces first (the table holds the mirror).
    #[inline]
    #[must_use]
    pub fn is_mirrored_form(&self) -> bool {
        self.white.key() < self.black.key()
    }

    /// The stored form: the stronger side as White.
    #[inline]
    #[must_use]
    pub fn normalized(&self) -> Material {
        if self.is_mirrored_form() {
            self.mirrored()
        } else {
            *self
        }
    }

    /// Whether the rules alone decide every position: a side is bare (or both are).
    #[inline]
    #[must_use]
    pub fn is_decided_by_rules(&self) -> bool {
        self.white.is_bare() || self.black.is_bare()
    }

    /// The materials one capture or promotion by `mover` leads to, the result of the
    /// capture of a piece of `victim`'s (if any) and the promotion of a pawn (if any).
    #[must_use]
    pub fn successors(&self) -> Vec<Material> {
        let mut out = Vec::new();
        for mover in Color::ALL {
            let victim = !mover;
            let can_promote = self.side(mover).count(Role::Pawn) > 0;
            for captured in [None]
                .into_iter()
                .chain(Role::CAPTURABLE.into_iter().map(Some))
            {
                if let Some(r) = captured {
                    if self.side(victim).count(r) == 0 {
                        continue;
                    }
                }
                for promote in [false, true] {
                    if (captured.is_none() && !promote) || (promote && !can_promote) {
                        continue;
                    }
                    let mut m = *self;
                    if let Some(r) = captured {
                        let s = m.side_mut(victim);
                        s.counts[r.index()] -= 1;
                    }
                    if promote {
                        let s = m.side_mut(mover);
                        s.counts[Role::Pawn.index()] -= 1;
                        s.counts[Role::Ferz.index()] += 1;
                    }
                    if !out.contains(&m) {
                        out.push(m);
                    }
                }
            }
        }
        out
    }

    /// Every material of 3 to `max_men` men in which both sides have a piece (those need
    /// a table), in the stored form, each once, in dependency order: every table comes
    /// after the tables its captures and promotions lead to.
    #[must_use]
    pub fn all_with_tables(max_men: u32) -> Vec<Material> {
        let mut sides = Vec::new();
        // every multiset of at most max_men - 3 pieces on one side
        fn rec(i: usize, left: u32, cur: &mut MaterialSide, out: &mut Vec<MaterialSide>) {
            if i == PIECE_ORDER.len() {
                out.push(*cur);
                return;
            }
            for n in 0..=left {
                if PIECE_ORDER[i] == Role::Pawn && n > 8 {
                    break;
                }
                cur.counts[PIECE_ORDER[i].index()] = n as u8;
                rec(i + 1, left - n, cur, out);
            }
            cur.counts[PIECE_ORDER[i].index()] = 0;
        }
        rec(
            0,
            max_men.saturating_sub(3),
            &mut MaterialSide::default(),
            &mut sides,
        );
        let mut all = Vec::new();
        for w in &sides {
            for b in &sides {
                let m = Material {
                    white: *w,
                    black: *b,
                };
                if !w.is_bare() && !b.is_bare() && m.men() <= max_men && m.normalized() == m {
                    all.push(m);
                }
            }
        }
        Material::dependency_order(all)
    }

    /// Orders materials so that each comes after those it leads to (fewer men first, then
    /// fewer pawns first: a promotion turns a pawn into a ferz with the same men).
    #[must_use]
    pub fn dependency_order(mut list: Vec<Material>) -> Vec<Material> {
        list.sort_by_key(|m| {
            (
                m.men(),
                u32::from(m.white.count(Role::Pawn)) + u32::from(m.black.count(Role::Pawn)),
                m.to_string(),
            )
        });
        list.dedup();
        list
    }

    /// The tables `self` needs (transitively), in dependency order, `self` last. Materials
    /// decided by the rules are left out.
    #[must_use]
    pub fn with_dependencies(&self) -> Vec<Material> {
        let mut seen = vec![self.normalized()];
        let mut i = 0;
        while i < seen.len() {
            for s in seen[i].successors() {
                let n = s.normalized();
                if !n.is_decided_by_rules() && !seen.contains(&n) {
                    seen.push(n);
                }
            }
            i += 1;
        }
        Material::dependency_order(seen)
    }

    /// Count of (role, colour) groups: used by the index.
    #[must_use]
    pub fn by_color(&self) -> ByColor<MaterialSide> {
        ByColor {
            white: self.white,
            black: self.black,
        }
    }
}

impl Material {
    /// The name, as `Display` writes it (`KQvKR`), without the formatting machinery.
    #[must_use]
    pub fn name(&self) -> String {
        let mut s = String::with_capacity(12);
        self.white.write(&mut s);
        s.push('v');
        self.black.write(&mut s);
        s
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A material name that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseMaterialError(String);

impl fmt::Display for ParseMaterialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid material '{}': expected two sides joined by 'v', each a K then piece \
             letters, e.g. KRvKQ (R rook, N knight, Q or F ferz, B or A alfil, P pawn)",
            self.0
        )
    }
}

impl std::error::Error for ParseMaterialError {}

impl FromStr for Material {
    type Err = ParseMaterialError;

    fn from_str(s: &str) -> Result<Material, ParseMaterialError> {
        let err = || ParseMaterialError(s.to_string());
        let (w, b) = s.trim().split_once(['v', 'V']).ok_or_else(err)?;
        let parse_side = |part: &str| -> Result<MaterialSide, ParseMaterialError> {
            let mut chars = part.chars();
            if !matches!(chars.next(), Some('K' | 'k')) {
                return Err(err());
            }
            let mut side = MaterialSide::default();
            for c in chars {
                match Role::from_char(c) {
                    Some(Role::Shah) | None => return Err(err()),
                    Some(r) => side.counts[r.index()] += 1,
                }
                if side.pieces() > 15 || side.count(Role::Pawn) > 8 {
                    return Err(err());
                }
            }
            Ok(side)
        };
        Ok(Material {
            white: parse_side(w)?,
            black: parse_side(b)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Material {
        s.parse().unwrap()
    }

    #[test]
    fn names() {
        assert_eq!(m("KRvKQ").to_string(), "KRvKQ");
        assert_eq!(m("KFvKA").to_string(), "KQvKB");
        assert_eq!(m("KPQRvKR").to_string(), "KRQPvKR");
        assert!("KRvQ".parse::<Material>().is_err());
        assert!("KRKQ".parse::<Material>().is_err());
        assert!("KXvK".parse::<Material>().is_err());
        assert!("KKvK".parse::<Material>().is_err());
    }

    #[test]
    fn normalisation() {
        assert_eq!(m("KQvKR").normalized(), m("KRvKQ"));
        assert_eq!(m("KvKR").normalized(), m("KRvK"));
        assert_eq!(m("KRvKR").normalized(), m("KRvKR"));
        assert_eq!(m("KPvKRQ").normalized(), m("KRQvKP"));
    }

    #[test]
    fn successors_of_a_pawn_material() {
        let mut s: Vec<String> = m("KRvKP")
            .successors()
            .iter()
            .map(|x| x.to_string())
            .collect();
        s.sort();
        assert_eq!(s, ["KRvK", "KRvKQ", "KvKP", "KvKQ"]);
    }

    #[test]
    fn counts_of_all_tables() {
        // 3 men: K X v K is decided by the rules; 4 men: both sides one piece (5 x 5 = 25
        // ordered pairs, 15 up to colour) and none with a bare side.
        assert_eq!(Material::all_with_tables(3).len(), 0);
        assert_eq!(Material::all_with_tables(4).len(), 15);
        let five = Material::all_with_tables(5);
        // K XY v K Z: 15 pairs x 5 = 75, both orientations distinct
        assert_eq!(five.len(), 15 + 75);
        // dependency order: every successor with a table comes earlier
        for (i, mat) in five.iter().enumerate() {
            for s in mat.successors() {
                let n = s.normalized();
                if !n.is_decided_by_rules() {
                    let j = five.iter().position(|x| *x == n).unwrap();
                    assert!(j < i, "{n} must come before {mat}");
                }
            }
        }
    }
}

//! Squares of the 8x8 board, a1 = 0 .. h8 = 63.

use std::fmt;
use std::str::FromStr;

/// A square of the board: `a1` is 0, `b1` is 1, ..., `h8` is 63.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Square(u8);

impl Square {
    /// All 64 squares, a1 first.
    pub const ALL: [Square; 64] = {
        let mut all = [Square(0); 64];
        let mut i = 0;
        while i < 64 {
            all[i] = Square(i as u8);
            i += 1;
        }
        all
    };

    /// The square with this number.
    ///
    /// # Panics
    /// If `index >= 64`.
    #[track_caller]
    #[must_use]
    pub const fn new(index: u32) -> Square {
        assert!(index < 64, "square index out of range");
        Square(index as u8)
    }

    /// The square with this number, or `None` if `index >= 64`.
    #[must_use]
    pub const fn try_new(index: u32) -> Option<Square> {
        if index < 64 {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// The square on file `file` (0 = a) and rank `rank` (0 = first rank).
    ///
    /// # Panics
    /// If either coordinate is 8 or more.
    #[track_caller]
    #[must_use]
    pub const fn from_coords(file: u32, rank: u32) -> Square {
        assert!(file < 8 && rank < 8, "coordinate out of range");
        Square((rank * 8 + file) as u8)
    }

    /// The number of the square, 0..64.
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The file, 0 (a) to 7 (h).
    #[must_use]
    pub const fn file(self) -> u32 {
        (self.0 & 7) as u32
    }

    /// The rank, 0 (first rank) to 7 (eighth rank).
    #[must_use]
    pub const fn rank(self) -> u32 {
        (self.0 >> 3) as u32
    }

    /// Mirror across the horizontal mid-line (a1 <-> a8).
    #[must_use]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// Mirror across the vertical mid-line (a1 <-> h1).
    #[must_use]
    pub const fn flip_horizontal(self) -> Square {
        Square(self.0 ^ 7)
    }

    /// Mirror across the a1-h8 diagonal (b1 <-> a2).
    #[must_use]
    pub const fn flip_diagonal(self) -> Square {
        Square(((self.0 & 7) << 3) | (self.0 >> 3))
    }

    /// The square `df` files and `dr` ranks away, if it is on the board.
    #[must_use]
    pub const fn offset(self, df: i32, dr: i32) -> Option<Square> {
        let f = self.file() as i32 + df;
        let r = self.rank() as i32 + dr;
        if f >= 0 && f < 8 && r >= 0 && r < 8 {
            Some(Square((r * 8 + f) as u8))
        } else {
            None
        }
    }

    /// Chebyshev (king-step) distance between two squares.
    #[must_use]
    pub const fn distance(self, other: Square) -> u32 {
        let df = (self.file() as i32 - other.file() as i32).unsigned_abs();
        let dr = (self.rank() as i32 - other.rank() as i32).unsigned_abs();
        if df > dr { df } else { dr }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            char::from(b'a' + self.file() as u8),
            char::from(b'1' + self.rank() as u8)
        )
    }
}

/// A string that is not a square name such as `e4`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSquareError;

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid square name (expected a file a-h and a rank 1-8, such as e4)")
    }
}

impl std::error::Error for ParseSquareError {}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        match s.as_bytes() {
            [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Ok(Square::from_coords(
                u32::from(f - b'a'),
                u32::from(r - b'1'),
            )),
            _ => Err(ParseSquareError),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for sq in Square::ALL {
            assert_eq!(sq.to_string().parse::<Square>(), Ok(sq));
        }
        assert_eq!("e4".parse::<Square>().unwrap().index(), 28);
        assert!("i1".parse::<Square>().is_err());
        assert!("a9".parse::<Square>().is_err());
        assert!("a".parse::<Square>().is_err());
    }

    #[test]
    fn flips() {
        let b1: Square = "b1".parse().unwrap();
        assert_eq!(b1.flip_diagonal().to_string(), "a2");
        assert_eq!(b1.flip_vertical().to_string(), "b8");
        assert_eq!(b1.flip_horizontal().to_string(), "g1");
    }
}

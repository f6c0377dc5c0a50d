//! The six kinds of shatranj piece and their letters.
//!
//! | piece | role | FEN letter | accepted aliases |
//! |---|---|---|---|
//! | shah (king) | [`Role::Shah`] | `K` | |
//! | ferz (counsellor) | [`Role::Ferz`] | `Q` | `F` |
//! | alfil (elephant) | [`Role::Alfil`] | `B` | `A`, `E` |
//! | faras (knight) | [`Role::Knight`] | `N` | |
//! | rukh (chariot) | [`Role::Rook`] | `R` | |
//! | baidaq (pawn) | [`Role::Pawn`] | `P` | |
//!
//! The letters are Fairy-Stockfish's, so engines that already play shatranj read our
//! output; lower case is Black.

use std::fmt;

use crate::color::Color;

/// A kind of piece.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Pawn = 0,
    Knight = 1,
    Alfil = 2,
    Ferz = 3,
    Rook = 4,
    Shah = 5,
}

impl Role {
    /// All roles, pawn first, shah last.
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Alfil,
        Role::Ferz,
        Role::Rook,
        Role::Shah,
    ];

    /// The roles a capture can remove (every role but the shah).
    pub const CAPTURABLE: [Role; 5] = [
        Role::Pawn,
        Role::Knight,
        Role::Alfil,
        Role::Ferz,
        Role::Rook,
    ];

    /// 0..6, in the order of [`Role::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The upper-case FEN letter (Fairy-Stockfish convention: `Q` ferz, `B` alfil).
    #[must_use]
    pub const fn upper_char(self) -> char {
        match self {
            Role::Pawn => 'P',
            Role::Knight => 'N',
            Role::Alfil => 'B',
            Role::Ferz => 'Q',
            Role::Rook => 'R',
            Role::Shah => 'K',
        }
    }

    /// The upper-case letter in the F/A convention (`F` ferz, `A` alfil).
    #[must_use]
    pub const fn upper_char_fa(self) -> char {
        match self {
            Role::Alfil => 'A',
            Role::Ferz => 'F',
            other => other.upper_char(),
        }
    }

    /// The role of a letter, either case, including the aliases `F`, `A` and `E`.
    #[must_use]
    pub const fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_uppercase() {
            'P' => Some(Role::Pawn),
            'N' => Some(Role::Knight),
            'B' | 'A' | 'E' => Some(Role::Alfil),
            'Q' | 'F' => Some(Role::Ferz),
            'R' => Some(Role::Rook),
            'K' => Some(Role::Shah),
            _ => None,
        }
    }

    /// The English name of the piece.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Role::Pawn => "pawn",
            Role::Knight => "knight",
            Role::Alfil => "alfil",
            Role::Ferz => "ferz",
            Role::Rook => "rook",
            Role::Shah => "shah",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A role of a colour.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    /// The FEN letter: upper case for White, lower case for Black.
    #[must_use]
    pub fn char(self) -> char {
        let c = self.role.upper_char();
        match self.color {
            Color::White => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }

    /// The piece of a FEN letter (aliases accepted).
    #[must_use]
    pub fn from_char(c: char) -> Option<Piece> {
        let role = Role::from_char(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }
}

/// The piece legend shown in help texts.
pub const LEGEND: &str = "Pieces (FEN letters, upper case White, lower case Black): \
K shah (king), Q ferz (one step diagonally; F accepted), B alfil (two-square diagonal leap; \
A or E accepted), N knight, R rook, P pawn (promotes to a ferz only).";

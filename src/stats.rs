//! The figures of a table (positions, wins, draws, losses and the longest of each, for
//! each side to move), counted over all legal positions with symmetry expanded (every
//! distinct placement once), so they compare with other tools. The generator counts them
//! (`generate::stats`) and writes them into every table file; the probe reads them back
//! for `info`. Both use these types, which need neither.

use serde::{Deserialize, Serialize};

use crate::color::Color;
use crate::fen::Fen;
use crate::position::Position;

/// A longest win or loss and one position that has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Longest {
    pub plies: u32,
    pub fen: String,
}

/// Figures for one side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideStats {
    pub legal: u64,
    pub win: u64,
    pub draw: u64,
    pub loss: u64,
    pub longest_win: Option<Longest>,
    pub longest_loss: Option<Longest>,
}

/// Figures for both sides to move, in the table's stored colours.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableStats {
    pub white: SideStats,
    pub black: SideStats,
}

impl TableStats {
    /// The figures with colours exchanged (for the mirror material), FENs mirrored.
    #[must_use]
    pub fn mirrored(&self) -> TableStats {
        let flip = |s: &SideStats| SideStats {
            longest_win: s.longest_win.as_ref().map(mirror_longest),
            longest_loss: s.longest_loss.as_ref().map(mirror_longest),
            ..s.clone()
        };
        TableStats {
            white: flip(&self.black),
            black: flip(&self.white),
        }
    }

    /// The figures of one side to move.
    #[must_use]
    pub fn side(&self, turn: Color) -> &SideStats {
        match turn {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }
}

fn mirror_longest(l: &Longest) -> Longest {
    let fen = Position::from_fen(&l.fen)
        .map(|p| Fen::from_position(&p.swap_colors()).to_string())
        .unwrap_or_else(|_| l.fen.clone());
    Longest {
        plies: l.plies,
        fen,
    }
}

/// The DTZ figures of one side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DtzSideStats {
    /// The longest DTZ of a win (a cursed one included), in plies.
    pub longest_win: u32,
    /// The longest DTZ of a loss (a blessed one included), in plies.
    pub longest_loss: u32,
    /// Wins that the move rule turns into draws.
    pub cursed_wins: u64,
    /// Losses that the move rule turns into draws.
    pub blessed_losses: u64,
    /// A position of the longest win, as a FEN (none if there is no win).
    pub longest_win_fen: Option<String>,
}

/// The DTZ figures of a table (stored colours), kept in its DTZ file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DtzStats {
    /// The move rule the values are for (`none` or `70`).
    pub move_rule: String,
    pub white: DtzSideStats,
    pub black: DtzSideStats,
    /// The side to move (`white` or `black`) whose values the file holds, when it holds
    /// one side of a table that is not its own mirror (a probe of the other side looks
    /// one move ahead); absent when it holds both, or the table is its own mirror.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_stored: Option<String>,
    /// Whether a file of one side to move leaves out that side's wins by a zeroing move
    /// (1 ply, which a probe then finds by looking at those moves), as a file of both
    /// sides always does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zeroing_wins_left_out: bool,
    /// The order of the table's digits the file keeps its values in, the most
    /// significant first (index scheme 3, see [`crate::index::DigitOrder`]); absent in a
    /// file of scheme 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digit_order: Option<Vec<u8>>,
}

impl DtzStats {
    /// The figures with `turn` to move.
    #[must_use]
    pub fn side(&self, turn: Color) -> &DtzSideStats {
        match turn {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    /// The same figures with the colours swapped.
    #[must_use]
    pub fn mirrored(&self) -> DtzStats {
        DtzStats {
            move_rule: self.move_rule.clone(),
            white: self.black.clone(),
            black: self.white.clone(),
            side_stored: self
                .side_stored
                .as_deref()
                .map(|s| if s == "white" { "black" } else { "white" }.to_string()),
            zeroing_wins_left_out: self.zeroing_wins_left_out,
            digit_order: self.digit_order.clone(),
        }
    }

    /// Whether any position is a cursed win or a blessed loss.
    #[must_use]
    pub fn has_cursed(&self) -> bool {
        self.white.cursed_wins + self.white.blessed_losses + self.black.cursed_wins > 0
            || self.black.blessed_losses > 0
    }
}

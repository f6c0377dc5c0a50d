//! What a probe answers: [`ProbeResult`] (text), [`MoveProbe`] (moves), [`LineStep`],
//! [`TableInfo`].

use crate::material::Material;
use crate::position::Move;
use crate::rules::{EndReason, RuleSet};
use crate::stats::SideStats;
use crate::value::{Dtz, Value, Wdl};

/// One legal move and what it leads to, from the probed side's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// UCI notation (`e7e8q` for a promotion).
    pub uci: String,
    /// The probed side's result if it plays this move.
    pub value: Value,
    /// The move's DTZ for the probed side (see [`crate::probe::DtzProbe`]), where the
    /// DTZ files are here.
    pub dtz: Option<Dtz>,
    /// Whether the move is a capture or a pawn move (it zeroes the move rule's count).
    pub zeroing: bool,
}

/// The answer for one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    pub fen: String,
    /// The material as on the board (White's pieces first).
    pub material: Material,
    pub rules: RuleSet,
    /// The value for the side to move.
    pub value: Value,
    /// How the game ended, if it has.
    pub end: Option<EndReason>,
    /// Every legal move with its value, best first (empty once the game has ended).
    pub moves: Vec<MoveValue>,
    /// The DTZ for the side to move under the tablebase's move rule, where the DTZ files
    /// are here (`None` otherwise).
    pub dtz: Option<Dtz>,
}

impl ProbeResult {
    #[must_use]
    pub fn wdl(&self) -> Wdl {
        self.value.wdl()
    }

    #[must_use]
    pub fn dtm(&self) -> Option<u32> {
        self.value.dtm()
    }

    /// The best move, if the game goes on.
    #[must_use]
    pub fn best_move(&self) -> Option<&MoveValue> {
        self.moves.first()
    }

    /// Every move that keeps the position's value.
    pub fn best_moves(&self) -> impl Iterator<Item = &MoveValue> {
        self.moves.iter().filter(|m| m.value == self.value)
    }
}

/// The answer for one position with its moves as [`Move`]s, not text: what
/// [`Tablebase::probe_moves`] gives, for callers that write their own output (the gRPC
/// service); [`ProbeResult`] is the same answer with the FEN and UCI strings written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveProbe {
    /// The value for the side to move.
    pub value: Value,
    /// How the game ended, if it has.
    pub end: Option<EndReason>,
    /// Every legal move with the probed side's result if it plays it, best first, moves
    /// of equal value in the order of their UCI names (empty once the game has ended).
    pub moves: Vec<(Move, Value)>,
}

/// One move of an optimal line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineStep {
    pub uci: String,
    /// The position after the move.
    pub fen: String,
    /// The value for the side to move after the move.
    pub value: Value,
    /// How the game ended with this move, if it did.
    pub end: Option<EndReason>,
    /// The DTZ for the side to move after the move, in a DTZ line.
    pub dtz: Option<Dtz>,
}

/// The figures of one table, as `info` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// As asked for (White's pieces first), whichever way it is stored.
    pub material: Material,
    pub rules: RuleSet,
    pub wdl_bytes: u64,
    pub dtm_bytes: u64,
    /// The DTZ file under the tablebase's move rule, if there is one: its size and
    /// figures (for the material as asked for).
    pub dtz_bytes: Option<u64>,
    pub dtz: Option<crate::stats::DtzStats>,
    pub white: SideStats,
    pub black: SideStats,
}

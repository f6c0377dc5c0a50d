//! DTZ answers: the DTZ of a position and of each of its moves, and the DTZ-optimal line
//! (what an engine playing under the move rule must play).

use super::lookup::Access;
use super::{LineStep, ProbeError, Tablebase};
use crate::fen::Fen;
use crate::material::Material;
use crate::position::{Move, Position};
use crate::role::Role;
use crate::value::{Category, Dtz, Value, Wdl};

/// The DTZ of a position and of each legal move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DtzProbe {
    /// The position's DTZ for the side to move.
    pub dtz: Dtz,
    /// Every legal move with its DTZ for the side that plays it (a zeroing move counts 1
    /// ply, 141 into a cursed win or a blessed loss), and whether it zeroes: best first,
    /// moves of equal value in the order of their UCI names.
    pub moves: Vec<(Move, Dtz, bool)>,
}

impl DtzProbe {
    /// The moves that keep the position's DTZ (the DTZ-optimal moves).
    pub fn best_moves(&self) -> impl Iterator<Item = &(Move, Dtz, bool)> {
        self.moves.iter().filter(|(_, d, _)| *d == self.dtz)
    }
}

/// Whether a move zeroes the move rule's count: a capture or a pawn move.
#[must_use]
pub fn is_zeroing(m: &Move) -> bool {
    m.capture.is_some() || m.role == Role::Pawn
}

/// The DTZ of a move for its mover, from the DTZ of the position it leads to.
#[must_use]
pub fn dtz_of_move(zeroing: bool, child: Dtz, move_rule: crate::rules::MoveRule) -> Dtz {
    if zeroing {
        let (wdl, plies) = match child.category.flip() {
            Category::Win => (Wdl::Win, 1),
            Category::CursedWin => (Wdl::Win, 141),
            Category::Draw => (Wdl::Draw, 0),
            Category::BlessedLoss => (Wdl::Loss, 141),
            Category::Loss => (Wdl::Loss, 1),
        };
        Dtz::from_plies(wdl, plies, move_rule)
    } else {
        Dtz::from_plies(child.category.flip().wdl(), child.plies + 1, move_rule)
    }
}

impl Tablebase {
    /// Whether the DTZ of `pos` can be answered here: the rules decide it, or its table
    /// has a DTZ file under this tablebase's move rule.
    #[must_use]
    pub fn has_dtz_for(&self, pos: &Position) -> bool {
        Value::of_decided(pos, self.rules).is_some()
            || self.has_dtz_file(Material::from_board(pos.board()))
    }

    /// The DTZ of `pos` and of every legal move (see [`DtzProbe`]).
    pub fn probe_dtz(&self, pos: &Position) -> Result<DtzProbe, ProbeError> {
        Ok(self
            .probe_dtz_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::probe_dtz`] from memory only: `Ok(None)` if an answer needs a file
    /// that is not open yet or a block that is not in the cache.
    pub fn probe_dtz_cached(&self, pos: &Position) -> Result<Option<DtzProbe>, ProbeError> {
        self.probe_dtz_with(pos, Access::Cached)
    }

    pub(super) fn probe_dtz_with(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<DtzProbe>, ProbeError> {
        let rule = self.rules.move_rule;
        let Some(dtz) = self.dtz_with(pos, access)? else {
            return Ok(None);
        };
        let mut moves: Vec<(Move, Dtz, bool)> = Vec::new();
        let ended = pos.outcome(self.rules).is_some();
        if !ended {
            for m in pos.legal_moves().iter() {
                let z = is_zeroing(m);
                let Some(child) = self.dtz_with(&pos.play_unchecked(m), access)? else {
                    return Ok(None);
                };
                moves.push((*m, dtz_of_move(z, child, rule), z));
            }
        }
        moves.sort_by(|a, b| {
            b.1.rank()
                .cmp(&a.1.rank())
                .then_with(|| a.0.to_uci().cmp(&b.0.to_uci()))
        });
        Ok(Some(DtzProbe { dtz, moves }))
    }

    /// A DTZ-optimal line from `pos` to the end of the game: at every step the move that
    /// keeps the DTZ (the winner hurrying to a zeroing move that keeps the win, the loser
    /// delaying it; the first such move in UCI order), then on from the position after
    /// the zeroing move. Empty for a draw or a finished game.
    pub fn dtz_line(&self, pos: &Position) -> Result<Vec<LineStep>, ProbeError> {
        let mut line = Vec::new();
        let mut pos = *pos;
        loop {
            if pos.outcome(self.rules).is_some() {
                break;
            }
            let probe = self.probe_dtz(&pos)?;
            if probe.dtz.category == Category::Draw {
                break;
            }
            let Some(&(m, d, _)) = probe.moves.first() else {
                break;
            };
            if d != probe.dtz {
                return Err(ProbeError::Corrupt {
                    path: self.dir.clone(),
                    message: format!(
                        "the best move in {} gives DTZ {d}, not the position's {}",
                        Fen::from_position(&pos),
                        probe.dtz
                    ),
                });
            }
            let child = pos.play_unchecked(&m);
            line.push(LineStep {
                uci: m.to_uci(),
                fen: Fen::from_position(&child).to_string(),
                value: self.value(&child)?,
                end: child.outcome(self.rules).map(|o| o.reason()),
                dtz: Some(self.dtz(&child)?),
            });
            pos = child;
        }
        Ok(line)
    }
}

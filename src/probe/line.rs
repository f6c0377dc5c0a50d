//! Lines of play: an optimal line to the end of the game, and a line that keeps a draw.

use super::{LineStep, ProbeError, Tablebase};
use crate::fen::Fen;
use crate::position::Position;
use crate::value::Value;

impl Tablebase {
    /// An optimal line from `pos` to the end of the game: the winner hurries, the loser
    /// delays. Empty for a draw or a finished game.
    pub fn line(&self, pos: &Position) -> Result<Vec<LineStep>, ProbeError> {
        let mut line = Vec::new();
        let mut pos = *pos;
        let mut value = self.value(&pos)?;
        while value != Value::Draw && pos.outcome(self.rules).is_none() {
            let mut best: Option<(Value, crate::position::Move, Position)> = None;
            for m in pos.legal_moves().iter() {
                let child = pos.play_unchecked(m);
                let v = self.value(&child)?;
                if best
                    .as_ref()
                    .is_none_or(|(b, _, _)| v.parent() > b.parent())
                {
                    best = Some((v, *m, child));
                }
            }
            let Some((v, m, child)) = best else { break };
            if v.parent() != value {
                return Err(ProbeError::Corrupt {
                    path: self.dir.clone(),
                    message: format!(
                        "the best move in {} gives {}, not the position's {value}",
                        Fen::from_position(&pos),
                        v.parent()
                    ),
                });
            }
            line.push(LineStep {
                uci: m.to_uci(),
                fen: Fen::from_position(&child).to_string(),
                value: v,
                end: child.outcome(self.rules).map(|o| o.reason()),
                dtz: None,
            });
            pos = child;
            value = v;
        }
        Ok(line)
    }

    /// A line of at most `max_plies` moves from a drawn position that keeps the draw:
    /// at each step the first move (in UCI order) that keeps it. A draw has no end to
    /// play to, so the length is the caller's choice. Empty if `pos` is not a draw or
    /// the game has ended.
    pub fn drawing_line(
        &self,
        pos: &Position,
        max_plies: usize,
    ) -> Result<Vec<LineStep>, ProbeError> {
        let mut line = Vec::new();
        let mut pos = *pos;
        while line.len() < max_plies {
            let probe = self.probe_moves(&pos)?;
            if probe.value != Value::Draw || probe.end.is_some() {
                break;
            }
            let Some(&(m, _)) = probe.moves.iter().find(|(_, v)| *v == Value::Draw) else {
                break;
            };
            let child = pos.play_unchecked(&m);
            line.push(LineStep {
                uci: m.to_uci(),
                fen: Fen::from_position(&child).to_string(),
                value: Value::Draw,
                end: child.outcome(self.rules).map(|o| o.reason()),
                dtz: None,
            });
            pos = child;
        }
        Ok(line)
    }
}

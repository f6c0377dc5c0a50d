//! Every legal move of a position with its value: the quiet moves' successors looked up
//! together in the position's own table, the others one by one; sorted best first.

use super::lookup::Access;
use super::{MAX_MEN, MoveProbe, MoveValue, ProbeError, ProbeResult, Tablebase};
use crate::board::Board;
use crate::color::Color;
use crate::format::{Metric, TableFile};
use crate::index::{MoveFrame, TableIndex};
use crate::material::Material;
use crate::position::{Move, Position};
use crate::role::{Piece, Role};
use crate::value::Value;

/// Moves a probe handles in fixed-size arrays (a position of a table, at most 6 men, has
/// fewer legal moves: three rooks and a shah, the most a side of a table can have that
/// moves far, make at most 3 * 14 + 8 = 50); beyond, it falls back to slower ways.
const BATCH: usize = 64;

/// The moves best first, moves of equal value in UCI order: sorted as one integer a
/// move (value, then name, then the move's place in `moves`).
fn sorted(moves: Vec<(Move, Value)>) -> Vec<(Move, Value)> {
    if moves.len() > BATCH {
        let mut moves = moves;
        moves.sort_unstable_by_key(|(m, v)| (std::cmp::Reverse(v.rank()), uci_order(m)));
        return moves;
    }
    let mut keys = [0u64; BATCH];
    for (k, (key, (m, v))) in keys.iter_mut().zip(&moves).enumerate() {
        // rank() lies within ±2^33: better values get smaller keys
        let worse = u64::try_from((1i64 << 33) - v.rank()).expect("a rank within ±2^33");
        *key = (worse << 24) | (u64::from(uci_order(m)) << 8) | k as u64;
    }
    let keys = &mut keys[..moves.len()];
    keys.sort_unstable();
    keys.iter()
        .map(|key| moves[(key & 0xff) as usize])
        .collect()
}

/// A key that orders moves as their UCI names sort (`a1b2` < `a1b2q` < `a1b3`).
fn uci_order(m: &Move) -> u32 {
    (m.from.file() << 12)
        | (m.from.rank() << 9)
        | (m.to.file() << 6)
        | (m.to.rank() << 3)
        | u32::from(m.promotion)
}

/// What the quiet moves (no capture, no promotion) of one position share: their
/// successors are in the same table, so no material is looked up for them. The index of
/// a successor after a move of a piece other than a shah is computed from the position's
/// own ([`MoveFrame::index_after_move`]), and after a shah move that keeps the symmetry
/// too ([`MoveFrame::index_after_shah_move`]); after other shah moves the board is
/// encoded.
struct QuietMoves<'a> {
    file: &'a TableFile,
    index: &'a TableIndex,
    /// `None` if the symmetry is ambiguous: then every successor is encoded.
    frame: Option<MoveFrame<'a>>,
    /// The position's board in the colours the successors are stored in.
    board: Board,
    /// Whether that board has colours swapped (and ranks flipped).
    swapped: bool,
    /// The slot of index 0 for the successors' side to move, as stored.
    first_slot: u64,
}

impl Tablebase {
    /// What the quiet moves of `pos` share ([`QuietMoves`]), or `None` if they must be
    /// looked up one by one: no table for the material (the lookups report why), or
    /// `access` is [`Access::Cached`] and the DTM file is not open.
    fn quiet_moves(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<QuietMoves<'_>>, ProbeError> {
        let m = Material::from_board(pos.board());
        if m.men() > MAX_MEN || m.is_decided_by_rules() {
            return Ok(None);
        }
        let stored = m.normalized();
        let Some(slot) = self.slots.get(&stored).filter(|s| s.is_present()) else {
            return Ok(None);
        };
        // as `locate` stores the successors, whose side to move is the other one
        let turn = !pos.turn();
        let swapped = m.is_mirrored_form() || (m.is_symmetric() && turn == Color::Black);
        let board = if swapped {
            pos.board().swap_colors()
        } else {
            *pos.board()
        };
        let frame = slot.index.move_frame(&board);
        let file = match access {
            Access::Read => self.file(slot, stored, Metric::Dtm)?,
            Access::Cached => match slot.dtm.get() {
                Some(file) => file,
                None => return Ok(None),
            },
        };
        let stored_turn = if swapped { !turn } else { turn };
        Ok(Some(QuietMoves {
            file,
            index: &slot.index,
            frame,
            board,
            swapped,
            first_slot: slot.index.slot(stored_turn, 0),
        }))
    }

    /// The DTM slot of the position after `m` (a legal move of `pos`), if it is a quiet
    /// move (then the slot is in `q.file`).
    #[inline]
    fn slot_after(pos: &Position, m: &Move, q: &QuietMoves<'_>) -> Option<u64> {
        if m.is_conversion() {
            return None;
        }
        let (color, from, to) = if q.swapped {
            (!pos.turn(), m.from.flip_vertical(), m.to.flip_vertical())
        } else {
            (pos.turn(), m.from, m.to)
        };
        let by_arithmetic = q.frame.and_then(|frame| {
            if m.role == Role::Shah {
                frame.index_after_shah_move(&q.board, color, to)
            } else {
                let piece = Piece {
                    color,
                    role: m.role,
                };
                Some(frame.index_after_move(&q.board, piece, from, to))
            }
        });
        let i = match by_arithmetic {
            Some(i) => i,
            None => {
                let mut board = q.board;
                board.move_piece(color, m.role, from, to, m.role);
                q.index
                    .encode(&board)
                    .expect("a legal position of the table's material has an index")
            }
        };
        Some(q.first_slot + i)
    }

    /// The value, how the game ended (if it has) and every legal move with its value.
    pub fn probe(&self, pos: &Position) -> Result<ProbeResult, ProbeError> {
        Ok(self
            .probe_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::probe`] from memory only: `Ok(None)` if the answer needs a table file
    /// that is not open yet or a block that is not in the cache. It never touches the
    /// disk (no file opened, no block read, no block decompressed), so it
    /// takes microseconds and cannot block on I/O: fit to run on an async runtime, with
    /// [`Tablebase::probe`] on a blocking thread as the fallback. Errors that need no file
    /// (a missing table, too many men) are reported as by `probe`.
    pub fn probe_cached(&self, pos: &Position) -> Result<Option<ProbeResult>, ProbeError> {
        self.probe_with(pos, Access::Cached)
    }

    pub(super) fn probe_with(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<ProbeResult>, ProbeError> {
        let Some(probe) = self.moves_with(pos, access)? else {
            return Ok(None);
        };
        // DTZ where its files are here (from memory alone under `Access::Cached`).
        let dtz = if self.has_dtz_for(pos) {
            let Some(dtz) = self.probe_dtz_with(pos, access)? else {
                return Ok(None);
            };
            Some(dtz)
        } else {
            None
        };
        let move_dtz = |m: &Move| {
            dtz.as_ref()
                .and_then(|d| d.moves.iter().find(|(x, _, _)| x == m).map(|x| x.1))
        };
        Ok(Some(ProbeResult {
            fen: pos.fen(),
            material: Material::from_board(pos.board()),
            rules: self.rules,
            value: probe.value,
            end: probe.end,
            moves: probe
                .moves
                .iter()
                .map(|(m, value)| MoveValue {
                    uci: m.to_uci(),
                    value: *value,
                    dtz: move_dtz(m),
                    zeroing: super::is_zeroing(m),
                })
                .collect(),
            dtz: dtz.as_ref().map(|d| d.dtz),
        }))
    }

    /// [`Tablebase::probe`] with the moves as [`Move`]s: no FEN or UCI text written.
    pub fn probe_moves(&self, pos: &Position) -> Result<MoveProbe, ProbeError> {
        Ok(self
            .moves_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::probe_moves`] from memory only, as [`Tablebase::probe_cached`].
    pub fn probe_moves_cached(&self, pos: &Position) -> Result<Option<MoveProbe>, ProbeError> {
        self.moves_with(pos, Access::Cached)
    }

    pub(super) fn moves_with(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<MoveProbe>, ProbeError> {
        let Some(value) = self.value_with(pos, access)? else {
            return Ok(None);
        };
        // With a bare side the rules may have ended the game though moves remain; without
        // one, it has ended exactly when there is no legal move (see `outcome`).
        let bare = pos.is_bare(Color::White) || pos.is_bare(Color::Black);
        let ended = |moves: &[(Move, Value)]| {
            if bare || moves.is_empty() {
                pos.outcome(self.rules).map(|o| o.reason())
            } else {
                None
            }
        };
        if bare {
            if let Some(end) = ended(&[]) {
                return Ok(Some(MoveProbe {
                    value,
                    end: Some(end),
                    moves: Vec::new(),
                }));
            }
        }
        // The successors of the first `BATCH` quiet moves are looked up together
        // (`get_many`), the others one by one.
        let quiet = self.quiet_moves(pos, access)?;
        let mut moves: Vec<(Move, Value)> = Vec::with_capacity(BATCH / 2);
        let mut slots = [0u64; BATCH];
        let mut slot_of = [u8::MAX; BATCH];
        let mut n = 0;
        let mut failed = None;
        pos.for_each_legal_move(|m| {
            let k = moves.len();
            if k < BATCH {
                if let Some(s) = quiet.as_ref().and_then(|q| Self::slot_after(pos, &m, q)) {
                    slots[n] = s;
                    slot_of[k] = n as u8;
                    n += 1;
                    moves.push((m, Value::Draw));
                    return true;
                }
            }
            match self.value_with(&pos.play_unchecked(&m), access) {
                Ok(Some(v)) => {
                    moves.push((m, v.parent()));
                    true
                }
                other => {
                    failed = Some(other.map(|_| None));
                    false
                }
            }
        });
        if let Some(failed) = failed {
            return failed;
        }
        if let Some(q) = quiet.as_ref().filter(|_| n > 0) {
            let mut codes = [0u16; BATCH];
            if !q
                .file
                .get_many(&slots[..n], &mut codes[..n], access == Access::Read)?
            {
                return Ok(None);
            }
            for (entry, &b) in moves.iter_mut().zip(&slot_of) {
                if b != u8::MAX {
                    let b = usize::from(b);
                    entry.1 = Self::dtm_code_value(q.file.path(), slots[b], codes[b])?.parent();
                }
            }
        }
        let end = ended(&moves);
        Ok(Some(MoveProbe {
            value,
            end,
            moves: sorted(moves),
        }))
    }
}

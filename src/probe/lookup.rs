//! The value of one position: where its table and slot are, the DTM code there, and
//! WDL with the search over conversions that WDL files need.

use std::path::Path;

use super::registry::Slot;
use super::{MAX_MEN, ProbeError, Tablebase};
use crate::color::Color;
use crate::format::{Metric, TableFile};
use crate::index::TableIndex;
use crate::material::Material;
use crate::position::Position;
use crate::rules::MoveRule;
use crate::value::{Dtz, Value, Wdl};

/// Whether a lookup may read table files, or answers from memory only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Access {
    /// Open files and decompress blocks as needed.
    Read,
    /// Files already open and blocks already cached only; otherwise no answer.
    Cached,
}

/// The slot of `pos`, of material `m` as it stands, in the table of `index` (the index of
/// `m`'s stored form): in stored colours, where a symmetric material keeps White to move
/// only. `None` if the board has no index (not a legal position of the material).
pub(crate) fn stored_slot(index: &TableIndex, m: Material, pos: &Position) -> Option<u64> {
    let pos = if m.is_mirrored_form() || (m.is_symmetric() && pos.turn() == Color::Black) {
        pos.swap_colors()
    } else {
        *pos
    };
    let i = index.encode(pos.board())?;
    Some(pos.turn().index() as u64 * index.size() + i)
}

impl Tablebase {
    /// The table slot, the stored material and the slot number of a position that needs a
    /// table.
    pub(super) fn locate(&self, pos: &Position) -> Result<(&Slot, Material, u64), ProbeError> {
        let m = Material::from_board(pos.board());
        if m.men() > MAX_MEN {
            return Err(ProbeError::TooManyMen { men: m.men() });
        }
        let stored = m.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material: m,
            rules: self.rules,
        })?;
        let s = stored_slot(&slot.index, m, pos)
            .expect("a legal position of the table's material has an index");
        Ok((slot, stored, s))
    }

    /// The value (WDL and DTM) of a position for the side to move.
    pub fn value(&self, pos: &Position) -> Result<Value, ProbeError> {
        Ok(self
            .value_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::value`] from memory only: `Ok(None)` if the answer needs a table file
    /// that is not open yet or a block that is not in the cache (see
    /// [`Tablebase::probe_cached`]).
    pub fn value_cached(&self, pos: &Position) -> Result<Option<Value>, ProbeError> {
        self.value_with(pos, Access::Cached)
    }

    /// The value of a position, or `None` if `access` is [`Access::Cached`] and the
    /// answer is not in memory.
    pub(super) fn value_with(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<Value>, ProbeError> {
        if let Some(v) = Value::of_decided(pos, self.rules) {
            return Ok(Some(v));
        }
        let (slot, stored, s) = self.locate(pos)?;
        let file = match access {
            Access::Read => self.file(slot, stored, Metric::Dtm)?,
            Access::Cached => {
                let Some(file) = slot.dtm.get() else {
                    return Ok(None);
                };
                file
            }
        };
        Self::dtm_value(file, s, access)
    }

    /// The value at slot `s` of a DTM file, or `None` if `access` is [`Access::Cached`]
    /// and its block is not in the cache.
    #[inline]
    pub(super) fn dtm_value(
        file: &TableFile,
        s: u64,
        access: Access,
    ) -> Result<Option<Value>, ProbeError> {
        let code = match access {
            Access::Read => file.get(s)?,
            Access::Cached => match file.get_cached(s)? {
                Some(code) => code,
                None => return Ok(None),
            },
        };
        Self::dtm_code_value(file.path(), s, code).map(Some)
    }

    /// The value of the code at slot `s` of the DTM file at `path`; an error naming the
    /// file if the code is no value.
    #[inline]
    pub(crate) fn dtm_code_value(path: &Path, s: u64, code: u16) -> Result<Value, ProbeError> {
        let value = Value::from_dtm_code(code);
        if code == crate::format::UNUSED || value.to_dtm_code() != Some(code) {
            return Err(ProbeError::Corrupt {
                path: path.to_path_buf(),
                message: format!("value code {code} at index {s} is not a value"),
            });
        }
        Ok(value)
    }

    /// The DTZ of a position under this tablebase's move rule (see [`Dtz`]), from the WDL
    /// file and the DTZ file. A position the rules decide alone (a bare side) has its
    /// distance to the end, at most one ply.
    pub fn dtz(&self, pos: &Position) -> Result<Dtz, ProbeError> {
        Ok(self
            .dtz_with(pos, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::dtz`] from memory only: `Ok(None)` if the answer needs a file that is
    /// not open yet or a block that is not in the cache.
    pub fn dtz_cached(&self, pos: &Position) -> Result<Option<Dtz>, ProbeError> {
        self.dtz_with(pos, Access::Cached)
    }

    pub(super) fn dtz_with(
        &self,
        pos: &Position,
        access: Access,
    ) -> Result<Option<Dtz>, ProbeError> {
        let move_rule = self.rules.move_rule;
        if let Some(v) = Value::of_decided(pos, self.rules) {
            return Ok(Some(Dtz::from_plies(
                v.wdl(),
                v.dtm().unwrap_or(0),
                move_rule,
            )));
        }
        let (slot, stored, s) = self.locate(pos)?;
        if slot.dtz.get().is_none() && !self.has_dtz_file(stored) {
            return Err(ProbeError::MissingTable {
                material: Material::from_board(pos.board()),
                rules: self.rules,
            });
        }
        let Some(file) = self.file_with(slot, stored, Metric::Dtz, access)? else {
            return Ok(None);
        };
        let Some(wdl) = self.wdl_below_with(pos, Wdl::Win, access)? else {
            return Ok(None);
        };
        if wdl == Wdl::Draw {
            return Ok(Some(Dtz::from_plies(Wdl::Draw, 0, move_rule)));
        }
        let mut s = s;
        let one_side = slot.dtz_side.get().copied().flatten();
        // A file of one side to move holds the decided positions of that side; the other
        // side's DTZ is that of its best move.
        if let Some((side, left_out)) = one_side {
            let size = slot.index.size();
            let turn = if s < size { Color::White } else { Color::Black };
            if turn != side {
                return self.dtz_by_search(pos, wdl, slot, stored, file, !left_out, access);
            }
            s -= turn.index() as u64 * size;
        }
        // A file of both sides leaves out a win by a zeroing move (1 ply), found here; a
        // file of one side may (its figures say).
        if wdl == Wdl::Win && one_side.is_none_or(|(_, left_out)| left_out) {
            match self.wins_by_zeroing(pos, access)? {
                Some(true) => return Ok(Some(Dtz::from_plies(Wdl::Win, 1, move_rule))),
                Some(false) => {}
                None => return Ok(None),
            }
        }
        let s = slot.dtz_file_index(s);
        let Some(plies) = Self::code_at(file, s, access)? else {
            return Ok(None);
        };
        Self::dtz_of_code(file.path(), s, wdl, plies, move_rule).map(Some)
    }

    /// The DTZ of a decided position (`wdl`) whose DTZ file holds `plies` at index `s`; an
    /// error naming the file if that is no value.
    fn dtz_of_code(
        path: &Path,
        s: u64,
        wdl: Wdl,
        plies: u16,
        rule: MoveRule,
    ) -> Result<Dtz, ProbeError> {
        if plies == crate::format::UNUSED || (wdl == Wdl::Win && plies == 0) {
            return Err(ProbeError::Corrupt {
                path: path.to_path_buf(),
                message: format!("DTZ code {plies} at index {s} is not a value"),
            });
        }
        Ok(Dtz::from_plies(wdl, u32::from(plies), rule))
    }

    /// The DTZ of a decided position (`wdl`) on the side to move that its table's DTZ file
    /// leaves out: the best its moves give (a zeroing move's by its child's category, any
    /// other's by its child's DTZ, which the file holds); `None` under [`Access::Cached`]
    /// if a child's answer is not in memory.
    #[allow(clippy::too_many_arguments)]
    fn dtz_by_search(
        &self,
        pos: &Position,
        wdl: Wdl,
        slot: &Slot,
        stored: Material,
        dtz_file: &TableFile,
        holds_all: bool,
        access: Access,
    ) -> Result<Option<Dtz>, ProbeError> {
        let rule = self.rules.move_rule;
        let material = Material::from_board(pos.board());
        let Some(wdl_file) = self.file_with(slot, stored, Metric::Wdl, access)? else {
            return Ok(None);
        };
        let size = slot.index.size();
        let mut best: Option<Dtz> = None;
        let moves = pos.legal_moves();
        // A loss's moves into wins the file may leave out (a win by a zeroing move), each
        // with the plies the file holds for its child (and their slot): the child's, or
        // the fill of a slot left out, which is no shorter than the child's 1 ply (or not
        // a win's value).
        let mut unsure: Vec<(Dtz, u16, u64, &crate::position::Move)> = Vec::new();
        for m in moves.iter() {
            let zeroing = crate::probe::is_zeroing(m);
            let child = pos.play_unchecked(m);
            // A move that does not zero leads to the other side to move of this table,
            // the one the file holds. After a loss's such move the child wins; a win's
            // can be best only into a loss. A child's plies are read from the file.
            let child = if zeroing {
                self.dtz_with(&child, access)?
            } else {
                let s = stored_slot(&slot.index, material, &child)
                    .expect("a legal position of the table's material has an index");
                let child_wdl = if wdl == Wdl::Loss {
                    Wdl::Win
                } else {
                    // the file's value, or a better one by a capture or a promotion
                    match Self::code_at(wdl_file, s, access)? {
                        None => return Ok(None),
                        Some(0) => match self.wdl_below_with(&child, Wdl::Draw, access)? {
                            None => return Ok(None),
                            Some(Wdl::Loss) => Wdl::Loss,
                            Some(_) => continue,
                        },
                        Some(_) => continue,
                    }
                };
                let s = slot.dtz_file_index(s % size);
                match Self::code_at(dtz_file, s, access)? {
                    None => None,
                    Some(plies) if wdl == Wdl::Loss && !holds_all => {
                        let shortest = if plies == crate::format::UNUSED || plies == 0 {
                            1
                        } else {
                            plies
                        };
                        let v = crate::probe::dtz_of_move(
                            false,
                            Dtz::from_plies(Wdl::Win, u32::from(shortest), rule),
                            rule,
                        );
                        unsure.push((v, plies, s, m));
                        continue;
                    }
                    Some(plies) => Some(Self::dtz_of_code(
                        dtz_file.path(),
                        s,
                        child_wdl,
                        plies,
                        rule,
                    )?),
                }
            };
            let Some(child) = child else {
                return Ok(None);
            };
            let v = crate::probe::dtz_of_move(zeroing, child, rule);
            if best.is_none_or(|b| v.rank() > b.rank()) {
                best = Some(v);
            }
        }
        // The loss's best such move, the longest by the plies the file holds: a child
        // that is not a win by a zeroing move has them (and then no move after it in this
        // order is better); one that is wins in 1 ply. So a move or two is looked at, not
        // every child's moves.
        unsure.sort_by_key(|(v, _, _, _)| std::cmp::Reverse(v.rank()));
        for (v, plies, s, m) in unsure {
            let child = pos.play_unchecked(m);
            let (v, held) = match self.wins_by_zeroing(&child, access)? {
                None => return Ok(None),
                Some(true) => {
                    let one = Dtz::from_plies(Wdl::Win, 1, rule);
                    (crate::probe::dtz_of_move(false, one, rule), false)
                }
                Some(false) => {
                    Self::dtz_of_code(dtz_file.path(), s, Wdl::Win, plies, rule)?;
                    (v, true)
                }
            };
            if best.is_none_or(|b| v.rank() > b.rank()) {
                best = Some(v);
            }
            if held {
                break;
            }
        }
        let best = match best {
            Some(best) => best,
            // no move: mated or stalemated
            None if moves.is_empty() => {
                let v = Value::of_ended(pos, self.rules).unwrap_or(Value::Draw);
                Dtz::from_plies(v.wdl(), 0, rule)
            }
            // a win with no move into a loss
            None => Dtz::from_plies(Wdl::Draw, 0, rule),
        };
        if best.category.wdl() != wdl {
            return Err(ProbeError::Corrupt {
                path: dtz_file.path().to_path_buf(),
                message: format!(
                    "the moves of {} give DTZ {best}, but its WDL file says {}",
                    crate::fen::Fen::from_position(pos),
                    wdl.as_str()
                ),
            });
        }
        Ok(Some(best))
    }

    /// The file of `metric` of a table: opened as needed under [`Access::Read`], `None`
    /// under [`Access::Cached`] if it is not open yet.
    fn file_with<'a>(
        &self,
        slot: &'a Slot,
        stored: Material,
        metric: Metric,
        access: Access,
    ) -> Result<Option<&'a TableFile>, ProbeError> {
        match access {
            Access::Read => self.file(slot, stored, metric).map(Some),
            Access::Cached => Ok(match metric {
                Metric::Wdl => slot.wdl.get(),
                Metric::Dtm => slot.dtm.get(),
                Metric::Dtz => slot.dtz.get(),
            }),
        }
    }

    /// The code at slot `s` of `file`; `None` under [`Access::Cached`] if its block is not
    /// in the cache.
    #[inline]
    fn code_at(file: &TableFile, s: u64, access: Access) -> Result<Option<u16>, ProbeError> {
        Ok(match access {
            Access::Read => Some(file.get(s)?),
            Access::Cached => file.get_cached(s)?,
        })
    }

    /// Whether a zeroing move (a capture or a pawn move) of `pos` leads into a loss (under
    /// the move rule: a loss it does not bless) for the opponent; `None` if a child's
    /// answer is not in memory under [`Access::Cached`].
    fn wins_by_zeroing(&self, pos: &Position, access: Access) -> Result<Option<bool>, ProbeError> {
        let mut found = Some(false);
        let mut error = None;
        pos.for_each_zeroing_move(|m| {
            let child = pos.play_unchecked(&m);
            let lost = if self.rules.move_rule == crate::rules::MoveRule::None {
                self.wdl_below_with(&child, Wdl::Draw, access)
                    .map(|w| w.map(|w| w == Wdl::Loss))
            } else {
                self.dtz_with(&child, access)
                    .map(|d| d.map(|d| d.category == crate::value::Category::Loss))
            };
            match lost {
                Ok(Some(false)) => true,
                Ok(answer) => {
                    // a loss found, or an answer not in memory: either ends the search
                    found = answer;
                    false
                }
                Err(e) => {
                    error = Some(e);
                    false
                }
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// Win, draw or loss for the side to move, from the (smaller) WDL file.
    ///
    /// A WDL file may store, for a position whose best capture or promotion achieves its
    /// value, any value no better (the generator's `Generated::wdl_file_values`);
    /// so unless the file says "win", the position's conversions are probed too and the
    /// better result is the answer.
    pub fn wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        self.wdl_below(pos, Wdl::Win)
    }

    /// The WDL of `pos` if it is below `beta`; otherwise some value at least `beta`
    /// (an alpha-beta search over conversions, which stops as soon as the answer is known
    /// to be at least `beta`).
    pub(super) fn wdl_below(&self, pos: &Position, beta: Wdl) -> Result<Wdl, ProbeError> {
        Ok(self
            .wdl_below_with(pos, beta, Access::Read)?
            .expect("Access::Read always answers"))
    }

    /// [`Tablebase::wdl_below`], or `None` under [`Access::Cached`] if a file or block it
    /// needs is not in memory.
    fn wdl_below_with(
        &self,
        pos: &Position,
        beta: Wdl,
        access: Access,
    ) -> Result<Option<Wdl>, ProbeError> {
        if let Some(v) = Value::of_decided(pos, self.rules) {
            return Ok(Some(v.wdl()));
        }
        let (slot, stored, s) = self.locate(pos)?;
        let Some(file) = self.file_with(slot, stored, Metric::Wdl, access)? else {
            return Ok(None);
        };
        let Some(code) = Self::code_at(file, s, access)? else {
            return Ok(None);
        };
        let mut best = match code {
            0 => Wdl::Loss,
            1 => Wdl::Draw,
            2 => Wdl::Win,
            code => {
                return Err(ProbeError::Corrupt {
                    path: file.path().to_path_buf(),
                    message: format!("WDL code {code} at index {s} is not a value"),
                });
            }
        };
        if best >= beta {
            return Ok(Some(best));
        }
        let mut known = true;
        let mut error = None;
        pos.for_each_conversion(|m| {
            // the child's value matters only if it is below the mirror of `best`
            match self.wdl_below_with(&pos.play_unchecked(&m), best.flip(), access) {
                Ok(Some(v)) => {
                    best = best.max(v.flip());
                    best < beta
                }
                Ok(None) => {
                    known = false;
                    false
                }
                Err(e) => {
                    error = Some(e);
                    false
                }
            }
        });
        match error {
            Some(e) => Err(e),
            None => Ok(known.then_some(best)),
        }
    }
}

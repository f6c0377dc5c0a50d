//! The DTZ of a table that starts from its DTM and lowers only what zeroing moves shorten.
//!
//! DTZ obeys the DTM's recurrence with other leaves: a zeroing move counts 1 ply where the
//! DTM counts 1 ply more than its child's distance to the end of the game. So the DTZ of a
//! position is never above its DTM, and most are equal (on KNBvKB, 91 % of the wins and
//! 86 % of the losses): the retrograde of [`super::Run::run`] decides every position anew,
//! where this one starts every position at its DTM and visits only those whose value
//! drops, and their predecessors.
//!
//! The values only ever go down, and every value is at all times at or above the
//! position's DTZ. Pass `d` (from 1 up) visits the positions at `d` that are below their
//! DTM (and were lowered to `d`, so each was marked for `d`):
//! - a loss at `d` lowers each predecessor that wins and stands above `d + 1` to `d + 1`.
//!   A win is lowered only by these pushes, at the pass of its final value (the smallest
//!   loss it reaches comes first), so a win is lowered once, from its DTM to its DTZ.
//! - a win at `d` may have been the longest reply of a predecessor that loses: of each
//!   predecessor that loses and stands at one ply more than this win's DTM, the value is
//!   computed again from its replies (one ply more than the longest; a loss with no reply
//!   that does not zero loses in 1). A loss's value is thus always one ply more than its
//!   longest reply as some earlier reading of its replies found them, each either at its
//!   DTM or final; a reply read at its DTM and lowered later was the longest only if the
//!   loss stands at one ply more than that DTM, which is when it is read again.
//!
//! A loss lowered to `v` is marked for `v` and visited at pass `v` if it still stands
//! there; a loss standing at `v` at pass `v` is final, since each of its replies is at
//! `v - 1` or less, so at its DTZ (every position below the pass under way is). The seed
//! lowers every win with a zeroing move into a loss to 1 and reads the replies of every
//! loss with a zeroing move (whose DTM may come from it).
//!
//! Used where every leaf of a zeroing move counts 1 ply: without the move rule, or with
//! it in the first round of a table none of whose sub-tables has cursed values. It needs
//! the DTM codes beside the DTZ's own array of a byte a slot, and a bit a slot
//! ([`Pending`]) for the positions lowered and not yet visited.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::{
    CHUNK, Cells, Decoder, GenError, MAX_DTZ, Marks, MoveList, NONE, Run, W_LOSS, W_NONE, W_WIN,
    WIN_OPEN, mark, wdl_at,
};
use crate::fen::Fen;
use crate::position::Position;

use super::super::cells::Alphabet;

/// [`Run::starting_from_dtm_pays`] looks at one chunk in this many.
const SAMPLE_EVERY: usize = 16;

/// [`Run::starting_from_dtm_pays`]: starting from the DTM pays where at most one win in
/// this many has its DTM shortened by a zeroing move.
const LOWERED_AT_MOST: u64 = 5;

/// The states of this retrograde: plies up to 252 in a byte, and [`NONE`]; longer values
/// spill.
pub(super) const FROM_DTM_ALPHABET: Alphabet = Alphabet::new(253, &[(NONE, 1)]);

/// A bit a slot: set when the slot is lowered below its DTM, cleared when the pass of its
/// value visits it. A pass reads only the set bits of the chunks marked for it, where it
/// read every slot of them: the lowered slots are spread over nearly every chunk, so the
/// chunks' marks alone had each pass read the whole table.
struct Pending<'p>(&'p [AtomicU64]);

impl Pending<'_> {
    /// Notes that `slot` was lowered to `v`: for the pass of `v`, its chunk and its bit.
    #[inline]
    fn lowered(&self, marks: &[Marks], slot: u64, v: u16) {
        mark(marks, slot, u32::from(v));
        self.0[(slot / 64) as usize].fetch_or(1 << (slot % 64), Ordering::Relaxed);
    }

    /// Calls `visit` on each slot of `run` whose bit is set and for which `at` holds, and
    /// clears their bits; stops at the first error.
    fn take(
        &self,
        run: std::ops::Range<u64>,
        at: impl FnMut(u64) -> bool,
        visit: impl FnMut(u64) -> Result<(), GenError>,
    ) -> Result<(), GenError> {
        super::take_bits(self.0, run, at, visit)
    }
}

/// The plies of a DTM code of a decided slot.
#[inline]
fn dtm_plies(code: u16) -> u16 {
    code - 1
}

impl Run<'_, '_> {
    /// Whether a win at `slot` (not yet given a state) has a zeroing move into a loss.
    fn zeroing_win(
        &self,
        slot: u64,
        decoder: &mut Decoder,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
        st: &Cells,
    ) -> Result<bool, GenError> {
        let g = self.g;
        let seeded = match self.win_without_position(self.conversions, slot, W_WIN) {
            Some(v) => v,
            None => {
                let (turn, i) = g.index.split_slot(slot);
                let board = decoder.decode_legal(&g.index, i, turn);
                let Some(pos) = g.position_of(turn, i, board) else {
                    return Err(GenError::Inconsistent(format!(
                        "DTZ: slot {slot} has a value but names no position"
                    )));
                };
                self.seed(self.conversions, slot, &pos, W_WIN, moves, kids, st)?
            }
        };
        match seeded {
            1 => Ok(true),
            WIN_OPEN => Ok(false),
            v => Err(GenError::Inconsistent(format!(
                "DTZ: a win seeded at {v} from its DTM"
            ))),
        }
    }

    /// Whether starting from the DTM pays: on one chunk in [`SAMPLE_EVERY`], the wins
    /// whose DTM a zeroing move shortens (to 1) are at most one in [`LOWERED_AT_MOST`].
    /// Where more are, the retrograde of [`Run::run`] is faster: such a table wins mostly
    /// by zeroing at once (a pawn's step, a capture), which that retrograde decides in its
    /// first passes, where this one would visit every one of them and read the replies of
    /// each loss that stood one ply above their DTM.
    pub(super) fn starting_from_dtm_pays(&self, dtm: &Cells) -> Result<bool, GenError> {
        let g = self.g;
        let st = Cells::new(0, FROM_DTM_ALPHABET, 0);
        let tally = self
            .chunks
            .par_iter()
            .enumerate()
            .filter(|(k, _)| k % SAMPLE_EVERY == 0)
            .map_init(
                || (Decoder::new(&g.index), MoveList::new(), Vec::new()),
                |(decoder, moves, kids), (_, (_, runs))| {
                    let (mut wins, mut lowered) = (0u64, 0u64);
                    for slot in runs.iter().flat_map(Clone::clone) {
                        if wdl_at(self.wdl, slot) != W_WIN {
                            continue;
                        }
                        wins += 1;
                        if dtm_plies(dtm.load(slot as usize)) > 1
                            && self.zeroing_win(slot, decoder, moves, kids, &st)?
                        {
                            lowered += 1;
                        }
                    }
                    Ok((wins, lowered))
                },
            )
            .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
        Ok(tally.1 * LOWERED_AT_MOST <= tally.0)
    }

    /// The plies of every slot of the slice, from the DTM codes `dtm` (in the same slot
    /// order as the WDL).
    pub(super) fn run_from_dtm(&self, dtm: &Cells) -> Result<Cells, GenError> {
        let g = self.g;
        let total = 2 * g.size();
        if dtm.len() as u64 != total {
            return Err(GenError::Inconsistent(format!(
                "DTZ: {} DTM codes for {total} slots",
                dtm.len()
            )));
        }
        // zeroed (no page touched) but for the slice's slots
        let mut st = Cells::new(total as usize, FROM_DTM_ALPHABET, 0);
        st.reset_ranges(FROM_DTM_ALPHABET, NONE, &g.slice_slots());
        let st = st;
        let marks: Vec<Marks> = (0..total.div_ceil(CHUNK))
            .map(|_| Marks::default())
            .collect();
        let words = super::super::generator::zeroed::<AtomicU64>(total.div_ceil(64) as usize);
        let pending = Pending(&words);
        let slots: u64 = self
            .chunks
            .iter()
            .flat_map(|(_, r)| r)
            .map(|r| r.end - r.start)
            .sum();
        self.max.store(0, Ordering::Relaxed);
        g.progress
            .begin(&format!("{} DTZ seed (from DTM)", g.label()), 2 * slots);
        // The wins first: a win with a zeroing move into a loss goes to 1, any other
        // position starts at its DTM.
        self.chunks.par_iter().for_each_init(
            || {
                (
                    Decoder::new(&g.index),
                    MoveList::new(),
                    Vec::with_capacity(64),
                )
            },
            |(decoder, moves, kids), (_, runs)| {
                if g.failed() || g.progress.cancelled() {
                    return;
                }
                let mut lowered = false;
                for slot in runs.iter().flat_map(Clone::clone) {
                    let w = wdl_at(self.wdl, slot);
                    if w == W_NONE {
                        continue;
                    }
                    let plies = dtm_plies(dtm.load(slot as usize));
                    if w != W_WIN {
                        st.store(slot as usize, plies);
                        continue;
                    }
                    match self.zeroing_win(slot, decoder, moves, kids, &st) {
                        Ok(true) => {
                            self.zeroing_wins[(slot / 64) as usize]
                                .fetch_or(1 << (slot % 64), Ordering::Relaxed);
                            st.store(slot as usize, 1);
                            if plies > 1 {
                                pending.lowered(&marks, slot, 1);
                                lowered = true;
                            }
                        }
                        Ok(false) => st.store(slot as usize, plies),
                        Err(e) => return g.fail(e),
                    }
                }
                if lowered {
                    self.max.fetch_max(1, Ordering::Relaxed);
                }
                g.progress
                    .advance(runs.iter().map(|r| r.end - r.start).sum());
            },
        );
        self.check(g)?;
        // Then the losses with a zeroing move, whose DTM may have come from it.
        self.chunks.par_iter().for_each_init(
            || None,
            |decoder: &mut Option<Decoder>, (_, runs)| {
                if g.failed() || g.progress.cancelled() {
                    return;
                }
                let decoder = decoder.get_or_insert_with(|| Decoder::new(&g.index));
                let mut max = 0u32;
                for slot in runs.iter().flat_map(Clone::clone) {
                    if wdl_at(self.wdl, slot) != W_LOSS {
                        continue;
                    }
                    match self.may_zero(slot, decoder) {
                        Ok(false) => continue,
                        Ok(true) => {}
                        Err(e) => return g.fail(e),
                    }
                    match self.lower_loss(slot, &st, &marks, &pending, decoder) {
                        Ok(Some(v)) => max = max.max(u32::from(v)),
                        Ok(None) => {}
                        Err(e) => return g.fail(e),
                    }
                }
                self.max.fetch_max(max, Ordering::Relaxed);
                g.progress
                    .advance(runs.iter().map(|r| r.end - r.start).sum());
            },
        );
        g.progress.end();
        self.check(g)?;
        let mut d: u32 = 1;
        while d <= self.max.load(Ordering::Relaxed) {
            if d + 1 > MAX_DTZ {
                return Err(GenError::TooLong(g.index.material()));
            }
            let at_d = st.matcher(d as u16);
            self.chunks.par_iter().for_each_init(
                || (Vec::new(), None),
                |(preds, read), (chunk, runs)| {
                    if g.failed() || !marks[*chunk as usize].has(d) {
                        return;
                    }
                    let mut decoder = None;
                    let mut max = 0u32;
                    // a slot at `d` below its DTM was lowered to `d`, so its bit is set
                    let at = |slot: u64| {
                        at_d.at(slot as usize) && u32::from(dtm_plies(dtm.load(slot as usize))) > d
                    };
                    let mut visit = |slot: u64| {
                        let decoder = decoder.get_or_insert_with(|| Decoder::new(&g.index));
                        let read = read.get_or_insert_with(|| Decoder::new(&g.index));
                        let m = self
                            .lowered(slot, d, dtm, &st, &marks, &pending, preds, decoder, read)?;
                        max = max.max(m);
                        Ok(())
                    };
                    for run in runs {
                        if let Err(e) = pending.take(run.clone(), at, &mut visit) {
                            return g.fail(e);
                        }
                    }
                    self.max.fetch_max(max, Ordering::Relaxed);
                },
            );
            self.check(g)?;
            d += 1;
        }
        Ok(st)
    }

    /// Whether the loss at `slot` has a zeroing move: a capture (the generator's
    /// conversions tell) or a pawn's step.
    fn may_zero(&self, slot: u64, decoder: &mut Decoder) -> Result<bool, GenError> {
        let g = self.g;
        let (turn, i) = g.index.split_slot(slot);
        let pawns = g.index.material().side(turn).count(crate::role::Role::Pawn) > 0;
        if let Some(c) = self.conversion(self.conversions, slot) {
            if c != 0 {
                return Ok(true);
            }
            if !pawns {
                return Ok(false);
            }
        }
        let Some(board) = decoder.decode(&g.index, i) else {
            return Err(GenError::Inconsistent(format!(
                "DTZ: slot {slot} holds a value but names no position"
            )));
        };
        let pos = Position::from_board_unchecked(board, turn);
        let mut any = false;
        if pawns {
            pos.for_each_legal_pawn_step(|_| {
                any = true;
                false
            });
        }
        if !any && self.conversions.is_none() {
            let mut moves = MoveList::new();
            pos.legal_moves_into(&mut moves);
            any = moves.iter().any(|m| m.capture.is_some());
        }
        Ok(any)
    }

    /// Reads the replies of the loss at `slot` again and lowers it to one ply more than
    /// the longest that does not zero (1 if none); its new value if it went down.
    fn lower_loss(
        &self,
        slot: u64,
        st: &Cells,
        marks: &[Marks],
        pending: &Pending<'_>,
        decoder: &mut Decoder,
    ) -> Result<Option<u16>, GenError> {
        let mut longest: u16 = 0;
        self.for_each_won_reply(slot, decoder, |k| {
            longest = longest.max(st.load(k as usize) + 1);
            true
        })?;
        let v = longest.max(1);
        let old = st.fetch_min(slot as usize, v);
        if v < old {
            pending.lowered(marks, slot, v);
            return Ok(Some(v));
        }
        Ok(None)
    }

    /// Visits the predecessors of `slot`, lowered to `d` from its DTM: a loss lowers the
    /// wins above `d + 1` to `d + 1`, a win has the losses that stood at one ply more than
    /// its DTM read their replies again. The largest value given.
    #[allow(clippy::too_many_arguments)]
    fn lowered(
        &self,
        slot: u64,
        d: u32,
        dtm: &Cells,
        st: &Cells,
        marks: &[Marks],
        pending: &Pending<'_>,
        preds: &mut Vec<u64>,
        decoder: &mut Decoder,
        read: &mut Decoder,
    ) -> Result<u32, GenError> {
        let g = self.g;
        self.quiet_predecessors_of(slot, preds, decoder)?;
        let mut max = 0;
        if wdl_at(self.wdl, slot) != W_WIN {
            let next = (d + 1) as u16;
            for &p in preds.iter() {
                if wdl_at(self.wdl, p) != W_WIN {
                    return Err(GenError::Inconsistent(format!(
                        "DTZ: {} moves into a loss but does not win",
                        Fen::from_position(&g.used_position_at(p))
                    )));
                }
                if st.load(p as usize) > next && st.fetch_min(p as usize, next) > next {
                    pending.lowered(marks, p, next);
                    max = u32::from(next);
                }
            }
            return Ok(max);
        }
        // the value a loss stood at if this win's DTM was its longest reply
        let was = dtm_plies(dtm.load(slot as usize)) + 1;
        // (`preds` may hold a loss twice: the second reading finds it lowered already, or
        // reads it again for nothing)
        for &p in preds.iter() {
            if wdl_at(self.wdl, p) != W_LOSS || st.load(p as usize) != was {
                continue;
            }
            if let Some(v) = self.lower_loss(p, st, marks, pending, read)? {
                max = max.max(u32::from(v));
            }
        }
        Ok(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabet_holds_every_short_value_and_none() {
        for v in (0..253).chain([NONE]) {
            let c = Cells::new(1, FROM_DTM_ALPHABET, v);
            assert_eq!(c.load(0), v);
            assert_eq!(c.spilled(), 0, "{v}");
        }
        let c = Cells::new(1, FROM_DTM_ALPHABET, 300);
        assert_eq!((c.load(0), c.spilled()), (300, 1));
        const { assert!(super::super::LOSS_OPEN > 253) };
    }
}

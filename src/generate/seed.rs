//! The seed: every position decoded once, its quiet moves counted, its captures and
//! promotions looked up in the smaller tables; mates and stalemates decided.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::decoder::Decoder;
use super::generator::*;
use super::state::*;
use super::{GenError, Generator};
use crate::fen::Fen;
use crate::position::{MoveList, Position};
use crate::role::Piece;
use crate::value::Value;

impl Generator<'_> {
    /// Seeds every slot of the slice; writes the best conversion of each, packed (see
    /// [`Generated::conversions`]), into `conversions` (zero where it is not written: the
    /// other slices' part is not touched).
    pub(super) fn seed(&self, conversions: &mut [u8]) {
        let ranges = self.slice_slots();
        let slots = ranges.iter().map(|r| r.end - r.start).sum();
        self.progress
            .begin(&format!("{} seed", self.label()), slots);
        // Each chunk writes its own part of the packed codes (CHUNK is a multiple of 4):
        // no second copy of them is ever made.
        let max = conversions
            .par_chunks_mut((CHUNK / 4) as usize)
            .enumerate()
            .map_init(
                || (MoveList::new(), Vec::with_capacity(64)),
                |(moves, kids), (chunk, packed)| {
                    let chunk = chunk as u64 * CHUNK..(chunk as u64 + 1) * CHUNK;
                    let mut max = 0;
                    if self.progress.cancelled() {
                        return max;
                    }
                    for r in &ranges {
                        let lo = chunk.start.max(r.start);
                        let hi = chunk.end.min(r.end);
                        if lo < hi {
                            max = max.max(self.seed_run(chunk.start, lo..hi, packed, moves, kids));
                        }
                    }
                    max
                },
            )
            .max()
            .unwrap_or(0);
        self.max_distance.fetch_max(max, Ordering::Relaxed);
        self.progress.end();
    }

    /// Seeds the slots `run` of the chunk that starts at `first` and whose conversions are
    /// `packed`; returns the longest distance given.
    fn seed_run(
        &self,
        first: u64,
        run: std::ops::Range<u64>,
        packed: &mut [u8],
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> u32 {
        let (lo, hi) = (run.start, run.end);
        let mut max = 0;
        let mut decoder = Decoder::new(&self.index);
        for slot in lo..hi {
            let (turn, i) = self.index.split_slot(slot);
            let board = decoder.decode_legal(&self.index, i, turn);
            let pos = self.position_of(turn, i, board);
            let (d, conversion) = self.seed_one(slot, pos, moves, kids);
            if let Some(d) = d {
                max = max.max(d);
            }
            let k = (slot - first) as usize;
            packed[k / 4] |= conversion << (2 * (k % 4));
        }
        self.progress.advance(hi - lo);
        max
    }

    /// Seeds one slot; returns the distance of a (tentative) decided value and the
    /// conversion code of the slot (see [`Generated::conversions`]).
    pub(super) fn seed_one(
        &self,
        slot: u64,
        pos: Option<Position>,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> (Option<u32>, u8) {
        let (d, best_conversion) = self.seed_slot(slot, pos, moves, kids);
        (d, best_conversion.map_or(0, |v| conversion_code(v.wdl())))
    }

    /// Seeds one slot; returns the distance of a (tentative) decided value and the value
    /// of the best conversion, if any.
    pub(super) fn seed_slot(
        &self,
        slot: u64,
        pos: Option<Position>,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> (Option<u32>, Option<Value>) {
        let s = slot as usize;
        let Some(pos) = pos else {
            self.codes.store(s, UNUSED);
            return (None, None);
        };
        // Quiet successors are counted as distinct indices; only where two moves may reach
        // one index (see `successors_may_coincide`) must they be encoded to tell.
        let (quiet, best_conversion) =
            if self.index.successors_may_coincide(pos.board(), pos.turn()) {
                match self.seed_moves_dedup(slot, &pos, moves, kids) {
                    Some(r) => r,
                    None => return (None, None),
                }
            } else {
                // the quiet moves are counted in bulk; only conversions are played
                let mut best_conversion: Option<Value> = None;
                let mut error = None;
                let quiet = pos.count_quiet_and_each_conversion(|m| {
                    match self.sub.value(&pos.play_unchecked(&m)) {
                        Ok(v) => {
                            let v = v.parent();
                            best_conversion = Some(best_conversion.map_or(v, |b| b.max(v)));
                            // nothing wins faster: the quiet moves need no count
                            v != Value::Win(1)
                        }
                        Err(e) => {
                            error = Some(e);
                            false
                        }
                    }
                });
                match (quiet, error) {
                    (Some(quiet), None) => (quiet as usize, best_conversion),
                    (None, None) if best_conversion == Some(Value::Win(1)) => (0, best_conversion),
                    (_, e) => {
                        self.fail(e.unwrap_or_else(|| {
                            GenError::Inconsistent("conversion search stopped".to_string())
                        }));
                        return (None, None);
                    }
                }
            };
        if quiet == 0 && best_conversion.is_none() {
            // mate or stalemate: the rules decide
            let v = Value::of_ended(&pos, self.rules).unwrap_or(Value::Draw);
            if v != Value::Draw {
                self.decide(s, code_of(v));
                return (v.dtm(), None);
            }
            self.codes.store(s, SAVED);
            return (None, None);
        }
        match best_conversion {
            Some(v @ Value::Win(d)) => {
                if d > MAX_DTM {
                    self.fail(GenError::TooLong(self.index.material()));
                    return (None, None);
                }
                self.decide(s, code_of(v));
                (Some(d), best_conversion)
            }
            Some(Value::Draw) => {
                self.codes.store(s, SAVED);
                (None, best_conversion)
            }
            loss => {
                if quiet == 0 {
                    // only conversions, all losing
                    let v = loss.expect("a move exists");
                    if v.dtm().unwrap_or(0) > MAX_DTM {
                        self.fail(GenError::TooLong(self.index.material()));
                        return (None, None);
                    }
                    self.decide(s, code_of(v));
                    (v.dtm(), best_conversion)
                } else if quiet > MAX_OPEN_COUNT {
                    self.fail(GenError::Inconsistent(format!(
                        "{} has {quiet} quiet moves, more than {MAX_OPEN_COUNT}",
                        Fen::from_position(&pos)
                    )));
                    (None, None)
                } else {
                    let state = open_state(quiet as u16, best_conversion.is_some());
                    self.codes.store(s, state);
                    (None, best_conversion)
                }
            }
        }
    }

    /// The quiet successors (distinct indices) and the best conversion of a position
    /// whose moves may reach one index twice; `None` after a failure.
    pub(super) fn seed_moves_dedup(
        &self,
        slot: u64,
        pos: &Position,
        moves: &mut MoveList,
        kids: &mut Vec<u64>,
    ) -> Option<(usize, Option<Value>)> {
        let mut best_conversion: Option<Value> = None;
        kids.clear();
        pos.legal_moves_into(moves);
        let (_, i) = self.index.split_slot(slot);
        let fixed = !self.index.may_be_mirror(i);
        for m in moves.iter() {
            if m.is_conversion() {
                let child = pos.play_unchecked(m);
                let v = match self.sub.value(&child) {
                    Ok(v) => v.parent(),
                    Err(e) => {
                        self.fail(e);
                        return None;
                    }
                };
                best_conversion = Some(best_conversion.map_or(v, |b| b.max(v)));
            } else {
                let piece = Piece {
                    color: pos.turn(),
                    role: m.role,
                };
                match self.slot_after(
                    i,
                    pos.board(),
                    fixed,
                    piece,
                    m.from,
                    m.to,
                    !pos.turn(),
                    || pos.play_unchecked(m),
                ) {
                    Ok(k) => kids.push(k),
                    Err(child) => {
                        self.fail(GenError::Inconsistent(format!(
                            "no index for {} after {m} in {}",
                            Fen::from_position(&child),
                            Fen::from_position(pos)
                        )));
                        return None;
                    }
                }
            }
        }
        kids.sort_unstable();
        kids.dedup();
        Some((kids.len(), best_conversion))
    }
}

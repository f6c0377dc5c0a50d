//! Loss passes that pull: once fewer positions are open than lost, each open position
//! looks for a quiet move into a loss instead (see [`super::LossPasses`]).

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::decoder::Decoder;
use super::generator::*;
use super::state::*;
use super::{GenError, Generator, LossPasses};
use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::fen::Fen;
use crate::position::Position;
use crate::role::{Piece, Role};

/// A loss pass pulls only when its losses are at least this share of a side's slots
/// (`size / PULL_MIN_SHARE`): fewer are pushed at less than the cost of a pull's scan.
pub(super) const PULL_MIN_SHARE: u64 = 256;

/// A loss pass pulls when fewer than `PULL_RATIO_NUM / PULL_RATIO_DEN` positions are
/// open for each loss. Measured on 2 cores, wall time: on KRNvKQ (ply 6) a push took
/// 290 ns a loss and a pull 110 ns an open position; on KNBvKB (plies 30-32) 140 and
/// 104 ns. A push's cost grows with the moves of the winning side, a pull's falls with
/// the share of open positions that win at once.
pub(super) const PULL_RATIO_NUM: u64 = 3;

/// See [`PULL_RATIO_NUM`].
pub(super) const PULL_RATIO_DEN: u64 = 2;

impl Generator<'_> {
    /// Whether the loss pass `n` should find the wins of `turn` at `n + 1` by pulling
    /// ([`Generator::pull_wins`]) rather than by pushing from each loss of the other side.
    ///
    /// A push visits every quiet predecessor of every loss (about as many as a position
    /// has moves), most of them long decided once a table is half done; a pull visits
    /// the moves of every position of `turn` still open, and stops at the first that
    /// reaches a loss. So a pull pays once fewer positions are open than are lost at `n`.
    pub(super) fn pull_pays(&self, turn: Color, n: u32) -> bool {
        match self.loss_passes {
            LossPasses::Push => return false,
            LossPasses::Pull => return n > 0,
            LossPasses::Auto => {}
        }
        if n == 0 {
            return false;
        }
        let size = self.slice.end - self.slice.start;
        let want = (n + 1) as u16;
        let win = (n + 2) as u16;
        let losses = self.slice_slots_of(!turn);
        // The losses at `n` are in the blocks listed or marked for `n`: first a bound,
        // every slot of those blocks. A push of a few losses costs less than the scans.
        let frontier_blocks = &self.frontier_blocks[(n % 2) as usize];
        let bit = 1u64 << (n % 64);
        let marks = self.marks_for(n);
        let has_losses = |block: u64| {
            marks[block as usize].load(Ordering::Relaxed) & bit != 0
                || has_bit(frontier_blocks, block)
        };
        let blocks = |slots: &std::ops::Range<u64>| {
            slots.start >> MARK_SHIFT..slots.end.div_ceil(1 << MARK_SHIFT)
        };
        let bound = blocks(&losses)
            .into_par_iter()
            .filter(|&b| has_losses(b))
            .count() as u64;
        if bound << MARK_SHIFT < size / PULL_MIN_SHARE {
            return false;
        }
        // Both counts from a sample of the blocks (one in 64, spread by a hash): a scan
        // of every block, twice each loss pass, would cost more than a pull saves.
        let sampled = |b: u64| b.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58 == 0;
        let count = |slots: std::ops::Range<u64>,
                     keep: &(dyn Fn(u64) -> bool + Sync),
                     f: &(dyn Fn(u16) -> bool + Sync)| {
            blocks(&slots)
                .into_par_iter()
                .filter(|&b| sampled(b) && keep(b))
                .map(|b| {
                    let r = block_slots(b, &slots);
                    self.codes.count_in(r.start as usize..r.end as usize, f)
                })
                .sum::<u64>()
        };
        let lost = count(losses, &has_losses, &|c| c == want);
        if lost == 0 {
            return false;
        }
        let open = count(
            self.slice_slots_of(turn),
            &|b| has_bit(&self.pull_blocks, b),
            &|c| may_win_at(c, win),
        );
        open * PULL_RATIO_DEN < PULL_RATIO_NUM * lost
    }

    /// The pull half of loss pass `n`: every position of `turn` that is not yet known to
    /// win by `n + 1` wins in `n + 1` if one of its quiet moves reaches a position lost
    /// at `n`. The same wins a push from those losses finds (a move that leaves the
    /// mover's shah in check reaches an unused slot, never a loss).
    pub(super) fn pull_wins(&self, turn: Color, n: u32) {
        /// Blocks a task.
        const GROUP: u64 = 16;
        let slots = self.slice_slots_of(turn);
        let base = self.index.slot(turn, 0);
        let first = slots.start >> MARK_SHIFT;
        let blocks = slots.end.div_ceil(1 << MARK_SHIFT) - first;
        let win = (n + 2) as u16;
        self.progress.begin(
            &format!("{} ply {n} (pull)", self.label()),
            blocks << MARK_SHIFT,
        );
        (0..blocks.div_ceil(GROUP)).into_par_iter().for_each_init(
            || Decoder::new(&self.index),
            |decoder, group| {
                if self.progress.cancelled() {
                    return;
                }
                let mut won = false;
                let group_blocks =
                    first + group * GROUP..(first + (group + 1) * GROUP).min(first + blocks);
                for b in group_blocks.clone() {
                    if !has_bit(&self.pull_blocks, b) {
                        continue;
                    }
                    let r = block_slots(b, &slots);
                    let mut open = false;
                    for slot in r.clone() {
                        if !may_win_at(self.codes.load(slot as usize), win) {
                            continue;
                        }
                        let i = slot - base;
                        let Some(board) = decoder.decode(&self.index, i) else {
                            return self.fail(GenError::Inconsistent(format!(
                                "slot {slot} holds a state but names no position"
                            )));
                        };
                        match self.reaches_loss(i, &board, turn, n) {
                            Ok(false) => open = true,
                            Ok(true) => {
                                // this thread alone writes the slots of its blocks
                                self.codes.store(slot as usize, win);
                                self.list(slot, n + 1);
                                won = true;
                            }
                            Err(next) => {
                                return self.fail(GenError::Inconsistent(format!(
                                    "no index for successor {} of slot {slot}",
                                    Fen::from_position(&next)
                                )));
                            }
                        }
                    }
                    // a block shared with the other side's slots keeps its bit
                    if !open && r.end - r.start == 1 << MARK_SHIFT {
                        self.pull_blocks[(b / 64) as usize]
                            .fetch_and(!(1 << (b % 64)), Ordering::Relaxed);
                    }
                }
                if won {
                    self.reach(n + 1);
                }
                self.progress
                    .advance((group_blocks.end - group_blocks.start) << MARK_SHIFT);
            },
        );
        self.progress.end();
    }

    /// Whether a quiet move of `turn` on `board` (index `i`) reaches a position lost at
    /// `n`. Moves are not checked for legality: one that leaves the mover's shah in check
    /// reaches a slot no position uses. On an inconsistency (a successor without an
    /// index), returns that successor.
    #[inline]
    pub(super) fn reaches_loss(
        &self,
        i: u64,
        board: &Board,
        turn: Color,
        n: u32,
    ) -> Result<bool, Position> {
        let loss = (n + 1) as u16;
        let fixed = !self.index.may_be_mirror(i);
        let occ = board.occupied();
        let empty = !occ;
        let forward = turn.fold(1, -1);
        let last_rank = Bitboard::rank(turn.fold(7, 0));
        let other_shah = board
            .shah_of(!turn)
            .map_or(Bitboard::EMPTY, attacks::shah_attacks);
        for from in board.by_color(turn) {
            let role = board.role_at(from).expect("occupied");
            let targets = match role {
                Role::Shah => attacks::shah_attacks(from) & empty & !other_shah,
                Role::Pawn => {
                    from.offset(0, forward)
                        .map_or(Bitboard::EMPTY, Bitboard::from_square)
                        & empty
                        & !last_rank
                }
                _ => attacks::attacks(role, turn, from, occ) & empty,
            };
            let piece = Piece { color: turn, role };
            for to in targets {
                let k = self.slot_after(i, board, fixed, piece, from, to, !turn, || {
                    let mut after = *board;
                    after.move_piece(turn, role, from, to, role);
                    Position::placement(after, !turn)
                })?;
                if self.codes.load(k as usize) == loss {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

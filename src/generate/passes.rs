//! The ply passes: from the positions decided at distance `n`, their quiet predecessors
//! (by un-moves) win or lose at `n + 1`.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::decoder::{Decoder, rook_checks};
use super::generator::*;
use super::state::*;
use super::{GenError, Generator};
use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::fen::Fen;
use crate::position::{MoveList, Position};
use crate::retro::UnMoveKinds;
use crate::role::{Piece, Role};
use crate::value::Value;

impl Generator<'_> {
    pub(super) fn retrograde(&self) {
        /// Blocks a task.
        const GROUP: u64 = 16;
        let blocks = self.marks[0].len() as u64;
        let total = 2 * self.size();
        let mut n: u32 = 0;
        loop {
            let max = self.max_distance.load(Ordering::Relaxed);
            if n > max || self.failed() || self.progress.cancelled() {
                break;
            }
            let want = (n + 1) as u16;
            let bit = 1u64 << (n % 64);
            let marks = self.marks_for(n);
            let frontier = &self.frontier[(n % 2) as usize];
            let frontier_blocks = &self.frontier_blocks[(n % 2) as usize];
            // by the side to move in the positions that win at n + 1
            let pull = if n % 2 == 0 {
                [Color::White, Color::Black].map(|c| self.pull_pays(c, n))
            } else {
                [false; 2]
            };
            // by the side to move in the losses: whose predecessors are pulled, not pushed
            let size = self.size();
            let skip = |slot: u64| pull[usize::from(slot < size)];
            let wanted = self.codes.matcher(want);
            self.progress
                .begin(&format!("{} ply {n}", self.label()), total);
            (0..blocks.div_ceil(GROUP)).into_par_iter().for_each_init(
                || {
                    (
                        Vec::with_capacity(64),
                        MoveList::new(),
                        Decoder::new(&self.index),
                        Vec::with_capacity(1 << MARK_SHIFT),
                    )
                },
                |(preds, moves, decoder, found), group| {
                    let first = group * GROUP;
                    let end = (first + GROUP).min(blocks);
                    if self.progress.cancelled() {
                        return;
                    }
                    for block in first..end {
                        let marked = marks[block as usize].load(Ordering::Relaxed) & bit != 0;
                        let listed = has_bit(frontier_blocks, block);
                        if !marked && !listed {
                            continue;
                        }
                        let start = block << MARK_SHIFT;
                        let stop = (start + (1 << MARK_SHIFT)).min(total);
                        // The slots at `n` of the block, in order: in a word marked for
                        // `n` every slot is read (listed or not; a scan not broken by the
                        // propagation's random accesses streams from memory), in another
                        // only the listed ones.
                        found.clear();
                        let words = (start / 64) as usize..stop.div_ceil(64) as usize;
                        let word_marks = &self.word_marks[words.clone()];
                        for ((w, listed_bits), word_mark) in
                            words.clone().zip(&frontier[words]).zip(word_marks)
                        {
                            if marked && word_mark.load(Ordering::Relaxed) & bit != 0 {
                                if listed {
                                    listed_bits.store(0, Ordering::Relaxed);
                                }
                                let lo = w * 64;
                                let hi = (lo + 64).min(stop as usize);
                                // branch-free: the loads of the word overlap
                                let mut bits = 0u64;
                                for (k, i) in (lo..hi).enumerate() {
                                    bits |= u64::from(wanted.at(i)) << k;
                                }
                                while bits != 0 {
                                    found.push((lo + bits.trailing_zeros() as usize) as u64);
                                    bits &= bits - 1;
                                }
                            } else if listed {
                                let mut bits = listed_bits.load(Ordering::Relaxed);
                                if bits == 0 {
                                    continue;
                                }
                                listed_bits.store(0, Ordering::Relaxed);
                                while bits != 0 {
                                    let slot = w as u64 * 64 + u64::from(bits.trailing_zeros());
                                    bits &= bits - 1;
                                    debug_assert_eq!(self.codes.load(slot as usize), want);
                                    found.push(slot);
                                }
                            }
                        }
                        for &slot in found.iter() {
                            if !skip(slot) {
                                self.propagate(slot, n, preds, moves, decoder);
                            }
                        }
                    }
                    self.progress.advance((end - first) << MARK_SHIFT);
                },
            );
            // every slot listed for `n` is done (its bit cleared above)
            frontier_blocks
                .iter()
                .for_each(|w| w.store(0, Ordering::Relaxed));
            self.progress.end();
            for c in [Color::White, Color::Black] {
                if pull[c.index()] {
                    self.pull_wins(c, n);
                }
            }
            n += 1;
        }
    }

    /// Pushes the slot of every quiet predecessor of `pos` (index `i`) to `preds`: the
    /// positions [`Position::for_each_unmove`] gives for [`UnMoveKinds::QUIET`], one entry
    /// per un-move. Un-moves of pieces other than the shah are checked for legality and
    /// indexed by arithmetic on `i`, without building the position before. On an
    /// inconsistency (a predecessor without an index), returns that predecessor. Without
    /// `pawns`, un-moves of pawns are left out (DTZ: a pawn move is a zeroing move).
    pub(super) fn quiet_predecessors(
        &self,
        pos: &Position,
        i: u64,
        preds: &mut Vec<u64>,
        pawns: bool,
    ) -> Result<(), Position> {
        let start = preds.len();
        let mover = !pos.turn();
        if self.index.may_be_mirror(i) {
            let mut bad = None;
            pos.for_each_unmove(UnMoveKinds::QUIET, |um, prev| {
                if !pawns && um.role == Role::Pawn {
                    return;
                }
                match self.slot_of(&prev) {
                    Some(p) => preds.push(p),
                    None => bad = Some(prev),
                }
            });
            return bad.map_or(Ok(()), Err);
        }
        let board = pos.board();
        let occ = board.occupied();
        let empty = !occ;
        // the side to move now, which must not be in check before the un-move
        let victim = pos.shah(pos.turn());
        let rooks = board.by_piece(Piece {
            color: mover,
            role: Role::Rook,
        });
        // pieces that check the victim now by a leap: no un-move of another piece
        // removes that check
        let leapers = board.attackers_to(victim, mover, occ) & !rooks;
        let back = mover.fold(-1, 1);
        let first_rank = Bitboard::rank(mover.fold(0, 7));
        for to in board.by_color(mover) {
            let role = board.role_at(to).expect("occupied");
            if role == Role::Shah || (!pawns && role == Role::Pawn) || leapers.without(to).any() {
                continue;
            }
            // a leaper must not have checked the victim from where it comes
            let checking = if role == Role::Rook {
                Bitboard::EMPTY
            } else {
                attacks::attacks(role, !mover, victim, occ)
            };
            let from_set = if role == Role::Pawn {
                to.offset(0, back)
                    .map_or(Bitboard::EMPTY, Bitboard::from_square)
                    & empty
                    & !first_rank
            } else {
                attacks::attacks(role, mover, to, occ) & empty
            } & !checking;
            let piece = Piece { color: mover, role };
            let other_rooks = rooks.without(to);
            for from in from_set {
                let occ_before = occ.without(to).with(from);
                if (role == Role::Rook && attacks::rook_attacks(from, occ_before).contains(victim))
                    || rook_checks(other_rooks, victim, occ_before)
                {
                    continue;
                }
                let k = self.index.index_after_move(i, board, piece, to, from);
                preds.push(self.index.slot(mover, k));
            }
        }
        // A shah un-move leaves every leaper where it is (no check by one may remain), and
        // the shah, apart from the victim, gives no check: only a rook's line, opened or
        // closed by the shah, can.
        let shah = pos.shah(mover);
        let shah_from = if leapers.any() {
            Bitboard::EMPTY
        } else {
            attacks::shah_attacks(shah) & empty
        };
        for from in shah_from {
            if from.distance(victim) <= 1
                || rook_checks(rooks, victim, occ.without(shah).with(from))
            {
                continue;
            }
            if let Some(k) = self.shah_move_index(i, board, mover, from) {
                preds.push(self.index.slot(mover, k));
                continue;
            }
            let mut before = *board;
            before.move_piece(mover, Role::Shah, shah, from, Role::Shah);
            debug_assert!(!before.attackers_to(victim, mover, before.occupied()).any());
            let prev = Position::from_board_unchecked(before, mover);
            match self.slot_of(&prev) {
                Some(p) => preds.push(p),
                None => return Err(prev),
            }
        }
        #[cfg(debug_assertions)]
        if super::cross_checked(i) {
            let mut fast = preds[start..].to_vec();
            let mut slow = Vec::new();
            pos.for_each_unmove(UnMoveKinds::QUIET, |um, prev| {
                if pawns || um.role != Role::Pawn {
                    slow.push(self.slot_of(&prev).expect("a predecessor has an index"));
                }
            });
            fast.sort_unstable();
            slow.sort_unstable();
            debug_assert_eq!(fast, slow, "predecessors of {}", Fen::from_position(pos));
        }
        let _ = start;
        Ok(())
    }

    /// Spreads the value of a position decided at distance `n` to its predecessors.
    ///
    /// Out of line, as it was before the pass loop grew: that loop stays small, and
    /// profiles show the two apart.
    #[inline(never)]
    pub(super) fn propagate(
        &self,
        slot: u64,
        n: u32,
        preds: &mut Vec<u64>,
        moves: &mut MoveList,
        decoder: &mut Decoder,
    ) {
        let (turn, i) = self.index.split_slot(slot);
        let Some(board) = decoder.decode(&self.index, i) else {
            return self.fail(GenError::Inconsistent(format!(
                "slot {slot} holds a value but names no position"
            )));
        };
        let pos = Position::from_board_unchecked(board, turn);
        let mover = !pos.turn();
        preds.clear();
        if let Err(prev) = self.quiet_predecessors(&pos, i, preds, true) {
            self.fail(GenError::Inconsistent(format!(
                "no index for predecessor {} of {}",
                Fen::from_position(&prev),
                Fen::from_position(&pos)
            )));
            return;
        }
        // Two un-moves reach one index only where two moves could (the same geometry).
        if self.index.successors_may_coincide(pos.board(), mover) {
            preds.sort_unstable();
            preds.dedup();
        }
        if n % 2 == 0 {
            // a loss at n: every predecessor wins in n + 1 at most
            if n + 1 > MAX_DTM {
                self.fail(GenError::TooLong(self.index.material()));
                return;
            }
            let win = (n + 2) as u16;
            // Plain loads first: their cache misses overlap, where a locked
            // compare-exchange would wait for each in turn.
            let mut seen = [0u16; 64];
            for (k, &p) in preds.iter().enumerate().take(seen.len()) {
                seen[k] = self.codes.load(p as usize);
            }
            for (k, &p) in preds.iter().enumerate() {
                let mut cur = seen
                    .get(k)
                    .copied()
                    .unwrap_or_else(|| self.codes.load(p as usize));
                // exactly one thread decides it, and lists it for the next ply
                while may_win_at(cur, win) {
                    match self.codes.compare_exchange(p as usize, cur, win) {
                        Ok(_) => {
                            self.list(p, n + 1);
                            break;
                        }
                        Err(now) => cur = now,
                    }
                }
            }
            self.reach(n + 1);
        } else {
            // a win at n: one more successor of each predecessor is lost for it (plain
            // loads first, as above)
            let mut open = [false; 64];
            for (k, &p) in preds.iter().enumerate().take(open.len()) {
                open[k] = is_open(self.codes.load(p as usize));
            }
            for (k, &p) in preds.iter().enumerate() {
                // In a pass of wins a state leaves "open" only when the thread that counts
                // its last successor settles it, and this successor is not counted yet:
                // an open state seen here is still open.
                let is_open_now = open
                    .get(k)
                    .copied()
                    .unwrap_or_else(|| is_open(self.codes.load(p as usize)));
                if !is_open_now {
                    continue;
                }
                let old = self.codes.fetch_sub(p as usize, 2);
                debug_assert!(is_open(old) && old >= open_state(1, false), "state {old}");
                if old >> 1 == open_state(1, false) >> 1 {
                    self.settle_loss(p, n, old & 1 == 1, moves);
                }
            }
        }
    }

    /// A position all of whose quiet successors now win for the opponent, the last at
    /// distance `n` (wins are spread in order of distance): it is lost, as late as its
    /// best successor allows. Only its conversions can resist longer than `n`, and the
    /// seed recorded whether it has any (`has_conversion`).
    pub(super) fn settle_loss(
        &self,
        slot: u64,
        n: u32,
        has_conversion: bool,
        moves: &mut MoveList,
    ) {
        let mut worst: u32 = n;
        if has_conversion {
            let pos = self.used_position_at(slot);
            let mut error = None;
            pos.for_each_conversion(|m| match self.sub.value(&pos.play_unchecked(&m)) {
                Ok(Value::Win(d)) => {
                    worst = worst.max(d);
                    true
                }
                Ok(v) => {
                    error = Some(GenError::Inconsistent(format!(
                        "{} counted as lost but conversion {m} gives {v}",
                        Fen::from_position(&pos)
                    )));
                    false
                }
                Err(e) => {
                    error = Some(e);
                    false
                }
            });
            if let Some(e) = error {
                return self.fail(e);
            }
        }
        #[cfg(debug_assertions)]
        if super::cross_checked(slot) {
            self.check_loss(slot, n, worst, moves);
        }
        let _ = moves;
        let loss = worst + 1;
        if loss > MAX_DTM {
            return self.fail(GenError::TooLong(self.index.material()));
        }
        if loss == n + 1 {
            self.codes.store(slot as usize, code_of(Value::Loss(loss)));
            self.list(slot, loss);
        } else {
            self.decide(slot as usize, code_of(Value::Loss(loss)));
        }
        self.reach(loss);
    }

    /// Checks a loss that [`Generator::settle_loss`] found by forward generation (debug
    /// builds): every move wins for the opponent, quiet ones by `n` at most, and the
    /// longest win is `worst`.
    #[cfg(debug_assertions)]
    pub(super) fn check_loss(&self, slot: u64, n: u32, worst: u32, moves: &mut MoveList) {
        let pos = self.used_position_at(slot);
        let (_, i) = self.index.split_slot(slot);
        let fixed = !self.index.may_be_mirror(i);
        pos.legal_moves_into(moves);
        let mut longest = n;
        let mut quiet_at_n = false;
        for m in moves.iter() {
            let v = if m.is_conversion() {
                self.sub
                    .value(&pos.play_unchecked(m))
                    .expect("a sub-table read once reads again")
            } else {
                let piece = Piece {
                    color: pos.turn(),
                    role: m.role,
                };
                let k = self
                    .slot_after(
                        i,
                        pos.board(),
                        fixed,
                        piece,
                        m.from,
                        m.to,
                        !pos.turn(),
                        || pos.play_unchecked(m),
                    )
                    .expect("a successor has an index");
                let code = self.codes.load(k as usize);
                assert!(is_decided(code), "{pos:?}: {m} undecided");
                let v = Value::from_dtm_code(code);
                quiet_at_n |= v == Value::Win(n);
                v
            };
            match v {
                Value::Win(d) if d <= n || m.is_conversion() => longest = longest.max(d),
                _ => panic!("{pos:?} counted as lost at ply {n} but {m} gives {v}"),
            }
        }
        assert!(quiet_at_n, "{pos:?}: no quiet successor wins at {n}");
        assert_eq!(longest, worst, "{pos:?}");
    }
}

//! The proof search: two mutually recursive questions about a position, answered with
//! the tables as exact leaves and the transposition table as memory.
//!
//! - [`Search::win_within`]: can the side to move force the end of the game, in its
//!   favour, within `d` plies?
//! - [`Search::lose_within`]: does the side to move lose within `d` plies whatever it
//!   plays?
//!
//! A win takes an odd number of plies and a loss an even number (the game ends after the
//! winner's move), so the depths are rounded to the parity that can answer yes: the
//! transposition table then meets the same question more often.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::material::Material;
use crate::position::{Move, MoveList, Position};
use crate::probe::{MAX_MEN, ProbeError, Tablebase};
use crate::role::Role;
use crate::rules::{RuleSet, Stalemate};
use crate::square::Square;
use crate::value::Value;

use super::tt::{Bounds, TransTable};

/// Why a search did not finish.
#[derive(Debug)]
pub(crate) enum Interrupt {
    /// The time limit passed or the caller asked to stop.
    Stopped,

    /// A table could not be read.
    Probe(ProbeError),
}

impl From<ProbeError> for Interrupt {
    fn from(e: ProbeError) -> Interrupt {
        Interrupt::Probe(e)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Interrupt>;

/// What every thread of one solve shares.
pub(crate) struct Shared<'a> {
    pub tb: &'a Tablebase,
    pub rules: RuleSet,
    pub tt: &'a TransTable,
    pub stop: &'a AtomicBool,
    pub deadline: Option<Instant>,
    pub nodes: &'a AtomicU64,
    pub table_hits: &'a AtomicU64,
}

/// Nodes counted locally between looks at the clock and the stop flag.
const CHECK_EVERY: u64 = 4096;

/// One thread's search over the shared state.
pub(crate) struct Search<'s, 'a> {
    shared: &'s Shared<'a>,
    nodes: u64,
    table_hits: u64,
    /// Nodes counted by this search and passed on to the shared count.
    flushed: u64,
    /// For each depth, the last defence that held there (as a move hint): a
    /// defence that refuted one attack often refutes its siblings too.
    killers: [u16; 256],
    /// Move lists and move orders of the nodes on the current path, reused: a node
    /// takes one and gives it back, so no node allocates or clears 2 KB of arrays.
    scratch: Vec<Box<Scratch>>,
}

/// A node's move list and the order to try its moves in.
struct Scratch {
    moves: MoveList,
    order: [u32; 256],
    /// The transposition-table keys of the moves' children.
    keys: [u64; 256],
}

impl Drop for Search<'_, '_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The hash of a position (board and side to move) for the transposition table.
#[inline]
pub(crate) fn position_key(pos: &Position) -> u64 {
    #[inline]
    fn mix(mut x: u64) -> u64 {
        // the finaliser of SplitMix64
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
    let board = pos.board();
    let mut h = if pos.turn() == Color::White {
        0x9e37_79b9_7f4a_7c15
    } else {
        0x6a09_e667_f3bc_c909
    };
    h = mix(h ^ board.by_color(Color::White).0);
    for (k, role) in Role::ALL.into_iter().enumerate() {
        h = mix(h ^ board.by_role(role).0.rotate_left(k as u32 * 9 + 5));
    }
    // 0 marks an empty entry's key in no way, but keep keys away from it anyway
    h | 1
}

/// How a position with no legal move ends, for its side to move.
pub(crate) fn no_move_value(pos: &Position, rules: RuleSet) -> Value {
    if pos.is_check() || rules.stalemate == Stalemate::Loss {
        Value::Loss(0)
    } else {
        Value::Draw
    }
}

impl<'s, 'a> Search<'s, 'a> {
    pub fn new(shared: &'s Shared<'a>) -> Search<'s, 'a> {
        Search {
            shared,
            nodes: 0,
            table_hits: 0,
            flushed: 0,
            killers: [0; 256],
            scratch: Vec::new(),
        }
    }

    pub fn rules(&self) -> RuleSet {
        self.shared.rules
    }

    /// Whether `pos` is answered by a table (not by the rules of a bare side).
    pub fn is_table_position(&self, pos: &Position) -> bool {
        !pos.is_bare(Color::White)
            && !pos.is_bare(Color::Black)
            && pos.board().occupied().count() <= MAX_MEN
            && self.shared.tb.has_table(Material::from_board(pos.board()))
    }

    fn take_scratch(&mut self) -> Box<Scratch> {
        self.scratch.pop().unwrap_or_else(|| {
            Box::new(Scratch {
                moves: MoveList::new(),
                order: [0; 256],
                keys: [0; 256],
            })
        })
    }

    /// The nodes this search has counted.
    pub fn searched(&mut self) -> u64 {
        self.flush();
        self.flushed
    }

    fn flush(&mut self) {
        self.flushed += self.nodes;
        self.shared.nodes.fetch_add(self.nodes, Ordering::Relaxed);
        self.shared
            .table_hits
            .fetch_add(self.table_hits, Ordering::Relaxed);
        self.nodes = 0;
        self.table_hits = 0;
    }

    #[inline]
    fn count_node(&mut self) -> Result<()> {
        self.nodes += 1;
        if self.nodes % CHECK_EVERY == 0 {
            self.flush();
            if self.shared.stop.load(Ordering::Relaxed) {
                return Err(Interrupt::Stopped);
            }
            if self.shared.deadline.is_some_and(|d| Instant::now() >= d) {
                self.shared.stop.store(true, Ordering::Relaxed);
                return Err(Interrupt::Stopped);
            }
        }
        Ok(())
    }

    /// The exact value of a position the search need not look into: a side is bare (the
    /// rules decide), or its material has a table. `None` otherwise (a finished game of
    /// a material without table is found by the search, which has its moves).
    #[inline]
    pub fn leaf(&mut self, pos: &Position) -> Result<Option<Value>> {
        let rules = self.shared.rules;
        if pos.is_bare(Color::White) || pos.is_bare(Color::Black) {
            return Ok(Value::of_decided(pos, rules));
        }
        if pos.board().occupied().count() <= MAX_MEN {
            let material = Material::from_board(pos.board());
            if self.shared.tb.has_table(material) {
                self.table_hits += 1;
                return Ok(Some(self.shared.tb.value(pos)?));
            }
        }
        Ok(None)
    }

    /// Whether the side to move forces a win within `d` plies.
    pub fn win_within(&mut self, pos: &Position, d: u32) -> Result<bool> {
        self.win_within_keyed(pos, d, None)
    }

    /// [`Search::win_within`], given the position's key if it is known already.
    fn win_within_keyed(&mut self, pos: &Position, d: u32, key: Option<u64>) -> Result<bool> {
        if let Some(v) = self.leaf(pos)? {
            return Ok(matches!(v, Value::Win(k) if k <= d));
        }
        // a win after at least one move takes an odd number of plies
        let d = if d % 2 == 0 { d.saturating_sub(1) } else { d };
        if d == 0 {
            return Ok(false);
        }
        self.count_node()?;
        if d == 1 {
            // cheaper to answer again than to remember
            let mut scratch = self.take_scratch();
            let found = self.any_ends_at_once(pos, &mut scratch.moves);
            self.scratch.push(scratch);
            return found;
        }
        let key = key.unwrap_or_else(|| position_key(pos));
        let known = self.shared.tt.get(key);
        if u32::from(known.win_within) <= d || u32::from(known.no_win_below) > d {
            return Ok(u32::from(known.win_within) <= d);
        }
        let d8 = d.min(254) as u8;
        // the move that won here before (at a longer bound), before generating the rest
        let hinted = legal_move_of_hint(pos, known.hint);
        if let Some((_, child)) = hinted {
            if self.lose_within(&child, d - 1)? {
                self.shared.tt.add(
                    key,
                    Bounds {
                        win_within: d8,
                        ..Bounds::UNKNOWN
                    },
                );
                return Ok(true);
            }
        }
        let mut scratch = self.take_scratch();
        pos.legal_moves_into(&mut scratch.moves);
        let found =
            self.any_move_wins(pos, &mut scratch, d, hinted.map_or(0, |(m, _)| hint_of(&m)));
        self.scratch.push(scratch);
        let found = found?;
        let facts = match found {
            Some(m) => Bounds {
                win_within: d8,
                hint: hint_of(&m),
                ..Bounds::UNKNOWN
            },
            None => Bounds {
                no_win_below: d8 + 1,
                ..Bounds::UNKNOWN
            },
        };
        self.shared.tt.add(key, facts);
        Ok(found.is_some())
    }

    /// Whether a move ends the game at once in the mover's favour. A quiet move can
    /// only do it by check (mate) or by stalemate; when the opponent keeps a move
    /// whatever we play ([`free_leapers`]), only captures, promotions and checks are
    /// generated, and a capture or promotion that gives no check and leaves one of those
    /// leapers ends nothing (`moves` is scratch space).
    fn any_ends_at_once(&mut self, pos: &Position, moves: &mut MoveList) -> Result<bool> {
        let free = free_leapers(pos);
        if free.more_than_one() {
            // a move that gives no check leaves one of them free to move (it takes at
            // most one), and the opponent with more than one man: it ends nothing
            pos.checks_into(moves);
        } else if free.any() {
            pos.checks_and_conversions_into(moves);
        } else {
            pos.legal_moves_into(moves);
        }
        // the opponent's shah keeps a flight after most moves: found without its moves
        let flights = opponent_flights(pos);
        for m in moves.iter() {
            let child = pos.play_unchecked(m);
            if m.is_conversion() {
                if free.without(m.to).any() && !child.is_check() {
                    continue;
                }
                // (a capture of the last man ends the game even so)
                if !child.is_bare(child.turn()) && keeps_a_flight(&child, m, flights) {
                    continue;
                }
                if self.lose_within(&child, 0)? {
                    return Ok(true);
                }
            } else if !keeps_a_flight(&child, m, flights)
                && !child.has_legal_move()
                && no_move_value(&child, self.shared.rules) == Value::Loss(0)
            {
                // a quiet move keeps the material, which has no table: no leaf here
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A move of `moves` that leads to a loss within `d - 1` plies for the opponent, if
    /// one does, trying checks first and then, deeper in the tree, the moves that leave
    /// the opponent fewest replies. The move of hint `skip` was tried already.
    fn any_move_wins(
        &mut self,
        pos: &Position,
        scratch: &mut Scratch,
        d: u32,
        skip: u16,
    ) -> Result<Option<Move>> {
        let Scratch { moves, order, keys } = scratch;
        // order key << 8 | move number
        let mut n = 0;
        for (i, m) in moves.iter().enumerate() {
            if hint_of(m) == skip {
                continue;
            }
            let child = pos.play_unchecked(m);
            // its entry is read when it is searched: start loading it now
            keys[i] = position_key(&child);
            self.shared.tt.prefetch(keys[i]);
            if m.is_conversion() {
                if let Some(v) = self.leaf(&child)? {
                    if matches!(v, Value::Loss(k) if k < d) {
                        return Ok(Some(*m));
                    }
                    continue; // decided, and not a win for us within d
                }
            }
            let check = u32::from(!child.is_check());
            let key = if d >= 5 {
                let replies = child.count_legal_moves() as u32;
                if replies == 0 {
                    if no_move_value(&child, self.shared.rules) == Value::Loss(0) {
                        return Ok(Some(*m));
                    }
                    continue;
                }
                (check << 16) | replies.min(0xffff)
            } else {
                check
            };
            order[n] = (key << 8) | i as u32;
            n += 1;
        }
        let order = &mut order[..n];
        order.sort_unstable();
        for &k in order.iter() {
            let i = (k & 0xff) as usize;
            let m = &moves[i];
            if self.lose_within_keyed(&pos.play_unchecked(m), d - 1, Some(keys[i]))? {
                return Ok(Some(*m));
            }
        }
        Ok(None)
    }

    /// Whether the side to move loses within `d` plies whatever it plays.
    pub fn lose_within(&mut self, pos: &Position, d: u32) -> Result<bool> {
        self.lose_within_keyed(pos, d, None)
    }

    /// [`Search::lose_within`], given the position's key if it is known already.
    fn lose_within_keyed(&mut self, pos: &Position, d: u32, key: Option<u64>) -> Result<bool> {
        if let Some(v) = self.leaf(pos)? {
            return Ok(matches!(v, Value::Loss(k) if k <= d));
        }
        // a loss takes an even number of plies
        let d = d & !1;
        if d == 0 {
            self.count_node()?;
            // lost now, or not within 0 plies
            return Ok(!has_legal_move_fast(pos)
                && no_move_value(pos, self.shared.rules) == Value::Loss(0));
        }
        let key = key.unwrap_or_else(|| position_key(pos));
        let known = self.shared.tt.get(key);
        if u32::from(known.loss_within) <= d {
            return Ok(true);
        }
        if u32::from(known.no_loss_below) > d {
            return Ok(false);
        }
        self.count_node()?;
        let d8 = d.min(254) as u8;
        // Near the leaves, defences that held before are tried before generating the
        // rest: the last one that held at this depth (the killer), then the one that
        // held here at a shorter bound (the table's hint; trying it first cost more
        // nodes). Most nodes of a refutation end there. Deeper, where a refutation
        // still to prove is big, every defence is generated first: one the table already
        // knows to hold ends the node at once, and checks and captures are tried
        // before the hints (see `every_move_loses`).
        let generate_first = d >= GENERATE_FIRST_FROM;
        let pre_tries = if generate_first {
            [0, 0]
        } else {
            [self.killers[d as usize], known.hint]
        };
        let mut tried = [0u16; 2];
        for (i, hint) in pre_tries.into_iter().enumerate() {
            if hint == 0 || tried.contains(&hint) {
                continue;
            }
            let Some((_, child)) = legal_move_of_hint(pos, hint) else {
                continue;
            };
            if !self.win_within(&child, d - 1)? {
                self.killers[d as usize] = hint;
                self.shared.tt.add(
                    key,
                    Bounds {
                        no_loss_below: d8 + 1,
                        hint,
                        ..Bounds::UNKNOWN
                    },
                );
                return Ok(false);
            }
            tried[i] = hint;
        }
        let mut scratch = self.take_scratch();
        pos.legal_moves_into(&mut scratch.moves);
        if scratch.moves.is_empty() {
            self.scratch.push(scratch);
            return Ok(no_move_value(pos, self.shared.rules) == Value::Loss(0));
        }
        let hints = generate_first.then_some([self.killers[d as usize], known.hint]);
        let held = self.every_move_loses(pos, &mut scratch, d, tried, hints);
        self.scratch.push(scratch);
        let held = held?;
        let facts = match held {
            None => Bounds {
                loss_within: d8,
                ..Bounds::UNKNOWN
            },
            Some(m) => {
                self.killers[d as usize] = hint_of(&m);
                Bounds {
                    no_loss_below: d8 + 1,
                    hint: hint_of(&m),
                    ..Bounds::UNKNOWN
                }
            }
        };
        self.shared.tt.add(key, facts);
        Ok(held.is_none())
    }

    /// A defence among `moves` after which the opponent does not win within `d - 1`
    /// plies, or `None` if every one loses. A defence the transposition table knows to
    /// hold is taken at once. Checks come first (a check leaves the attacker few
    /// answers), then captures (often into a table, answered at once), then shah moves,
    /// then the rest; the moves of hints `tried` were tried already, and lose.
    ///
    /// With `hints` (the killer and the table's hint, not tried yet) the order puts
    /// what shrinks the attacker's men before what held elsewhere: checks first, then
    /// captures, each by the worth of the man taken (most first) and by the worth of
    /// the man taking (least first: the shah, which cannot be taken back, before a
    /// pawn), and only then the two hints and the rest. The attacker then has fewer
    /// men and moves at every node of the refutation still to prove, which shrinks it
    /// exponentially: Dilaram's legacy took 144 M nodes with the hints first and 33 M
    /// with this order; the other problems of the tests together (the mansubat and the
    /// 116 self-play mates) 7.40 M and 6.17 M.
    fn every_move_loses(
        &mut self,
        pos: &Position,
        scratch: &mut Scratch,
        d: u32,
        tried: [u16; 2],
        hints: Option<[u16; 2]>,
    ) -> Result<Option<Move>> {
        let Scratch { moves, order, keys } = scratch;
        let mut n = 0;
        let theirs = pos.board().by_color(!pos.turn());
        if d > 2 {
            // the children's entries are read below: start loading them all at once
            for (m, key) in moves.iter().zip(keys.iter_mut()) {
                *key = position_key(&pos.play_unchecked(m));
                self.shared.tt.prefetch(*key);
            }
        }
        for (i, m) in moves.iter().enumerate() {
            if tried.contains(&hint_of(m)) {
                continue;
            }
            if m.is_conversion() {
                if let Some(v) = self.leaf(&pos.play_unchecked(m))? {
                    if !matches!(v, Value::Win(k) if k < d) {
                        return Ok(Some(*m));
                    }
                    continue;
                }
            }
            if d > 2 {
                // what the table knows of the child (mates in one it does not keep)
                let known = self.shared.tt.get(keys[i]);
                if u32::from(known.no_win_below) >= d {
                    return Ok(Some(*m));
                }
                if u32::from(known.win_within) < d {
                    continue;
                }
            }
            // a check leaves the attacker few answers: the cheapest refutation to prove
            let check = pos.play_unchecked(m).is_check();
            let mut key = (u32::from(!check) << 2)
                | (u32::from(!capture_or_promotion(m, theirs)) << 1)
                | shah_first(m);
            if let Some([killer, hint]) = hints {
                let h = hint_of(m);
                let known = if h == killer {
                    0
                } else if h == hint {
                    1
                } else {
                    2
                };
                key |= (known << 3)
                    | (mover_worth(m) << 5)
                    | ((MOST_WORTH - taken_worth(m)) << 8)
                    | (u32::from(!check) << 11);
            }
            order[n] = (key << 8) | i as u32;
            n += 1;
        }
        let order = &mut order[..n];
        order.sort_unstable();
        for &k in order.iter() {
            let i = (k & 0xff) as usize;
            let m = &moves[i];
            let key = (d > 2).then_some(keys[i]);
            if !self.win_within_keyed(&pos.play_unchecked(m), d - 1, key)? {
                return Ok(Some(*m));
            }
        }
        Ok(None)
    }
}

/// The bound from which the defender generates its moves before trying the hints (the
/// killer and the table's hint); below it, generating costs more than it saves.
const GENERATE_FIRST_FROM: u32 = 4;

/// The worth of the man a move takes, for ordering the defences that take the
/// attacker's men: a rook, then a knight (the mating leaper), then a ferz or an alfil,
/// then a pawn; 0 for a move that takes nothing.
fn taken_worth(m: &Move) -> u32 {
    m.capture.map_or(0, role_worth)
}

/// The worth of the man that moves, for taking with the least valuable man first.
fn mover_worth(m: &Move) -> u32 {
    role_worth(m.role)
}

/// A man's worth for ordering captures; the shah's is the least, since a capture by
/// the shah can never be answered by taking it back.
fn role_worth(role: Role) -> u32 {
    match role {
        Role::Pawn => 1,
        Role::Ferz | Role::Alfil => 2,
        Role::Knight => 3,
        Role::Rook => 4,
        Role::Shah => 0,
    }
}

/// The largest [`role_worth`] of a man that can be taken.
const MOST_WORTH: u32 = 4;

/// The hint of a move: `1 + from * 64 + to` (0 is no hint).
fn hint_of(m: &Move) -> u16 {
    1 + (m.from.index() as u16) * 64 + m.to.index() as u16
}

/// The legal move of `pos` from and to the squares of `hint`, if there is one, and the
/// position after it.
fn legal_move_of_hint(pos: &Position, hint: u16) -> Option<(Move, Position)> {
    if hint == 0 {
        return None;
    }
    let from = Square::new(u32::from((hint - 1) / 64));
    let to = Square::new(u32::from((hint - 1) % 64));
    let us = pos.turn();
    let board = pos.board();
    let piece = board.piece_at(from)?;
    let (ours, theirs, occ) = (board.by_color(us), board.by_color(!us), board.occupied());
    if piece.color != us || ours.contains(to) {
        return None;
    }
    let role = piece.role;
    let reachable = if role == Role::Pawn {
        let push = from.offset(0, us.fold(1, -1));
        (push == Some(to) && !occ.contains(to))
            || (attacks::pawn_attacks(us, from).contains(to) && theirs.contains(to))
    } else {
        attacks::attacks(role, us, from, occ).contains(to)
    };
    if !reachable {
        return None;
    }
    let m = Move {
        role,
        from,
        to,
        capture: if theirs.contains(to) {
            board.role_at(to)
        } else {
            None
        },
        promotion: role == Role::Pawn && to.rank() == us.fold(7, 0),
    };
    // legal if our shah is not attacked afterwards
    let after = pos.play_unchecked(&m);
    let b = after.board();
    b.attackers_to(after.shah(us), !us, b.occupied())
        .is_empty()
        .then_some((m, after))
}

/// The leapers (knights, ferzes, alfils) of the opponent of the side to move that keep
/// it a legal move after any move of ours that gives no check: off its shah's rank and
/// file (so no rook can pin them), with a square to go to that its own men do not hold.
pub(crate) fn free_leapers(pos: &Position) -> Bitboard {
    let them = !pos.turn();
    let board = pos.board();
    let own = board.by_color(them);
    let lines = attacks::rook_attacks(pos.shah(them), Bitboard::EMPTY);
    let mut free = Bitboard::EMPTY;
    for role in [Role::Knight, Role::Ferz, Role::Alfil] {
        for sq in board.by_role(role) & own & !lines {
            if (attacks::attacks(role, them, sq, board.occupied()) & !own).any() {
                free.insert(sq);
            }
        }
    }
    free
}

/// The squares next to the opponent's shah that it could step to now: not held by its
/// own men and attacked by none of ours (its shah taken off the board, so that it does
/// not shield itself from a rook).
fn opponent_flights(pos: &Position) -> Bitboard {
    let board = pos.board();
    let shah = pos.shah(!pos.turn());
    let occ = board.occupied().without(shah);
    let mut flights = Bitboard::EMPTY;
    for sq in attacks::shah_attacks(shah) & !board.by_color(!pos.turn()) {
        if board.attackers_to(sq, pos.turn(), occ).is_empty() {
            flights.insert(sq);
        }
    }
    flights
}

/// Whether after our move `m`, which led to `child`, the opponent's shah still has one
/// of `flights` (its flights before the move, [`opponent_flights`]), so that it has a
/// legal move. Only the man moved (from its new square) and our rooks (through the
/// square it left) can attack a square anew; the square moved to is not counted.
fn keeps_a_flight(child: &Position, m: &Move, flights: Bitboard) -> bool {
    let us = !child.turn();
    let board = child.board();
    let occ = board.occupied().without(child.shah(child.turn()));
    let role = if m.promotion { Role::Ferz } else { m.role };
    let hit = attacks::attacks(role, us, m.to, occ);
    let rooks = board.by_role(Role::Rook) & board.by_color(us);
    (flights.without(m.to) & !hit)
        .into_iter()
        .any(|f| (attacks::rook_attacks(f, occ) & rooks).is_empty())
}

/// Whether the side to move has a legal move: [`Position::has_legal_move`], but first a
/// look for a flight of the shah (the usual answer to a check) without generating moves.
pub(crate) fn has_legal_move_fast(pos: &Position) -> bool {
    let us = pos.turn();
    let board = pos.board();
    let shah = pos.shah(us);
    let occ = board.occupied().without(shah);
    for to in attacks::shah_attacks(shah) & !board.by_color(us) {
        if board.attackers_to(to, !us, occ).is_empty() {
            return true;
        }
    }
    pos.has_legal_move()
}

fn capture_or_promotion(m: &Move, theirs: Bitboard) -> bool {
    m.promotion || theirs.contains(m.to)
}

/// Shah moves first among quiet defences: running away is the commonest escape.
fn shah_first(m: &Move) -> u32 {
    u32::from(m.role != Role::Shah)
}

//! Positions: an unvalidated [`Setup`], a validated [`Position`], moves and the game end.

use std::fmt;

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::role::{Piece, Role};
use crate::rules::{BareKing, EndReason, Outcome, RuleSet, Stalemate};
use crate::square::Square;

/// Most men one side may have in a position (a full army).
pub const MAX_MEN_PER_SIDE: u32 = 16;
/// Most pawns one side may have.
pub const MAX_PAWNS_PER_SIDE: u32 = 8;

/// A position that is not necessarily legal: what a FEN describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Setup {
    pub board: Board,
    pub turn: Color,
    /// Plies since the last capture or pawn move (kept for FEN round trips; no rule uses it).
    pub halfmoves: u32,
    /// Move number, starting at 1.
    pub fullmoves: u32,
}

impl Setup {
    /// An empty board, White to move.
    #[must_use]
    pub fn empty() -> Setup {
        Setup {
            board: Board::empty(),
            turn: Color::White,
            halfmoves: 0,
            fullmoves: 1,
        }
    }
}

/// Why a setup is not a legal position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PositionError {
    /// A side has no shah.
    MissingShah(Color),
    /// A side has more than one shah.
    TooManyShahs(Color),
    /// The two shahs stand on adjacent squares.
    AdjacentShahs,
    /// The side that is not to move is in check.
    OppositeCheck,
    /// A pawn stands on the first or last rank.
    PawnOnBackRank(Square),
    /// A side has more than 16 men or more than 8 pawns.
    TooManyPieces(Color),
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::MissingShah(c) => {
                write!(
                    f,
                    "illegal position: {c} has no shah (need exactly one a side)"
                )
            }
            PositionError::TooManyShahs(c) => write!(
                f,
                "illegal position: {c} has more than one shah (need exactly one a side)"
            ),
            PositionError::AdjacentShahs => {
                f.write_str("illegal position: the two shahs stand on adjacent squares")
            }
            PositionError::OppositeCheck => {
                f.write_str("illegal position: the side not to move is in check")
            }
            PositionError::PawnOnBackRank(sq) => write!(
                f,
                "illegal position: pawn on {sq}, on the first or last rank (pawns promote on the last rank and never stand on the first)"
            ),
            PositionError::TooManyPieces(c) => write!(
                f,
                "illegal position: {c} has too many pieces (at most {MAX_MEN_PER_SIDE} men and {MAX_PAWNS_PER_SIDE} pawns a side)"
            ),
        }
    }
}

impl std::error::Error for PositionError {}

/// A move. Promotion is always to a ferz, so a flag says all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The role of the moving piece (before promotion).
    pub role: Role,
    pub from: Square,
    pub to: Square,
    /// The role of the captured piece, if any.
    pub capture: Option<Role>,
    /// A pawn reaching the last rank, becoming a ferz.
    pub promotion: bool,
}

impl Move {
    /// UCI notation: `e2e3`, and `e7e8q` for a promotion (`q`, the ferz letter).
    #[must_use]
    pub fn to_uci(&self) -> String {
        // By hand rather than through `Display`: probes write one per legal move.
        let mut uci = String::with_capacity(5);
        for square in [self.from, self.to] {
            uci.push(char::from(b'a' + square.file() as u8));
            uci.push(char::from(b'1' + square.rank() as u8));
        }
        if self.promotion {
            uci.push('q');
        }
        uci
    }

    /// Whether the move captures or promotes, leading to another material.
    #[must_use]
    pub const fn is_conversion(&self) -> bool {
        self.capture.is_some() || self.promotion
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if self.promotion {
            f.write_str("q")?;
        }
        Ok(())
    }
}

/// A list of moves without allocation (no legal position has more than 256 moves).
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; 256],
    len: usize,
}

impl MoveList {
    #[must_use]
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move {
                role: Role::Pawn,
                from: Square::new(0),
                to: Square::new(0),
                capture: None,
                promotion: false,
            }; 256],
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, m: Move) {
        self.moves[self.len] = m;
        self.len += 1;
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A move that is not legal in the position it was asked of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayError {
    pub uci: String,
    pub fen: String,
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move {} in {}", self.uci, self.fen)
    }
}

impl std::error::Error for PlayError {}

/// The constraints on moves of pieces other than the shah (see
/// `Position::non_shah_context`).
#[derive(Clone, Copy)]
struct NonShahContext {
    /// Squares a piece other than the shah may move to: anywhere not our own, or in check
    /// the checker and the squares between it and our shah.
    target: Bitboard,
    /// Our pieces pinned to our shah.
    pinned: Bitboard,
}

impl NonShahContext {
    /// Where a piece of `role` (not the shah) on `from` may go, before pins.
    #[inline]
    fn destinations(
        &self,
        role: Role,
        us: Color,
        from: Square,
        occ: Bitboard,
        ours: Bitboard,
        theirs: Bitboard,
    ) -> Bitboard {
        let to = match role {
            Role::Pawn => {
                // one step forward onto an empty square (a pawn never stands on its last
                // rank, so the step exists), or a diagonal capture
                let push = Bitboard::from_square(from);
                let push = match us {
                    Color::White => Bitboard(push.0 << 8),
                    Color::Black => Bitboard(push.0 >> 8),
                };
                (push & !occ) | (attacks::pawn_attacks(us, from) & theirs)
            }
            _ => attacks::attacks(role, us, from, occ) & !ours,
        };
        to & self.target
    }
}

/// A legal shatranj position: one shah a side, shahs not adjacent, the side not to move
/// not in check, no pawn on its first or last rank.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    board: Board,
    turn: Color,
}

impl Position {
    /// The validated position of a setup, or the first reason it is illegal.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        Position::from_board(setup.board, setup.turn)
    }

    /// The validated position of a board and a side to move.
    pub fn from_board(board: Board, turn: Color) -> Result<Position, PositionError> {
        for color in Color::ALL {
            let shahs = board.by_piece(Piece {
                color,
                role: Role::Shah,
            });
            if shahs.is_empty() {
                return Err(PositionError::MissingShah(color));
            }
            if shahs.more_than_one() {
                return Err(PositionError::TooManyShahs(color));
            }
            let pawns = board.by_piece(Piece {
                color,
                role: Role::Pawn,
            });
            if board.count(color) > MAX_MEN_PER_SIDE || pawns.count() > MAX_PAWNS_PER_SIDE {
                return Err(PositionError::TooManyPieces(color));
            }
        }
        if let Some(sq) =
            (board.by_role(Role::Pawn) & (Bitboard::rank(0) | Bitboard::rank(7))).first()
        {
            return Err(PositionError::PawnOnBackRank(sq));
        }
        let pos = Position { board, turn };
        let (ws, bs) = (pos.shah(Color::White), pos.shah(Color::Black));
        if ws.distance(bs) <= 1 {
            return Err(PositionError::AdjacentShahs);
        }
        if board
            .attackers_to(pos.shah(!turn), turn, board.occupied())
            .any()
        {
            return Err(PositionError::OppositeCheck);
        }
        Ok(pos)
    }

    /// A position trusted to be legal (the generator's index guarantees it).
    #[must_use]
    pub(crate) fn from_board_unchecked(board: Board, turn: Color) -> Position {
        debug_assert!(Position::from_board(board, turn).is_ok(), "{board:?}");
        Position { board, turn }
    }

    /// A placement that may be illegal (the side not to move in check), to be indexed
    /// only: the generator's forward moves skip the legality test, since an illegal
    /// position's slot holds no value.
    #[must_use]
    pub(crate) fn placement(board: Board, turn: Color) -> Position {
        Position { board, turn }
    }

    /// The same position as an unvalidated setup.
    #[must_use]
    pub fn to_setup(&self) -> Setup {
        Setup {
            board: self.board,
            turn: self.turn,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    #[inline]
    #[must_use]
    pub fn board(&self) -> &Board {
        &self.board
    }

    #[inline]
    #[must_use]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The square of `color`'s shah.
    #[inline]
    #[must_use]
    pub fn shah(&self, color: Color) -> Square {
        self.board
            .by_piece(Piece {
                color,
                role: Role::Shah,
            })
            .first()
            .expect("a legal position has both shahs")
    }

    /// The enemy pieces giving check to the side to move.
    #[inline]
    #[must_use]
    pub fn checkers(&self) -> Bitboard {
        self.board
            .attackers_to(self.shah(self.turn), !self.turn, self.board.occupied())
    }

    #[inline]
    #[must_use]
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }

    /// Whether `color` has nothing left but its shah.
    #[inline]
    #[must_use]
    pub fn is_bare(&self, color: Color) -> bool {
        !self.board.by_color(color).more_than_one()
    }

    /// The position with ranks flipped and colours swapped, same game value.
    #[must_use]
    pub fn swap_colors(&self) -> Position {
        Position {
            board: self.board.swap_colors(),
            turn: !self.turn,
        }
    }

    /// Pieces of the side to move pinned to their shah (only a rook can pin).
    #[inline]
    fn pinned(&self, shah: Square) -> Bitboard {
        let us = self.turn;
        let snipers = attacks::rook_attacks(shah, Bitboard::EMPTY)
            & self.board.by_role(Role::Rook)
            & self.board.by_color(!us);
        let mut pinned = Bitboard::EMPTY;
        for sniper in snipers {
            let b = attacks::between(shah, sniper) & self.board.occupied();
            if !b.more_than_one() {
                pinned |= b & self.board.by_color(us);
            }
        }
        pinned
    }

    /// Every legal move of the side to move, appended to `list` (which is cleared first).
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        list.clear();
        self.gen_legal(|m| {
            list.push(m);
            true
        });
    }

    /// Every legal move of the side to move.
    #[must_use]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// Whether the side to move has any legal move.
    #[must_use]
    pub fn has_legal_move(&self) -> bool {
        let mut any = false;
        self.gen_legal(|_| {
            any = true;
            false
        });
        any
    }

    /// Number of legal moves, counted without building them.
    #[must_use]
    pub fn count_legal_moves(&self) -> u64 {
        self.count_moves(false)
    }

    /// Number of legal quiet moves (neither captures nor promotions: the moves that stay
    /// within the material), counted without building them.
    #[must_use]
    pub fn count_quiet_moves(&self) -> u64 {
        self.count_moves(true)
    }

    /// The squares the opponent attacks once our shah has left its square (where our
    /// shah may not go).
    #[inline]
    fn danger(&self, shah: Square) -> Bitboard {
        let them = !self.turn;
        let board = &self.board;
        let occ = board.occupied().without(shah);
        let theirs = board.by_color(them);
        let mut danger = attacks::shah_attacks(self.shah(them));
        let of = |role: Role| theirs & board.by_role(role);
        for from in of(Role::Rook) {
            danger |= attacks::rook_attacks(from, occ);
        }
        for from in of(Role::Ferz) {
            danger |= attacks::ferz_attacks(from);
        }
        for from in of(Role::Alfil) {
            danger |= attacks::alfil_attacks(from);
        }
        for from in of(Role::Knight) {
            danger |= attacks::knight_attacks(from);
        }
        for from in of(Role::Pawn) {
            danger |= attacks::pawn_attacks(them, from);
        }
        danger
    }

    /// The number of legal quiet moves (see [`Position::count_quiet_moves`]), calling `f`
    /// on each legal capture and promotion (see [`Position::for_each_conversion`]) until
    /// it returns false; the count is `None` if stopped. The generator's seed: the moves
    /// within the material are only counted, the others are played.
    #[inline]
    pub fn count_quiet_and_each_conversion(&self, f: impl FnMut(Move) -> bool) -> Option<u64> {
        let shah = self.shah(self.turn);
        let danger = self.danger(shah);
        let ctx = self.non_shah_context(shah);
        let theirs = self.board.by_color(!self.turn);
        if !self.gen_legal_with(shah, danger, ctx, |_, _| theirs, f) {
            return None;
        }
        Some(self.count_with(shah, danger, ctx, true))
    }

    /// Number of legal moves, or of quiet ones only.
    #[inline]
    fn count_moves(&self, quiet: bool) -> u64 {
        let shah = self.shah(self.turn);
        self.count_with(shah, self.danger(shah), self.non_shah_context(shah), quiet)
    }

    /// [`Position::count_moves`] given our shah's square, its danger map and the context
    /// of the other pieces' moves.
    #[inline]
    fn count_with(
        &self,
        shah: Square,
        danger: Bitboard,
        ctx: Option<NonShahContext>,
        quiet: bool,
    ) -> u64 {
        let us = self.turn;
        let them = !us;
        let board = &self.board;
        let ours = board.by_color(us);
        let theirs = board.by_color(them);
        let occ = board.occupied();
        // quiet moves go to empty squares, and pawns not to their last rank
        let (allowed, pawn_allowed) = if quiet {
            (!occ, !occ & !Bitboard::rank(us.fold(7, 0)))
        } else {
            (Bitboard::FULL, Bitboard::FULL)
        };

        let mut n = u64::from((attacks::shah_attacks(shah) & !ours & !danger & allowed).count());
        let Some(ctx) = ctx else {
            return n;
        };
        // unpinned pawns in bulk, by shifting the whole set
        let pawns = ours & board.by_role(Role::Pawn);
        let free = (pawns & !ctx.pinned).0;
        let (not_a, not_h) = (!Bitboard::file(0).0, !Bitboard::file(7).0);
        let (push, left, right) = match us {
            Color::White => (free << 8, (free & not_a) << 7, (free & not_h) << 9),
            Color::Black => (free >> 8, (free & not_a) >> 9, (free & not_h) >> 7),
        };
        // (two pawns may capture on one square: count the left and right sets apart)
        n += u64::from((Bitboard(push) & !occ & ctx.target & pawn_allowed).count());
        if !quiet {
            n += u64::from(
                (Bitboard(left) & theirs & ctx.target).count()
                    + (Bitboard(right) & theirs & ctx.target).count(),
            );
        }
        for from in pawns & ctx.pinned {
            let to_set = ctx.destinations(Role::Pawn, us, from, occ, ours, theirs)
                & attacks::line(shah, from)
                & pawn_allowed;
            n += u64::from(to_set.count());
        }
        for role in [Role::Knight, Role::Alfil, Role::Ferz, Role::Rook] {
            for from in ours & board.by_role(role) {
                let mut to_set = ctx.destinations(role, us, from, occ, ours, theirs) & allowed;
                if ctx.pinned.contains(from) {
                    to_set &= attacks::line(shah, from);
                }
                n += u64::from(to_set.count());
            }
        }
        n
    }

    /// What moves of pieces other than the shah must respect: the squares that answer a
    /// check (or all squares not our own) and the pinned pieces. `None` in double check.
    #[inline]
    fn non_shah_context(&self, shah: Square) -> Option<NonShahContext> {
        let board = &self.board;
        let them = !self.turn;
        let checkers = board.attackers_to(shah, them, board.occupied());
        let target = match checkers.single_square() {
            _ if checkers.more_than_one() => return None,
            Some(checker) => checkers | attacks::between(shah, checker),
            None => !board.by_color(self.turn),
        };
        Some(NonShahContext {
            target,
            pinned: self.pinned(shah),
        })
    }

    /// Calls `f` on each legal move until it returns false. Returns false if stopped.
    #[inline]
    pub fn for_each_legal_move(&self, f: impl FnMut(Move) -> bool) -> bool {
        self.gen_legal(f)
    }

    /// Calls `f` on each legal step of a pawn that neither captures nor promotes (the one
    /// pawn move that stays within the material) until it returns false. Returns false if
    /// stopped.
    #[inline]
    pub fn for_each_legal_pawn_step(&self, mut f: impl FnMut(Move) -> bool) -> bool {
        let pawns = self.board.by_piece(Piece {
            color: self.turn,
            role: Role::Pawn,
        });
        if !pawns.any() {
            return true;
        }
        let empty = !self.board.occupied();
        self.gen_legal_split(empty, Bitboard::EMPTY, |m| {
            m.role != Role::Pawn || m.promotion || m.capture.is_some() || f(m)
        })
    }

    /// Calls `f` on each legal zeroing move (a capture or a pawn move: the moves DTZ
    /// counts to) until it returns false. Returns false if stopped. Cheaper than every
    /// move, filtered: the quiet moves of the other men are never made.
    #[inline]
    pub fn for_each_zeroing_move(&self, f: impl FnMut(Move) -> bool) -> bool {
        self.gen_legal_split(Bitboard::FULL, self.board.by_color(!self.turn), f)
    }

    /// [`Position::gen_legal_with`] from our shah, the moves of a pawn to `pawn_to` (and
    /// its promotions) and of any other man to `other_to` only.
    #[inline]
    fn gen_legal_split(
        &self,
        pawn_to: Bitboard,
        other_to: Bitboard,
        f: impl FnMut(Move) -> bool,
    ) -> bool {
        let shah = self.shah(self.turn);
        self.gen_legal_with(
            shah,
            self.danger(shah),
            self.non_shah_context(shah),
            |role, _| {
                if role == Role::Pawn {
                    pawn_to
                } else {
                    other_to
                }
            },
            f,
        )
    }

    /// Calls `f` on each legal capture and promotion (the moves that leave the material)
    /// until it returns false. Returns false if stopped.
    #[inline]
    pub fn for_each_conversion(&self, f: impl FnMut(Move) -> bool) -> bool {
        self.gen_legal_only(self.board.by_color(!self.turn), f)
    }

    /// Every legal move that captures, promotes or gives check (directly, or by
    /// uncovering a rook's line), appended to `list` (which is cleared first): the only
    /// moves that can end the game at once, short of stalemate. The problem solver's
    /// last ply: cheaper than generating every move and playing each to look for check.
    pub fn checks_and_conversions_into(&self, list: &mut MoveList) {
        self.checks_into_with(list, true);
    }

    /// Every legal move that gives check (directly, or by uncovering a rook's line), and
    /// the promotions, appended to `list` (which is cleared first): the only moves that
    /// can mate. The problem solver's last ply when no capture can end the game.
    pub fn checks_into(&self, list: &mut MoveList) {
        self.checks_into_with(list, false);
    }

    /// [`Position::checks_and_conversions_into`], or without the captures that give no
    /// check ([`Position::checks_into`]).
    #[inline]
    fn checks_into_with(&self, list: &mut MoveList, captures: bool) {
        list.clear();
        let (us, board) = (self.turn, &self.board);
        let (ours, theirs, occ) = (board.by_color(us), board.by_color(!us), board.occupied());
        let target = self.shah(!us);
        // our men standing alone between one of our rooks and their shah: moving one off
        // that line gives check
        let mut uncovering = Bitboard::EMPTY;
        for rook in
            attacks::rook_attacks(target, Bitboard::EMPTY) & ours & board.by_role(Role::Rook)
        {
            let between = attacks::between(target, rook) & occ;
            if !between.more_than_one() {
                uncovering |= between & ours;
            }
        }
        // the squares from which a man of each role attacks their shah (a shah gives no
        // check itself: shahs never stand side by side; promotions are added for pawns)
        let mut checking = [Bitboard::EMPTY; 6];
        checking[Role::Pawn.index()] = attacks::pawn_attacks(!us, target);
        for role in [Role::Knight, Role::Alfil, Role::Ferz, Role::Rook] {
            checking[role.index()] = attacks::attacks(role, us, target, occ);
        }
        let mask = |role: Role, from: Square| {
            let off_line = if uncovering.contains(from) {
                !attacks::line(target, from)
            } else {
                Bitboard::EMPTY
            };
            let taken = if captures { theirs } else { Bitboard::EMPTY };
            taken | checking[role.index()] | off_line
        };
        let shah = self.shah(us);
        let danger = self.danger(shah);
        self.gen_legal_with(shah, danger, self.non_shah_context(shah), mask, |m| {
            list.push(m);
            true
        });
    }

    /// Calls `f` on each legal move until it returns false. Returns false if stopped.
    #[inline]
    fn gen_legal(&self, f: impl FnMut(Move) -> bool) -> bool {
        self.gen_legal_only(Bitboard::FULL, f)
    }

    /// Like [`Position::gen_legal`], for the moves to a square of `to_mask` and the
    /// promotions only.
    #[inline]
    fn gen_legal_only(&self, to_mask: Bitboard, f: impl FnMut(Move) -> bool) -> bool {
        let shah = self.shah(self.turn);
        let danger = self.danger(shah);
        self.gen_legal_with(shah, danger, self.non_shah_context(shah), |_, _| to_mask, f)
    }

    /// [`Position::gen_legal_only`] given our shah's square, its danger map and the
    /// context of the other pieces' moves, with the squares allowed to the man of a role
    /// on a square given by `to_mask` (pawns may promote anyway).
    #[inline]
    fn gen_legal_with(
        &self,
        shah: Square,
        danger: Bitboard,
        ctx: Option<NonShahContext>,
        to_mask: impl Fn(Role, Square) -> Bitboard,
        mut f: impl FnMut(Move) -> bool,
    ) -> bool {
        let us = self.turn;
        let them = !us;
        let board = &self.board;
        let ours = board.by_color(us);
        let theirs = board.by_color(them);
        let occ = board.occupied();
        let capture_at = |to: Square| {
            if theirs.contains(to) {
                board.role_at(to)
            } else {
                None
            }
        };

        // shah moves: to squares not attacked once the shah has left its square
        for to in attacks::shah_attacks(shah) & !ours & to_mask(Role::Shah, shah) & !danger {
            if !f(Move {
                role: Role::Shah,
                from: shah,
                to,
                capture: capture_at(to),
                promotion: false,
            }) {
                return false;
            }
        }

        let Some(ctx) = ctx else {
            return true;
        };
        let last_rank = Bitboard::rank(us.fold(7, 0));
        for role in Role::CAPTURABLE {
            let promoting = if role == Role::Pawn {
                last_rank
            } else {
                Bitboard::EMPTY
            };
            for from in ours & board.by_role(role) {
                let mut to_set = ctx.destinations(role, us, from, occ, ours, theirs)
                    & (to_mask(role, from) | promoting);
                if ctx.pinned.contains(from) {
                    to_set &= attacks::line(shah, from);
                }
                for to in to_set {
                    let m = Move {
                        role,
                        from,
                        to,
                        capture: capture_at(to),
                        promotion: role == Role::Pawn && last_rank.contains(to),
                    };
                    if !f(m) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Plays a move known to be legal in this position.
    ///
    /// Whatever stands on `m.to` is removed (so a wrong `m.capture` cannot corrupt the
    /// board); `m.role` must be the role on `m.from`.
    #[inline]
    #[must_use]
    pub fn play_unchecked(&self, m: &Move) -> Position {
        let mut board = self.board;
        debug_assert_eq!(
            board.piece_at(m.from),
            Some(Piece {
                color: self.turn,
                role: m.role
            }),
            "{m:?} in {self:?}"
        );
        board.move_piece(
            self.turn,
            m.role,
            m.from,
            m.to,
            if m.promotion { Role::Ferz } else { m.role },
        );
        Position {
            board,
            turn: !self.turn,
        }
    }

    /// Whether the game has ended here under `rules`, and how.
    ///
    /// In this order: both shahs bare is a draw; a bare side has lost (under
    /// `bare-king=counter` a bare side to move keeps its reply while it can capture the
    /// opponent's only piece); a side to move without legal moves has lost (checkmate or
    /// stalemate; under `stalemate=draw` a stalemate is a draw).
    #[must_use]
    pub fn outcome(&self, rules: RuleSet) -> Option<Outcome> {
        let us = self.turn;
        let them = !us;
        let (bare_us, bare_them) = (self.is_bare(us), self.is_bare(them));
        if bare_us && bare_them {
            return Some(Outcome::Draw {
                reason: EndReason::BareKing,
            });
        }
        if bare_them {
            // The opponent moved last while bare: it has lost under either rule.
            return Some(Outcome::Decisive {
                winner: us,
                reason: EndReason::BareKing,
            });
        }
        if bare_us {
            let reply = match rules.bare_king {
                BareKing::Immediate => false,
                BareKing::Counter => {
                    let theirs = self.board.by_color(them);
                    // the opponent has exactly one piece besides its shah
                    theirs.count() == 2 && self.can_capture(theirs.without(self.shah(them)))
                }
            };
            if !reply {
                return Some(Outcome::Decisive {
                    winner: them,
                    reason: EndReason::BareKing,
                });
            }
        }
        if self.has_legal_move() {
            return None;
        }
        if self.is_check() {
            Some(Outcome::Decisive {
                winner: them,
                reason: EndReason::Checkmate,
            })
        } else {
            match rules.stalemate {
                Stalemate::Loss => Some(Outcome::Decisive {
                    winner: them,
                    reason: EndReason::Stalemate,
                }),
                Stalemate::Draw => Some(Outcome::Draw {
                    reason: EndReason::Stalemate,
                }),
            }
        }
    }

    /// Whether the side to move has a legal capture on a square of `targets`.
    fn can_capture(&self, targets: Bitboard) -> bool {
        let mut found = false;
        self.gen_legal(|m| {
            if targets.contains(m.to) {
                found = true;
                false
            } else {
                true
            }
        });
        found
    }

    /// Number of legal move paths of `depth` plies (pure move generation: no game-end
    /// rule stops it). The last ply is counted without playing the moves.
    #[must_use]
    pub fn perft(&self, depth: u32) -> u64 {
        match depth {
            0 => 1,
            1 => self.count_legal_moves(),
            _ => {
                let mut n = 0;
                self.gen_legal(|m| {
                    n += self.play_unchecked(&m).perft(depth - 1);
                    true
                });
                n
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fen::Fen;

    fn pos(fen: &str) -> Position {
        Fen::parse(fen).unwrap().into_position().unwrap()
    }

    #[test]
    fn uci_is_the_display_form() {
        let p = pos("8/3P4/8/4k3/8/8/7R/K7 w - - 0 1");
        let moves = p.legal_moves();
        assert!(moves.iter().any(|m| m.promotion));
        for m in moves.iter() {
            assert_eq!(m.to_uci(), m.to_string());
        }
        assert!(moves.iter().any(|m| m.to_uci() == "d7d8q"));
    }

    fn moves(fen: &str) -> Vec<String> {
        let mut v: Vec<String> = pos(fen).legal_moves().iter().map(Move::to_uci).collect();
        v.sort();
        v
    }

    /// What `generate` gives of each position of `fens` is, in order, its legal moves
    /// that `keep`.
    fn generates_the_kept_legal_moves(
        fens: &[&str],
        generate: impl Fn(&Position, &mut dyn FnMut(Move) -> bool),
        keep: impl Fn(&Move) -> bool,
    ) {
        for fen in fens {
            let p = pos(fen);
            let mut got = Vec::new();
            generate(&p, &mut |m| {
                got.push(m.to_uci());
                true
            });
            let expected: Vec<String> = p
                .legal_moves()
                .iter()
                .filter(|m| keep(m))
                .map(|m| m.to_uci())
                .collect();
            assert_eq!(got, expected, "{fen}");
        }
    }

    #[test]
    fn pawn_steps_are_the_legal_quiet_pawn_moves() {
        generates_the_kept_legal_moves(
            &[
                "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1",
                "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR b - - 0 1",
                // a pinned pawn may step along the pin only; a check is blocked by a step
                "4r3/8/8/8/8/4P3/4K3/k7 w",
                "8/8/8/8/r3PK2/8/8/k7 w",
                "k7/8/8/8/r6K/8/5P2/8 w",
                // promotions and captures are not steps; a blocked pawn has none
                "n1n5/1P6/8/4k3/8/8/8/K7 w",
                "7k/7p/8/8/8/4p3/4PP2/K2B4 w",
                "7k/7p/8/8/8/4p3/4PP2/K2B4 b",
                // double check: only the shah moves
                "k7/8/8/8/8/2n5/P3r3/4K3 w",
            ],
            |p, f| {
                p.for_each_legal_pawn_step(f);
            },
            |m| m.role == Role::Pawn && m.capture.is_none() && !m.promotion,
        );
    }

    #[test]
    fn zeroing_moves_are_the_legal_captures_and_pawn_moves() {
        generates_the_kept_legal_moves(
            &[
                "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1",
                // a pinned man, a check to answer, captures by the shah
                "4r3/8/8/8/8/4P3/4K3/k7 w",
                "8/8/8/8/r3PK2/8/8/k7 w",
                "k7/8/8/8/r4R1K/8/5P2/8 w",
                "n1n5/1P6/8/4k3/8/8/8/K7 w",
                "7k/7p/8/8/8/4p3/4PP2/K2B4 w",
                "7k/7p/8/8/8/4p3/4PP2/K2B4 b",
                "8/8/8/3k4/3r4/2N5/8/K7 b",
                // double check: only the shah moves
                "k7/8/8/8/8/2n5/P3r3/4K3 w",
            ],
            |p, f| {
                p.for_each_zeroing_move(f);
            },
            |m| m.role == Role::Pawn || m.capture.is_some(),
        );
    }

    #[test]
    fn start_position_moves() {
        assert_eq!(
            moves("rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1").join(" "),
            "a2a3 b1a3 b1c3 b2b3 c1a3 c1e3 c2c3 d2d3 e2e3 f1d3 f1h3 f2f3 g1f3 g1h3 g2g3 h2h3"
        );
    }

    #[test]
    fn alfil_jumps_and_ferz_steps() {
        assert_eq!(
            moves("7k/7p/8/8/8/4p3/4PP2/K2B4 w").join(" "),
            "a1a2 a1b1 a1b2 d1b3 d1f3 f2e3 f2f3"
        );
        assert_eq!(
            moves("7k/7p/8/8/3Q4/8/8/K4B2 w").join(" "),
            "a1a2 a1b1 a1b2 d4c3 d4c5 d4e3 d4e5 f1d3 f1h3"
        );
    }

    #[test]
    fn promotions() {
        assert_eq!(
            moves("n1n5/1P6/8/4k3/8/8/8/K7 w").join(" "),
            "a1a2 a1b1 a1b2 b7a8q b7b8q b7c8q"
        );
        let (_, after) = pos("8/P7/8/7p/4k3/8/8/K7 w").play_uci("a7a8q").unwrap();
        assert_eq!(
            after.board().role_at("a8".parse().unwrap()),
            Some(Role::Ferz)
        );
    }

    #[test]
    fn checks_and_conversions_are_those_of_all_moves() {
        // random games from a few crowded positions: the moves the fast generator gives
        // are exactly the legal moves that capture, promote or give check
        let starts = [
            "rnb1kbnr/p2ppppp/1pp5/4NN2/2Q5/2K1B3/8/8 w - - 0 1",
            "1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1",
            "6k1/5R2/7R/4N1Q1/8/1qn5/r2r4/2K5 w - - 0 1",
            "r3k2r/1p1q1p1p/2n1bn2/pPpP4/3R4/2N1BN2/P1P1QPpP/R3K3 b - - 0 1",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut compared = 0;
        for fen in starts {
            for _ in 0..60 {
                let mut p = pos(fen);
                for _ in 0..40 {
                    let all = p.legal_moves();
                    if all.is_empty() {
                        break;
                    }
                    let mut want: Vec<Move> = all
                        .iter()
                        .filter(|m| m.is_conversion() || p.play_unchecked(m).is_check())
                        .copied()
                        .collect();
                    let mut got = MoveList::new();
                    p.checks_and_conversions_into(&mut got);
                    let mut got: Vec<Move> = got.to_vec();
                    let key = |m: &Move| (m.from.index(), m.to.index());
                    want.sort_by_key(key);
                    got.sort_by_key(key);
                    assert_eq!(got, want, "{p:?}");
                    compared += 1;
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    p = p.play_unchecked(&all[(x % all.len() as u64) as usize]);
                    if p.is_bare(Color::White) || p.is_bare(Color::Black) {
                        break;
                    }
                }
            }
        }
        assert!(compared > 3000, "{compared}");
    }

    #[test]
    fn pins_only_along_rook_lines() {
        // white rook on e2 pinned by the black rook on e8: it may move along the e-file only
        let m = moves("4r2k/8/8/8/8/8/4R3/4K3 w");
        assert!(m.contains(&"e2e8".to_string()));
        assert!(m.contains(&"e2e5".to_string()));
        assert!(!m.contains(&"e2d2".to_string()));
    }

    #[test]
    fn outcomes_follow_the_rules() {
        let rules = RuleSet::default();
        let immediate: RuleSet = "bare-king=immediate".parse().unwrap();
        let stalemate_draw: RuleSet = "stalemate=draw".parse().unwrap();
        // a1 stalemate: black loses
        let p = pos("k7/2Q4p/1K5P/8/8/8/8/8 b");
        assert_eq!(
            p.outcome(rules),
            Some(Outcome::Decisive {
                winner: Color::White,
                reason: EndReason::Stalemate
            })
        );
        assert_eq!(
            p.outcome(stalemate_draw),
            Some(Outcome::Draw {
                reason: EndReason::Stalemate
            })
        );
        // checkmate
        assert_eq!(
            pos("k6R/8/1K6/8/8/8/2p5/8 b").outcome(rules),
            Some(Outcome::Decisive {
                winner: Color::White,
                reason: EndReason::Checkmate
            })
        );
        // bare black to move, cannot take the rook: lost under either rule
        let p = pos("8/8/8/4k3/8/8/7R/K7 b");
        assert_eq!(
            p.outcome(rules).and_then(Outcome::winner),
            Some(Color::White)
        );
        // bare black to move, can take the unguarded rook: not over under counter
        let p = pos("8/8/8/4k3/4R3/8/8/K7 b");
        assert_eq!(p.outcome(rules), None);
        assert_eq!(
            p.outcome(immediate).and_then(Outcome::winner),
            Some(Color::White)
        );
        // two white pieces: lost at once
        assert_eq!(
            pos("8/8/8/4k3/4R3/8/8/KQ6 b")
                .outcome(rules)
                .and_then(Outcome::winner),
            Some(Color::White)
        );
        // white bare, black to move with a knight: black has won
        assert_eq!(
            pos("8/8/8/4k3/4n3/8/8/K7 b")
                .outcome(rules)
                .and_then(Outcome::winner),
            Some(Color::Black)
        );
        // K v K is drawn
        assert_eq!(
            pos("8/8/8/4k3/8/8/8/K7 w").outcome(rules),
            Some(Outcome::Draw {
                reason: EndReason::BareKing
            })
        );
        assert_eq!(pos("8/8/3k4/8/2bn4/8/8/R2QK3 w").outcome(rules), None);
    }

    #[test]
    fn perft_start_shallow() {
        let p = Position::startpos();
        assert_eq!(p.perft(1), 16);
        assert_eq!(p.perft(2), 256);
        assert_eq!(p.perft(3), 4176);
    }
}

//! The C interface: `include/shatranj_tb.h`, built into `libshatranj_tb.so` and
//! `libshatranj_tb.a`.
//!
//! A handle from [`shatranj_tb_open`] is a [`Tablebase`]; it may be used from any number
//! of threads at once until [`shatranj_tb_close`]. Every function catches Rust panics and
//! reports them as [`SHATRANJ_TB_ERR_INTERNAL`], so nothing unwinds into C. Errors are
//! negative return codes, with a message for the calling thread in
//! [`shatranj_tb_last_error`].
//!
//! The header is generated from this file by cbindgen (`tests/c_api.rs` checks that it
//! is current; `SHATRANJ_TB_BLESS=1 cargo test --test c_api header` rewrites it).

// The functions here take raw pointers from C: each dereference has a SAFETY comment
// naming the caller's promise it relies on (stated in the function's documentation).
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int, c_uint};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::fen::FenError;
use crate::format::CacheBudget;
use crate::position::Position;
use crate::probe::{ProbeError, Tablebase};
use crate::rules::RuleSet;
use crate::value::{Category, Dtz, Value, Wdl};

/// Success.
pub const SHATRANJ_TB_OK: c_int = 0;
/// A pointer argument that must not be NULL was NULL.
pub const SHATRANJ_TB_ERR_NULL_ARGUMENT: c_int = -1;
/// The FEN could not be read (or was not UTF-8).
pub const SHATRANJ_TB_ERR_BAD_FEN: c_int = -2;
/// The position is not a legal shatranj position (one shah a side, shahs not adjacent,
/// the side not to move not in check, no pawn on the first or last rank), or its
/// bitboards overlap or disagree.
pub const SHATRANJ_TB_ERR_ILLEGAL_POSITION: c_int = -3;
/// No table for the position's material (or one of the smaller tables a probe needs) in
/// the directory, or more men than any table holds.
pub const SHATRANJ_TB_ERR_MISSING_TABLE: c_int = -4;
/// A table file is damaged, truncated, of another format version or of another rule set.
pub const SHATRANJ_TB_ERR_DAMAGED_TABLE: c_int = -5;
/// A table file or the directory could not be read.
pub const SHATRANJ_TB_ERR_IO: c_int = -6;
/// The caller's move array is too small; the count needed was stored.
pub const SHATRANJ_TB_ERR_BUFFER_TOO_SMALL: c_int = -7;
/// An argument is out of range: an unknown rule set, a side to move other than
/// `SHATRANJ_TB_WHITE` or `SHATRANJ_TB_BLACK`.
pub const SHATRANJ_TB_ERR_BAD_ARGUMENT: c_int = -8;
/// A bug in the library (a Rust panic, caught at the boundary).
pub const SHATRANJ_TB_ERR_INTERNAL: c_int = -9;

/// The side to move wins.
pub const SHATRANJ_TB_WIN: c_int = 1;
/// Neither side can force the end of the game.
pub const SHATRANJ_TB_DRAW: c_int = 0;
/// The side to move loses.
pub const SHATRANJ_TB_LOSS: c_int = -1;

/// A DTZ category (`shatranj_tb_probe_dtz`, `ShatranjTbDtzMove`): the side to move wins
/// within the move rule.
pub const SHATRANJ_TB_CATEGORY_WIN: c_int = 2;
/// A DTZ category: the side to move wins without the move rule, but the move rule saves
/// the other side (a draw under `move-rule=70`). Never under `move-rule=none`.
pub const SHATRANJ_TB_CATEGORY_CURSED_WIN: c_int = 1;
/// A DTZ category: a draw.
pub const SHATRANJ_TB_CATEGORY_DRAW: c_int = 0;
/// A DTZ category: the side to move loses without the move rule, but the move rule saves
/// it (a draw under `move-rule=70`). Never under `move-rule=none`.
pub const SHATRANJ_TB_CATEGORY_BLESSED_LOSS: c_int = -1;
/// A DTZ category: the side to move loses within the move rule.
pub const SHATRANJ_TB_CATEGORY_LOSS: c_int = -2;

/// `turn` of a position: White to move.
pub const SHATRANJ_TB_WHITE: c_int = 0;
/// `turn` of a position: Black to move.
pub const SHATRANJ_TB_BLACK: c_int = 1;

/// Enough room for the moves of any legal position (those of the tables have far fewer).
pub const SHATRANJ_TB_MAX_MOVES: c_uint = 256;

/// An open table directory (opaque).
pub struct ShatranjTb {
    tb: Tablebase,
}

/// A position as bitboards: bit n is square n, a1 = 0, b1 = 1, ..., h8 = 63. Every man
/// is in exactly one colour board and exactly one role board.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ShatranjTbPosition {
    /// White's men.
    pub white: u64,
    /// Black's men.
    pub black: u64,
    /// Shahs (kings), `K`.
    pub shahs: u64,
    /// Ferzes, `Q`.
    pub ferzes: u64,
    /// Alfils, `B`.
    pub alfils: u64,
    /// Knights, `N`.
    pub knights: u64,
    /// Rooks, `R`.
    pub rooks: u64,
    /// Pawns, `P`.
    pub pawns: u64,
    /// The side to move: `SHATRANJ_TB_WHITE` or `SHATRANJ_TB_BLACK`.
    pub turn: c_int,
}

/// One legal move and its value, as `shatranj_tb_probe_root` fills them in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShatranjTbMove {
    /// The square the man leaves (0 = a1 ... 63 = h8).
    pub from: u8,
    /// The square it goes to.
    pub to: u8,
    /// 1 if a pawn reaches the last rank and becomes a ferz, else 0.
    pub promotion: u8,
    /// The moving side's result if it plays this move: `SHATRANJ_TB_WIN`,
    /// `SHATRANJ_TB_DRAW` or `SHATRANJ_TB_LOSS`.
    pub wdl: i8,
    /// Plies from the position before the move to the end of the game, -1 for a draw.
    pub dtm: i32,
}

/// One legal move and its DTZ, as `shatranj_tb_probe_root_dtz` fills them in.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShatranjTbDtzMove {
    /// The square the man leaves (0 = a1 ... 63 = h8).
    pub from: u8,
    /// The square it goes to.
    pub to: u8,
    /// 1 if a pawn reaches the last rank and becomes a ferz, else 0.
    pub promotion: u8,
    /// 1 if the move is a capture or a pawn move (it zeroes the move rule's count), else
    /// 0.
    pub zeroing: u8,
    /// The moving side's DTZ category if it plays this move: a `SHATRANJ_TB_CATEGORY_*`.
    pub category: i8,
    /// 1 if the move keeps the position's DTZ (a DTZ-optimal move: what an engine playing
    /// under the move rule plays), else 0.
    pub optimal: u8,
    /// The move's DTZ for the moving side, counted from the position before the move
    /// (so including this move; a zeroing move counts 1 ply, or 141 under
    /// `move-rule=70` when it leads to a cursed win or a blessed loss): positive for a
    /// win, negative for a loss, 0 for a draw.
    pub dtz: i32,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `message` as this thread's last error and returns `code`.
#[cold]
fn fail(code: c_int, message: &str) -> c_int {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = message);
    code
}

fn probe_error(e: &ProbeError) -> c_int {
    let code = match e {
        ProbeError::MissingTable { .. } | ProbeError::TooManyMen { .. } => {
            SHATRANJ_TB_ERR_MISSING_TABLE
        }
        ProbeError::Corrupt { .. } => SHATRANJ_TB_ERR_DAMAGED_TABLE,
        ProbeError::Io { .. } => SHATRANJ_TB_ERR_IO,
    };
    fail(code, &e.to_string())
}

/// Runs `f`, turning a panic into [`SHATRANJ_TB_ERR_INTERNAL`].
#[inline]
fn guard(f: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(panic) => internal(&panic),
    }
}

#[cold]
fn internal(panic: &Box<dyn std::any::Any + Send>) -> c_int {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    fail(
        SHATRANJ_TB_ERR_INTERNAL,
        &format!("internal error (please report): {what}"),
    )
}

fn wdl_code(wdl: Wdl) -> c_int {
    match wdl {
        Wdl::Win => SHATRANJ_TB_WIN,
        Wdl::Draw => SHATRANJ_TB_DRAW,
        Wdl::Loss => SHATRANJ_TB_LOSS,
    }
}

fn dtm_code(value: Value) -> c_int {
    value
        .dtm()
        .map_or(-1, |d| c_int::try_from(d).unwrap_or(c_int::MAX))
}

fn category_code(c: Category) -> c_int {
    match c {
        Category::Win => SHATRANJ_TB_CATEGORY_WIN,
        Category::CursedWin => SHATRANJ_TB_CATEGORY_CURSED_WIN,
        Category::Draw => SHATRANJ_TB_CATEGORY_DRAW,
        Category::BlessedLoss => SHATRANJ_TB_CATEGORY_BLESSED_LOSS,
        Category::Loss => SHATRANJ_TB_CATEGORY_LOSS,
    }
}

/// The signed DTZ of `d`, clamped into a C int (DTZ values are far smaller).
fn dtz_code(d: Dtz) -> i32 {
    let s = d.signed();
    i32::try_from(s).unwrap_or(if s < 0 { i32::MIN } else { i32::MAX })
}

/// The position of a C position, or an error code (with the message set).
#[inline]
fn position(p: &ShatranjTbPosition) -> Result<Position, c_int> {
    let turn = match p.turn {
        SHATRANJ_TB_WHITE => Color::White,
        SHATRANJ_TB_BLACK => Color::Black,
        other => {
            return Err(fail(
                SHATRANJ_TB_ERR_BAD_ARGUMENT,
                &format!("turn {other} is neither SHATRANJ_TB_WHITE (0) nor SHATRANJ_TB_BLACK (1)"),
            ));
        }
    };
    // the roles in the order of `Role::ALL`: pawn, knight, alfil, ferz, rook, shah
    let roles = [p.pawns, p.knights, p.alfils, p.ferzes, p.rooks, p.shahs].map(Bitboard);
    let board = Board::from_bitboards([Bitboard(p.white), Bitboard(p.black)], roles)
        .ok_or_else(|| {
            fail(
                SHATRANJ_TB_ERR_ILLEGAL_POSITION,
                "illegal position: the bitboards overlap, or the colour boards do not cover the same squares as the role boards",
            )
        })?;
    Position::from_board(board, turn)
        .map_err(|e| fail(SHATRANJ_TB_ERR_ILLEGAL_POSITION, &e.to_string()))
}

/// The tablebase and position behind two C pointers, or an error code.
///
/// # Safety
/// Each pointer is NULL or valid for reads (a handle from `shatranj_tb_open` not yet
/// closed, a readable `ShatranjTbPosition`).
#[inline]
unsafe fn handle_and_position<'a>(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
) -> Result<(&'a Tablebase, Position), c_int> {
    // SAFETY: the caller promises `tb` is NULL or a live handle; `as_ref` checks NULL.
    let tb = unsafe { tb.as_ref() }.ok_or_else(|| null("tb"))?;
    // SAFETY: the caller promises `pos` is NULL or readable; `as_ref` checks NULL.
    let pos = unsafe { pos.as_ref() }.ok_or_else(|| null("pos"))?;
    Ok((&tb.tb, position(pos)?))
}

/// The body of a probe with two `int` outputs (`shatranj_tb_probe_dtm`,
/// `shatranj_tb_probe_dtz`): both checked not NULL, the position looked up, both written.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `a.0` and `b.0` NULL or
/// writable.
unsafe fn probe_two(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    a: (*mut c_int, &str),
    b: (*mut c_int, &str),
    lookup: impl FnOnce(&Tablebase, &Position) -> Result<(c_int, c_int), ProbeError>,
) -> c_int {
    guard(|| {
        for (out, name) in [a, b] {
            if out.is_null() {
                return null(name);
            }
        }
        // SAFETY: the caller's promises on `tb` and `pos`.
        let (tb, pos) = match unsafe { handle_and_position(tb, pos) } {
            Ok(x) => x,
            Err(code) => return code,
        };
        match lookup(tb, &pos) {
            Ok((x, y)) => {
                // SAFETY: both checked not NULL above; the caller promises them writable.
                unsafe {
                    *a.0 = x;
                    *b.0 = y;
                }
                SHATRANJ_TB_OK
            }
            Err(e) => probe_error(&e),
        }
    })
}

/// The body of a root probe (`shatranj_tb_probe_root`, `shatranj_tb_probe_root_dtz`):
/// the outputs checked, the position looked up, its entries (best first) counted into
/// `*count` and written into `moves[0..*count]` if they fit.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `moves` NULL or writable for
/// `capacity` entries; `count` NULL or writable.
unsafe fn probe_root_into<E>(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    moves: *mut E,
    capacity: usize,
    count: *mut usize,
    entries: impl FnOnce(&Tablebase, &Position) -> Result<Vec<E>, ProbeError>,
) -> c_int {
    guard(|| {
        if count.is_null() {
            return null("count");
        }
        if moves.is_null() && capacity > 0 {
            return null("moves");
        }
        // SAFETY: the caller's promises on `tb` and `pos`.
        let (tb, pos) = match unsafe { handle_and_position(tb, pos) } {
            Ok(x) => x,
            Err(code) => return code,
        };
        let entries = match entries(tb, &pos) {
            Ok(e) => e,
            Err(e) => return probe_error(&e),
        };
        // SAFETY: checked not NULL above; the caller promises it writable.
        unsafe { *count = entries.len() };
        if entries.len() > capacity {
            return fail(
                SHATRANJ_TB_ERR_BUFFER_TOO_SMALL,
                &format!(
                    "{} moves do not fit in an array of {capacity}",
                    entries.len()
                ),
            );
        }
        for (i, entry) in entries.into_iter().enumerate() {
            // SAFETY: i < len <= capacity, and the caller promises `moves` writable for
            // `capacity` entries (not NULL, since capacity > 0 here).
            unsafe { moves.add(i).write(entry) };
        }
        SHATRANJ_TB_OK
    })
}

#[cold]
fn null(name: &str) -> c_int {
    fail(
        SHATRANJ_TB_ERR_NULL_ARGUMENT,
        &format!("argument `{name}` is NULL"),
    )
}

/// A C string argument as UTF-8.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string valid for reads.
unsafe fn str_arg<'a>(s: *const c_char, name: &str, code: c_int) -> Result<&'a str, c_int> {
    if s.is_null() {
        return Err(null(name));
    }
    // SAFETY: not NULL, and the caller promises a NUL-terminated readable string.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map_err(|_| fail(code, &format!("argument `{name}` is not UTF-8")))
}

/// Opens the tables of directory `dir` for rule set `rules` (for example
/// `"bare-king=counter,stalemate=loss"`; NULL for that default). Lists the directory
/// only: each table file is opened and checked on first use. The decompressed blocks of
/// all its tables together take at most 1 GiB (see `shatranj_tb_open_opts`). Returns
/// NULL on error (no such directory, an unknown rule set), with the message in
/// `shatranj_tb_last_error()`.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string; `rules` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_open(
    dir: *const c_char,
    rules: *const c_char,
) -> *mut ShatranjTb {
    // SAFETY: the caller's promises on `dir` and `rules`, passed on.
    unsafe { open(dir, rules, crate::probe::DEFAULT_CACHE_BYTES) }
}

/// `shatranj_tb_open` with a bound of `cache_bytes` bytes on the decompressed blocks the
/// handle keeps, all its tables together (0 keeps none: every lookup then reads and
/// decompresses its block). The bound holds whatever tables are probed; the memory is
/// taken only as blocks are used.
///
/// # Safety
/// As `shatranj_tb_open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_open_opts(
    dir: *const c_char,
    rules: *const c_char,
    cache_bytes: usize,
) -> *mut ShatranjTb {
    // SAFETY: the caller's promises on `dir` and `rules`, passed on.
    unsafe { open(dir, rules, cache_bytes) }
}

/// What the cache of decompressed blocks of a handle holds: its bound (`capacity`), the
/// bytes held now (`resident`, never above the bound) and the most held at once
/// (`peak`), each stored if its pointer is not NULL. Cheap: takes one lock.
///
/// # Safety
/// `tb` is NULL or a live handle; each other pointer is NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_cache_stats(
    tb: *const ShatranjTb,
    capacity: *mut usize,
    resident: *mut usize,
    peak: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller promises NULL or a live handle.
        let Some(tb) = (unsafe { tb.as_ref() }) else {
            return null("tb");
        };
        let stats = tb.tb.cache_stats();
        for (out, value) in [
            (capacity, stats.capacity),
            (resident, stats.resident_bytes),
            (peak, stats.peak_bytes),
        ] {
            // SAFETY: the caller promises NULL or a pointer valid for a write.
            if let Some(out) = unsafe { out.as_mut() } {
                *out = value;
            }
        }
        SHATRANJ_TB_OK
    })
}

/// `shatranj_tb_open` with a cache bound.
///
/// # Safety
/// As `shatranj_tb_open`.
unsafe fn open(dir: *const c_char, rules: *const c_char, cache_bytes: usize) -> *mut ShatranjTb {
    let mut handle = std::ptr::null_mut();
    guard(|| {
        // SAFETY: the caller's promise on `dir`.
        let dir = match unsafe { str_arg(dir, "dir", SHATRANJ_TB_ERR_BAD_ARGUMENT) } {
            Ok(d) => d,
            Err(code) => return code,
        };
        let rules = if rules.is_null() {
            RuleSet::default()
        } else {
            // SAFETY: the caller's promise on `rules`, which is not NULL.
            let text = match unsafe { str_arg(rules, "rules", SHATRANJ_TB_ERR_BAD_ARGUMENT) } {
                Ok(r) => r,
                Err(code) => return code,
            };
            match text.parse::<RuleSet>() {
                Ok(r) => r,
                Err(e) => return fail(SHATRANJ_TB_ERR_BAD_ARGUMENT, &e.to_string()),
            }
        };
        if !std::path::Path::new(dir).is_dir() {
            return fail(
                SHATRANJ_TB_ERR_IO,
                &format!("tables directory {dir} does not exist or is not a directory"),
            );
        }
        match Tablebase::open_with_budget(dir, rules, CacheBudget::new(cache_bytes)) {
            Ok(tb) => {
                handle = Box::into_raw(Box::new(ShatranjTb { tb }));
                SHATRANJ_TB_OK
            }
            Err(e) => probe_error(&e),
        }
    });
    handle
}

/// The message of the last error on the calling thread ("" if none yet). The string
/// stays valid until the next failing call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn shatranj_tb_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"error message unavailable while the thread exits".as_ptr())
}

/// Closes a handle from `shatranj_tb_open` (NULL is ignored). No other thread may use it
/// any more.
///
/// # Safety
/// `tb` is NULL or a handle from `shatranj_tb_open` not closed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_close(tb: *mut ShatranjTb) {
    if tb.is_null() {
        return;
    }
    guard(|| {
        // SAFETY: the caller promises a live handle from `shatranj_tb_open`, which made
        // it with `Box::into_raw`, and that nothing uses it any more.
        drop(unsafe { Box::from_raw(tb) });
        SHATRANJ_TB_OK
    });
}

/// The most men of any table in the directory (0 if it has none). Positions with a bare
/// side, and shah against shah, need no table.
///
/// # Safety
/// `tb` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_largest(tb: *const ShatranjTb) -> c_uint {
    // SAFETY: the caller promises NULL or a live handle.
    let Some(tb) = (unsafe { tb.as_ref() }) else {
        return 0;
    };
    let mut largest = 0;
    guard(|| {
        largest = tb.tb.materials().iter().map(|m| m.men()).max().unwrap_or(0);
        SHATRANJ_TB_OK
    });
    largest
}

/// Probes a position given as FEN (at least the board and the side to move): stores the
/// result for the side to move in `*wdl` (`SHATRANJ_TB_WIN`, `SHATRANJ_TB_DRAW`,
/// `SHATRANJ_TB_LOSS`) and the plies to the end of the game in `*dtm` (-1 for a draw; 0
/// if the game has ended). Returns `SHATRANJ_TB_OK` or a negative error code.
///
/// # Safety
/// `tb` is NULL or a live handle; `fen` NULL or a NUL-terminated string; `wdl` and
/// `dtm` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_probe_fen(
    tb: *const ShatranjTb,
    fen: *const c_char,
    wdl: *mut c_int,
    dtm: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the caller promises `tb` is NULL or a live handle.
        let Some(tb) = (unsafe { tb.as_ref() }) else {
            return null("tb");
        };
        if wdl.is_null() {
            return null("wdl");
        }
        if dtm.is_null() {
            return null("dtm");
        }
        // SAFETY: the caller's promise on `fen`.
        let fen = match unsafe { str_arg(fen, "fen", SHATRANJ_TB_ERR_BAD_FEN) } {
            Ok(f) => f,
            Err(code) => return code,
        };
        let pos = match Position::from_fen(fen) {
            Ok(p) => p,
            Err(FenError::Parse(e)) => return fail(SHATRANJ_TB_ERR_BAD_FEN, &e.to_string()),
            Err(FenError::Position(e)) => {
                return fail(SHATRANJ_TB_ERR_ILLEGAL_POSITION, &e.to_string());
            }
        };
        match tb.tb.value(&pos) {
            Ok(v) => {
                // SAFETY: both checked not NULL above; the caller promises them writable.
                unsafe {
                    *wdl = wdl_code(v.wdl());
                    *dtm = dtm_code(v);
                }
                SHATRANJ_TB_OK
            }
            Err(e) => probe_error(&e),
        }
    })
}

/// Win, draw or loss for the side to move of a position given as bitboards, into
/// `*wdl`: the fast path for a search (no text, no allocation; reads the small WDL files
/// only, and the smaller tables for captures). Returns `SHATRANJ_TB_OK` or a negative
/// error code.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `wdl` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_probe_wdl(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    wdl: *mut c_int,
) -> c_int {
    guard(|| {
        if wdl.is_null() {
            return null("wdl");
        }
        // SAFETY: the caller's promises on `tb` and `pos`.
        let (tb, pos) = match unsafe { handle_and_position(tb, pos) } {
            Ok(x) => x,
            Err(code) => return code,
        };
        match tb.wdl(&pos) {
            Ok(w) => {
                // SAFETY: checked not NULL above; the caller promises it writable.
                unsafe { *wdl = wdl_code(w) };
                SHATRANJ_TB_OK
            }
            Err(e) => probe_error(&e),
        }
    })
}

/// The value of a position given as bitboards: `*wdl` as `shatranj_tb_probe_wdl`, and
/// `*dtm` the plies to the end of the game (-1 for a draw). Reads the DTM files.
/// Returns `SHATRANJ_TB_OK` or a negative error code.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `wdl` and `dtm` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_probe_dtm(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    wdl: *mut c_int,
    dtm: *mut c_int,
) -> c_int {
    // SAFETY: the caller's promises, passed on.
    unsafe {
        probe_two(tb, pos, (wdl, "wdl"), (dtm, "dtm"), |tb, pos| {
            tb.value(pos).map(|v| (wdl_code(v.wdl()), dtm_code(v)))
        })
    }
}

/// Every legal move of a position given as bitboards, with its value, best first (the
/// first move keeps the position's value; moves of equal value in the order of their
/// UCI names), into `moves[0..*count]`. A finished game has no moves (`*count` = 0).
/// `SHATRANJ_TB_MAX_MOVES` entries are always enough. If `capacity` is too small,
/// returns `SHATRANJ_TB_ERR_BUFFER_TOO_SMALL` with the count needed in `*count`;
/// `moves` may be NULL when `capacity` is 0. Returns `SHATRANJ_TB_OK` or a negative
/// error code.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `moves` NULL or writable for
/// `capacity` entries; `count` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_probe_root(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    moves: *mut ShatranjTbMove,
    capacity: usize,
    count: *mut usize,
) -> c_int {
    // SAFETY: the caller's promises, passed on.
    unsafe {
        probe_root_into(tb, pos, moves, capacity, count, |tb, pos| {
            let probe = tb.probe_moves(pos)?;
            Ok(probe
                .moves
                .iter()
                .map(|(m, v)| ShatranjTbMove {
                    from: m.from.index() as u8,
                    to: m.to.index() as u8,
                    promotion: u8::from(m.promotion),
                    wdl: wdl_code(v.wdl()) as i8,
                    dtm: dtm_code(*v),
                })
                .collect())
        })
    }
}

/// The DTZ of a position given as bitboards, under the move rule of the handle's rule
/// set (`move-rule=none` unless `shatranj_tb_open` was given `move-rule=70`): `*dtz` the
/// plies to the next zeroing move (a capture or a pawn move) or the end of the game, the
/// winner hurrying to a zeroing move that keeps the win and the loser delaying it;
/// positive if the side to move wins, negative if it loses, 0 for a draw and for a
/// finished game. `*category` is its `SHATRANJ_TB_CATEGORY_*`. Reads the WDL and DTZ
/// files (`MATERIAL.RULES.tbz`); a table without a DTZ file for this move rule is
/// `SHATRANJ_TB_ERR_MISSING_TABLE`. Positions the rules decide alone (a bare side) need
/// no table. Thread-safe, as every call on a handle. Returns `SHATRANJ_TB_OK` or a
/// negative error code.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `dtz` and `category` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_probe_dtz(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    dtz: *mut c_int,
    category: *mut c_int,
) -> c_int {
    // SAFETY: the caller's promises, passed on.
    unsafe {
        probe_two(tb, pos, (dtz, "dtz"), (category, "category"), |tb, pos| {
            tb.dtz(pos)
                .map(|d| (dtz_code(d), category_code(d.category)))
        })
    }
}

/// Every legal move of a position given as bitboards with its DTZ (as Fathom's
/// `tb_probe_root` for an engine under the move rule), into `moves[0..*count]`: best
/// first (quicker wins, every win before a cursed one, draws, then longer losses; moves
/// of equal DTZ in the order of their UCI names), each flagged `optimal` if it keeps the
/// position's DTZ (`shatranj_tb_probe_dtz`'s). A finished game has no moves
/// (`*count` = 0). `SHATRANJ_TB_MAX_MOVES` entries are always enough. If `capacity` is
/// too small, returns `SHATRANJ_TB_ERR_BUFFER_TOO_SMALL` with the count needed in
/// `*count`; `moves` may be NULL when `capacity` is 0. Reads the DTZ files of the
/// position's table and of the tables its captures lead to. Thread-safe, as every call
/// on a handle. Returns `SHATRANJ_TB_OK` or a negative error code.
///
/// # Safety
/// `tb` is NULL or a live handle; `pos` NULL or readable; `moves` NULL or writable for
/// `capacity` entries; `count` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shatranj_tb_probe_root_dtz(
    tb: *const ShatranjTb,
    pos: *const ShatranjTbPosition,
    moves: *mut ShatranjTbDtzMove,
    capacity: usize,
    count: *mut usize,
) -> c_int {
    // SAFETY: the caller's promises, passed on.
    unsafe {
        probe_root_into(tb, pos, moves, capacity, count, |tb, pos| {
            let probe = tb.probe_dtz(pos)?;
            Ok(probe
                .moves
                .iter()
                .map(|(m, d, zeroing)| ShatranjTbDtzMove {
                    from: m.from.index() as u8,
                    to: m.to.index() as u8,
                    promotion: u8::from(m.promotion),
                    zeroing: u8::from(*zeroing),
                    category: category_code(d.category) as i8,
                    optimal: u8::from(*d == probe.dtz),
                    dtz: dtz_code(*d),
                })
                .collect())
        })
    }
}

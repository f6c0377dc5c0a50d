//! The state of a position while its table is generated (see the module documentation
//! of `generate`): decided codes, the open counts, and the WDL and conversion codes
//! written into files. They are 16-bit values, kept a byte a slot by [`Cells`] under
//! [`GEN_ALPHABET`].

use rayon::prelude::*;

use super::cells::{Alphabet, Cells};
use crate::value::{Value, Wdl};

/// The states a generator keeps in a byte: decided codes up to 125 (distances up to 124
/// plies), [`UNUSED`], [`SAVED`], and the open states of up to 62 quiet successors. Any
/// other state (a longer distance, a larger count) is spilled (see [`Cells`]).
pub const GEN_ALPHABET: Alphabet = gen_alphabet(126, 62);

/// An alphabet of generator states: the decided codes below `codes`, [`UNUSED`],
/// [`SAVED`] and the open states of up to `counts` quiet successors (at most 254 values
/// in all).
#[must_use]
pub const fn gen_alphabet(codes: u16, counts: u16) -> Alphabet {
    Alphabet::new(codes, &[(UNUSED, 1), (SAVED, 1), (OPEN, 2 * (counts + 1))])
}

/// The code of an index that names no legal, canonical position.
pub const UNUSED: u16 = u16::MAX;

/// Longest distance a table can hold (codes stay below the undecided states).
pub const MAX_DTM: u32 = 65_000;

/// The first undecided state: [`open_state`] counts from here.
pub(super) const OPEN: u16 = 0xFE00;

/// Most quiet successors an open state can count.
pub(super) const MAX_OPEN_COUNT: usize = 127;

/// The state of an undecided position that a conversion (or a drawn stalemate) saves
/// from losing: its quiet successors need no counting.
pub(super) const SAVED: u16 = 0xFF00;

// Decided codes, open states and SAVED never meet.
const _: () = assert!(MAX_DTM + 1 < OPEN as u32);
const _: () = assert!(open_state(MAX_OPEN_COUNT as u16, true) < SAVED && SAVED < UNUSED);

/// The state of an undecided position with `count` quiet successors not yet known to win
/// for the opponent (at most [`MAX_OPEN_COUNT`]); bit 0 says whether it has a conversion
/// (all of them losing), the one thing a loss settled from its last quiet successor still
/// has to look at.
#[inline]
pub(super) const fn open_state(count: u16, has_conversion: bool) -> u16 {
    OPEN + (count << 1) + has_conversion as u16
}

/// Turns DTM codes into the values of the WDL file in place (see
/// [`Generated::wdl_file_values`]; `conversions` as [`Generated::conversions`]).
pub(crate) fn wdl_values_in_place(codes: &mut Cells, conversions: &[u8]) {
    // Runs restart every 2^20 slots (a WDL block), so the chunks go in parallel. Each
    // value needs its own code and the value before it, so one pass rewrites them.
    const CHUNK: usize = WDL_RUN;
    let codes = &*codes;
    (0..codes.len().div_ceil(CHUNK))
        .into_par_iter()
        .for_each(|k| {
            let mut prev = 0u16;
            for s in k * CHUNK..((k + 1) * CHUNK).min(codes.len()) {
                let c = codes.load(s);
                if c == UNUSED {
                    continue;
                }
                let v = wdl_file_value(c, packed_conversion(conversions, s), prev);
                codes.store(s, v);
                prev = v;
            }
        });
}

/// The WDL file's value of a used slot with DTM code `code` and conversion code
/// `conversion`, after a used slot of value `prev` (0 at the start of a run; see
/// [`Generated::wdl_file_values`]).
#[inline]
pub(super) fn wdl_file_value(code: u16, conversion: u8, prev: u16) -> u16 {
    let exact = wdl_code(Value::from_dtm_code(code).wdl());
    if conversion != 0 && u16::from(conversion - 1) == exact {
        prev.min(exact)
    } else {
        exact
    }
}

/// The run length of [`wdl_values_in_place`]: a WDL file's block.
pub(super) const WDL_RUN: usize = 1 << 20;

/// The conversion code of `slot` in packed codes (see [`Generated::conversions`]).
#[inline]
pub(super) fn packed_conversion(conversions: &[u8], slot: usize) -> u8 {
    (conversions[slot / 4] >> (2 * (slot % 4))) & 3
}

#[inline]
pub(super) fn conversion_code(wdl: Wdl) -> u8 {
    1 + wdl_code(wdl) as u8
}

/// The code of a WDL value in WDL files: 0 loss, 1 draw, 2 win.
#[inline]
#[must_use]
pub fn wdl_code(wdl: Wdl) -> u16 {
    match wdl {
        Wdl::Loss => 0,
        Wdl::Draw => 1,
        Wdl::Win => 2,
    }
}

#[inline]
pub(super) fn code_of(v: Value) -> u16 {
    v.to_dtm_code().expect("distance checked against MAX_DTM")
}

/// Whether a state holds a decided value.
#[inline]
pub(super) fn is_decided(code: u16) -> bool {
    code != 0 && code < OPEN
}

/// Whether a state is open: undecided, its quiet successors counted.
#[inline]
pub(super) fn is_open(code: u16) -> bool {
    (OPEN..SAVED).contains(&code)
}

/// Whether a state is undecided (open or [`SAVED`]).
#[inline]
pub(super) fn is_undecided(code: u16) -> bool {
    code >= OPEN && code != UNUSED
}

/// Whether a slot holding `code` may still get the win whose code is `win`: it is
/// undecided, or holds a (tentative) win found by a conversion that is slower.
#[inline]
pub(super) fn may_win_at(code: u16, win: u16) -> bool {
    is_undecided(code) || (is_decided(code) && code > win && distance(code) % 2 == 1)
}

#[inline]
pub(super) fn distance(code: u16) -> u32 {
    u32::from(code) - 1
}

//! [`Cells`]: a table's state at one byte a slot, whatever its values.
//!
//! The generator's state and the DTZ retrograde's are 16-bit values (decided codes,
//! open counts, markers). Nearly every slot holds one of a few hundred of them at any
//! time: the short distances, the small counts, the markers. An [`Alphabet`] names 254 of
//! them, each stored as its own byte; any other value (a distance past the alphabet's, a
//! count too large) is *spilled*: its byte says so ([`ESC`]) and the value is kept in a
//! map beside the array, one of 256 shards by slot. A slot's form is canonical (a value
//! the alphabet names is always its byte), so a compare-exchange of two named values is
//! one byte's. A change into or out of the map first takes the slot's byte to [`LOCK`],
//! so that the byte and the map change together; a reader that meets [`LOCK`] waits.
//!
//! What spills is measured and reported (`Generated::spilled`): the longest tables of up to
//! 5 men spill a few percent of their slots for the passes past their alphabet's distances.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

/// The byte of a spilled slot: its value is in the map.
const ESC: u8 = 0xFE;
/// The byte of a slot whose byte and map entry are being changed together.
const LOCK: u8 = 0xFF;
/// What the decoding table gives for [`ESC`] and [`LOCK`]: no value of an alphabet's
/// users (checked when an alphabet is made and when a value is spilled).
const SPILLED: u16 = 0xFFFD;
const SHARDS: usize = 256;

/// 254 values stored as their own bytes: `0..direct` as themselves, then each range in
/// turn (a range `(start, len)` names `start..start + len`).
#[derive(Clone, Debug)]
pub struct Alphabet {
    decode: [u16; 256],
    direct: u16,
    ranges: [(u16, u16, u8); 4],
}

impl Alphabet {
    /// The alphabet of `0..direct` and `ranges` (at most 4, 254 values in all).
    ///
    /// # Panics
    /// If the values are more than 254, or one of them is the marker of a spilled slot.
    #[must_use]
    pub const fn new(direct: u16, ranges: &[(u16, u16)]) -> Alphabet {
        let mut decode = [SPILLED; 256];
        let mut out = [(0u16, 0u16, 0u8); 4];
        assert!(ranges.len() <= 4 && direct <= ESC as u16);
        let mut b = 0;
        while b < direct {
            decode[b as usize] = b;
            b += 1;
        }
        let mut k = 0;
        while k < ranges.len() {
            let (start, len) = ranges[k];
            assert!(b + len <= ESC as u16, "more than 254 values");
            out[k] = (start, len, b as u8);
            let mut j = 0;
            while j < len {
                assert!(start + j != SPILLED);
                decode[b as usize] = start + j;
                b += 1;
                j += 1;
            }
            k += 1;
        }
        Alphabet {
            decode,
            direct,
            ranges: out,
        }
    }

    /// The byte of `v`, if the alphabet names it.
    #[inline(always)]
    fn encode(&self, v: u16) -> Option<u8> {
        if v < self.direct {
            return Some(v as u8);
        }
        for &(start, len, byte) in &self.ranges {
            let off = v.wrapping_sub(start);
            if off < len {
                return Some(byte + off as u8);
            }
        }
        None
    }
}

/// One byte a slot, and a map of the values that do not fit (see the module
/// documentation).
pub struct Cells {
    bytes: super::generator::ZeroedVec<AtomicU8>,
    alphabet: Alphabet,
    spill: Box<[Mutex<HashMap<u64, u16>>]>,
}

impl Cells {
    /// `n` slots, each holding `fill`.
    #[must_use]
    pub fn new(n: usize, alphabet: Alphabet, fill: u16) -> Cells {
        let bytes = super::generator::zeroed(n);
        let mut cells = Cells {
            bytes,
            alphabet,
            spill: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        };
        if fill != 0 || cells.alphabet.encode(0) != Some(0) {
            cells.fill(fill);
        }
        cells
    }

    /// Every slot holds `fill`, under `alphabet` from now on: the array is reused.
    pub fn reset(&mut self, alphabet: Alphabet, fill: u16) {
        self.alphabet = alphabet;
        self.fill(fill);
    }

    /// Every slot of `ranges` holds `fill`, under `alphabet` from now on (slots elsewhere
    /// are not touched, nor is their memory; their values are left as they were).
    pub fn reset_ranges(&mut self, alphabet: Alphabet, fill: u16, ranges: &[std::ops::Range<u64>]) {
        if ranges.len() == 1 && ranges[0] == (0..self.len() as u64) {
            return self.reset(alphabet, fill);
        }
        self.alphabet = alphabet;
        for shard in self.spill.iter_mut() {
            shard.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
        }
        // the bytes are written, not read: a spilled value's entry is gone already
        let byte = self.alphabet.encode(fill);
        for r in ranges {
            let r = r.start as usize..r.end as usize;
            match byte {
                Some(b) => self.bytes[r]
                    .par_chunks_mut(1 << 16)
                    .for_each(|c| c.iter_mut().for_each(|x| *x.get_mut() = b)),
                None => r.for_each(|i| {
                    self.bytes[i].store(0, Ordering::Relaxed);
                    self.store(i, fill);
                }),
            }
        }
    }

    fn fill(&mut self, v: u16) {
        for shard in self.spill.iter_mut() {
            shard.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
        }
        match self.alphabet.encode(v) {
            Some(b) => self
                .bytes
                .par_chunks_mut(1 << 16)
                .for_each(|c| c.iter_mut().for_each(|x| *x.get_mut() = b)),
            None => (0..self.bytes.len()).for_each(|i| self.store(i, v)),
        }
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Slots whose value is spilled to the map.
    #[must_use]
    pub fn spilled(&self) -> usize {
        self.spill
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }

    #[inline]
    fn shard(&self, i: usize) -> std::sync::MutexGuard<'_, HashMap<u64, u16>> {
        // the low bits of a slot spread a table's long values over the shards
        self.spill[i % SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The value of slot `i`.
    #[inline(always)]
    pub fn load(&self, i: usize) -> u16 {
        let b = self.bytes[i].load(Ordering::Relaxed);
        let v = self.alphabet.decode[usize::from(b)];
        if v != SPILLED {
            v
        } else {
            self.load_spilled(i)
        }
    }

    /// Asks the processor to start loading slot `i`'s byte (a hint, for a read soon).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(b) = self.bytes.get(i) {
            crate::prefetch::prefetch(b);
        }
    }

    #[cold]
    #[inline(never)]
    fn load_spilled(&self, i: usize) -> u16 {
        loop {
            let shard = self.shard(i);
            let b = self.bytes[i].load(Ordering::Acquire);
            match b {
                LOCK => {
                    drop(shard);
                    std::hint::spin_loop();
                }
                ESC => return shard[&(i as u64)],
                _ => return self.alphabet.decode[usize::from(b)],
            }
        }
    }

    /// Stores `new` in slot `i` if it holds `current`; the value it held otherwise (as
    /// `AtomicU16::compare_exchange`).
    #[inline]
    pub fn compare_exchange(&self, i: usize, current: u16, new: u16) -> Result<u16, u16> {
        match (self.alphabet.encode(current), self.alphabet.encode(new)) {
            (Some(c), Some(n)) => self.bytes[i]
                .compare_exchange(c, n, Ordering::AcqRel, Ordering::Acquire)
                .map(|_| current)
                .map_err(|_| self.load(i)),
            (c, n) => self.exchange_spilled(i, current, c, new, n),
        }
    }

    #[cold]
    #[inline(never)]
    fn exchange_spilled(
        &self,
        i: usize,
        current: u16,
        c: Option<u8>,
        new: u16,
        n: Option<u8>,
    ) -> Result<u16, u16> {
        let from = c.unwrap_or(ESC);
        loop {
            match self.bytes[i].compare_exchange_weak(
                from,
                LOCK,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(LOCK) => std::hint::spin_loop(),
                Err(b) if b == from => {}
                Err(_) => return Err(self.load(i)),
            }
        }
        let key = i as u64;
        let mut shard = self.shard(i);
        if c.is_none() {
            let held = shard[&key];
            if held != current {
                drop(shard);
                self.bytes[i].store(ESC, Ordering::Release);
                return Err(held);
            }
        }
        let byte = match n {
            Some(b) => {
                if c.is_none() {
                    shard.remove(&key);
                }
                b
            }
            None => {
                debug_assert_ne!(new, SPILLED);
                shard.insert(key, new);
                ESC
            }
        };
        drop(shard);
        self.bytes[i].store(byte, Ordering::Release);
        Ok(current)
    }

    /// Stores `v` in slot `i`, a slot no other thread writes meanwhile (others may read
    /// it): then a value the alphabet names is a plain store of its byte.
    #[inline]
    pub fn store(&self, i: usize, v: u16) {
        if let Some(b) = self.alphabet.encode(v) {
            let old = self.bytes[i].load(Ordering::Relaxed);
            if old != ESC && old != LOCK {
                self.bytes[i].store(b, Ordering::Release);
                return;
            }
        }
        self.store_spilled(i, v);
    }

    #[cold]
    #[inline(never)]
    fn store_spilled(&self, i: usize, v: u16) {
        let _ = self.update(i, |_| Some(v));
    }

    /// A test of slots for the value `v`, cheaper than [`Cells::load`] and a comparison.
    #[inline]
    #[must_use]
    pub fn matcher(&self, v: u16) -> Matcher<'_> {
        Matcher {
            cells: self,
            byte: self.alphabet.encode(v),
            v,
        }
    }

    /// Replaces the value of slot `i` by `f` of it until `f` says `None` or the exchange
    /// succeeds; the value it held (as `AtomicU16::fetch_update`).
    #[inline]
    pub fn update(&self, i: usize, mut f: impl FnMut(u16) -> Option<u16>) -> Result<u16, u16> {
        let mut cur = self.load(i);
        while let Some(new) = f(cur) {
            match self.compare_exchange(i, cur, new) {
                Ok(old) => return Ok(old),
                Err(now) => cur = now,
            }
        }
        Err(cur)
    }

    /// Subtracts `d` from slot `i`'s value; the value it held.
    #[inline]
    pub fn fetch_sub(&self, i: usize, d: u16) -> u16 {
        match self.update(i, |v| Some(v.wrapping_sub(d))) {
            Ok(v) | Err(v) => v,
        }
    }

    /// Stores the smaller of `v` and slot `i`'s value; the value it held.
    #[inline]
    pub fn fetch_min(&self, i: usize, v: u16) -> u16 {
        match self.update(i, |cur| (v < cur).then_some(v)) {
            Ok(old) | Err(old) => old,
        }
    }

    /// Replaces every value by `f` of it and its slot, chunk by chunk in parallel (chunks
    /// of `chunk` slots; `f` also gets the chunk's number).
    pub fn map_in_place(&mut self, chunk: usize, f: impl Fn(usize, u16) -> u16 + Sync) {
        let len = self.len();
        self.map_range(0..len, chunk, f);
    }

    /// [`Cells::map_in_place`] on the slots of `range` only (the others are not touched,
    /// nor is their memory).
    pub fn map_range(
        &self,
        range: std::ops::Range<usize>,
        chunk: usize,
        f: impl Fn(usize, u16) -> u16 + Sync,
    ) {
        (range.start / chunk..range.end.div_ceil(chunk))
            .into_par_iter()
            .for_each(|c| {
                for i in (c * chunk).max(range.start)..((c + 1) * chunk).min(range.end) {
                    let old = self.load(i);
                    let new = f(i, old);
                    if new != old {
                        self.store(i, new);
                    }
                }
            });
    }

    /// The values of `range`, into `out`.
    pub fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        out.clear();
        let first = range.start;
        out.extend(self.bytes[range].iter().enumerate().map(|(k, b)| {
            let v = self.alphabet.decode[usize::from(b.load(Ordering::Relaxed))];
            if v != SPILLED {
                v
            } else {
                self.load_spilled(first + k)
            }
        }));
    }

    /// Every value, as an array (for tests and small tables).
    #[must_use]
    pub fn to_vec(&self) -> Vec<u16> {
        (0..self.len()).map(|i| self.load(i)).collect()
    }

    /// How many slots of `range` hold a value `f` accepts.
    pub fn count_in(&self, range: std::ops::Range<usize>, f: impl Fn(u16) -> bool) -> u64 {
        range.filter(|&i| f(self.load(i))).count() as u64
    }
}

/// See [`Cells::matcher`].
pub struct Matcher<'a> {
    cells: &'a Cells,
    byte: Option<u8>,
    v: u16,
}

impl Matcher<'_> {
    /// Whether slot `i` holds the value.
    #[inline]
    #[must_use]
    pub fn at(&self, i: usize) -> bool {
        let b = self.cells.bytes[i].load(Ordering::Relaxed);
        match self.byte {
            // a value the alphabet names is never spilled
            Some(want) => b == want,
            None => (b == ESC || b == LOCK) && self.cells.load(i) == self.v,
        }
    }
}

impl Default for Cells {
    /// No slots.
    fn default() -> Cells {
        Cells::new(0, super::GEN_ALPHABET, 0)
    }
}

impl PartialEq for Cells {
    fn eq(&self, other: &Cells) -> bool {
        self.len() == other.len()
            && (0..self.len())
                .into_par_iter()
                .all(|i| self.load(i) == other.load(i))
    }
}

impl Clone for Cells {
    fn clone(&self) -> Cells {
        let cells = Cells::new(self.len(), self.alphabet.clone(), 0);
        (0..self.len())
            .into_par_iter()
            .for_each(|i| cells.store(i, self.load(i)));
        cells
    }
}

impl std::fmt::Debug for Cells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cells")
            .field("len", &self.len())
            .field("spilled", &self.spilled())
            .finish()
    }
}

impl crate::format::Values for Cells {
    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        Cells::read_into(self, range, out);
    }

    fn count_into(&self, range: std::ops::Range<usize>, freq: &mut [u64]) {
        // by byte first: a spilled slot is counted by its value, its byte taken back out
        let mut bytes = [0u64; 256];
        for b in &self.bytes[range.clone()] {
            bytes[usize::from(b.load(Ordering::Relaxed))] += 1;
        }
        for (b, &n) in bytes.iter().enumerate() {
            let v = self.alphabet.decode[b];
            if n > 0 && v != SPILLED {
                freq[usize::from(v)] += n;
            }
        }
        if bytes[usize::from(ESC)] + bytes[usize::from(LOCK)] > 0 {
            for i in range {
                let b = self.bytes[i].load(Ordering::Relaxed);
                if b == ESC || b == LOCK {
                    freq[usize::from(self.load(i))] += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Alphabet = Alphabet::new(4, &[(0xFFFF, 1), (100, 3)]);

    #[test]
    fn named_values_take_a_byte_and_others_spill() {
        let c = Cells::new(10, SMALL, 0);
        for (i, v) in [0u16, 3, 4, 99, 100, 102, 103, 0xFFFF, 0xFFFE, 500]
            .into_iter()
            .enumerate()
        {
            c.store(i, v);
        }
        let got = c.to_vec();
        assert_eq!(got, [0, 3, 4, 99, 100, 102, 103, 0xFFFF, 0xFFFE, 500]);
        // 4, 99, 103, 0xFFFE and 500 are not in the alphabet
        assert_eq!(c.spilled(), 5);
        // out of the map again
        assert_eq!(c.compare_exchange(2, 4, 1), Ok(4));
        assert_eq!(c.compare_exchange(3, 98, 1), Err(99));
        assert_eq!(c.fetch_sub(9, 400), 500);
        assert_eq!(c.fetch_min(6, 50), 103);
        assert_eq!(c.to_vec(), [0, 3, 1, 99, 100, 102, 50, 0xFFFF, 0xFFFE, 100]);
        assert_eq!(c.spilled(), 3);
        // a compare-exchange from a named value to a spilled one
        assert_eq!(c.compare_exchange(0, 0, 7), Ok(0));
        assert_eq!(c.load(0), 7);
        assert_eq!(c.spilled(), 4);
    }

    #[test]
    fn concurrent_counts_through_the_map_are_exact() {
        // every slot counts down from 200 (spilled) to 0 (a byte) on 4 threads at once
        let c = Cells::new(64, SMALL, 200);
        assert_eq!(c.spilled(), 64);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        for i in 0..64 {
                            c.fetch_sub(i, 1);
                        }
                    }
                });
            }
        });
        assert!(c.to_vec().iter().all(|&v| v == 0));
        assert_eq!(c.spilled(), 0);
    }
}

//! The order of its digits a DTZ file keeps a side to move in ([`DigitOrder`]), chosen
//! per table and side by compressing a sample of the values in every order.
//!
//! A sample is up to [`MAX_WINDOWS`] runs of [`WINDOW`] consecutive numbers, at the same
//! pseudo-random places for every order (a fixed seed: the choice, and so the file, is
//! the same on every run), compressed at [`SAMPLE_LEVEL`]; an order scores its sample's
//! compressed bytes per position it holds (numbers that name no position, or a draw, are
//! filled as the file fills them, and cost next to nothing).

use rayon::prelude::*;

use crate::format::{self, UNUSED, Values};
use crate::index::{DigitOrder, TableIndex};

/// Numbers a sample window holds.
pub const WINDOW: usize = 1 << 14;

/// Windows of the sample every order is scored on first.
pub const FIRST_WINDOWS: u64 = 8;

/// Orders scored again on the whole sample: the best of the first round.
pub const KEPT: usize = 8;

/// Windows of the whole sample.
pub const MAX_WINDOWS: u64 = 32;

/// zstd level of the samples (the files use [`super::files::DTZ_ZSTD_LEVEL`]).
pub const SAMPLE_LEVEL: i32 = 6;

/// A side to move of a table's values, one at a time by scheme 1's index.
pub trait ValueAt: Sync {
    /// The value of index `i`.
    fn value_at(&self, i: u64) -> u16;

    /// Asks the processor to start loading what [`ValueAt::value_at`] of `i` reads (a
    /// hint, for a read soon: a digit order reads scheme 1's values far apart).
    fn prefetch(&self, _i: u64) {}
}

impl ValueAt for [u16] {
    fn value_at(&self, i: u64) -> u16 {
        self[i as usize]
    }

    fn prefetch(&self, i: u64) {
        if let Some(v) = self.get(i as usize) {
            crate::prefetch::prefetch(v);
        }
    }
}

/// How many numbers ahead [`InOrder::read_into`] prefetches the values it reads.
const PREFETCH_AHEAD: usize = 16;

thread_local! {
    /// [`InOrder::read_into`]'s indices of a range, kept between calls.
    static INDICES: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An index of [`InOrder::read_into`]'s buffer for a number that names no position.
const NO_INDEX: u64 = u64::MAX;

/// One side to move of a table's values (as [`Values`] in scheme 1's order, and one at a
/// time) read in a digit order: numbers that name no position read [`UNUSED`].
pub struct InOrder<'a, V: ?Sized> {
    pub values: &'a V,
    pub order: &'a DigitOrder,
}

impl<V: ValueAt + Values + ?Sized> Values for InOrder<'_, V> {
    fn len(&self) -> usize {
        self.order.size() as usize
    }

    /// The indices of the range first, then their values, each prefetched
    /// [`PREFETCH_AHEAD`] numbers before it is read: consecutive numbers are far apart in
    /// scheme 1's order, so each read is a cache miss, and the prefetches let several
    /// overlap.
    fn read_into(&self, range: std::ops::Range<usize>, out: &mut Vec<u16>) {
        out.clear();
        let range = range.start as u64..range.end as u64;
        INDICES.with_borrow_mut(|indices| {
            indices.clear();
            self.order
                .for_each_index(range, |i| indices.push(i.unwrap_or(NO_INDEX)));
            let prefetch = |i: u64| {
                if i != NO_INDEX {
                    self.values.prefetch(i);
                }
            };
            indices
                .iter()
                .take(PREFETCH_AHEAD)
                .for_each(|&i| prefetch(i));
            for (k, &i) in indices.iter().enumerate() {
                if let Some(&ahead) = indices.get(k + PREFETCH_AHEAD) {
                    prefetch(ahead);
                }
                out.push(if i == NO_INDEX {
                    UNUSED
                } else {
                    self.values.value_at(i)
                });
            }
        });
    }

    /// A row and a plane: the sizes of the last digit and of the last two (a number's
    /// neighbours one row or plane before differ in those digits only, so their values
    /// are often the same where the one before differs: KRQvKR's DTZ file 6.5 % smaller).
    fn fill_periods(&self) -> Vec<usize> {
        let radices = self.order.radices();
        let row = radices.last().copied().unwrap_or(1);
        let plane = row * radices.iter().rev().nth(1).copied().unwrap_or(1);
        vec![row as usize, plane as usize]
    }

    /// The values', counted in scheme 1's order (in runs: a tenth of the time), and the
    /// numbers that name no position as unused.
    fn frequencies(&self) -> Vec<u64> {
        let mut freq = self.values.frequencies();
        freq[usize::from(UNUSED)] += self.order.size() - self.values.len() as u64;
        freq
    }
}

/// The order of the digits of `index`'s table in which `values` (one side to move)
/// compress best on a sample (see the module documentation): every order scored on
/// [`FIRST_WINDOWS`] windows, the [`KEPT`] best again on [`MAX_WINDOWS`] (fewer in a small
/// table), the first of equal ones in [`DigitOrder::all`]'s order. `None` if `stop` said to
/// stop, or the table has no digit order.
pub fn best_order<V: ValueAt + Values + ?Sized>(
    index: &TableIndex,
    values: &V,
    stop: format::Stop<'_>,
) -> Option<DigitOrder> {
    best_orders(index, values, stop)?.into_iter().next()
}

/// Every order, best first: the [`KEPT`] that [`best_order`] scores on its whole sample
/// by that score, then the others by their first round's: for a caller that compares the
/// first few another way.
pub fn best_orders<V: ValueAt + Values + ?Sized>(
    index: &TableIndex,
    values: &V,
    stop: format::Stop<'_>,
) -> Option<Vec<DigitOrder>> {
    let orders: Vec<DigitOrder> = DigitOrder::all(index)
        .iter()
        .filter_map(|o| DigitOrder::new(index, o))
        .collect();
    let size = orders.first()?.size();
    let window = (WINDOW as u64).min(size);
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let starts: Vec<u64> = (0..(size / window).clamp(1, MAX_WINDOWS))
        .map(|_| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 16) % (size - window + 1)
        })
        .collect();
    // a compressor a thread: making one takes about as long as compressing a window
    let compressor = || zstd::bulk::Compressor::new(SAMPLE_LEVEL).ok();
    let score = |z: &mut Option<zstd::bulk::Compressor<'_>>,
                 order: &DigitOrder,
                 starts: &[u64]|
     -> Option<f64> {
        if stop() {
            return None;
        }
        let in_order = InOrder { values, order };
        let (mut bytes, mut held) = (0usize, 0usize);
        let mut values = Vec::new();
        let mut packed = Vec::new();
        for &s in starts {
            let s = s as usize;
            in_order.read_into(s..s + window as usize, &mut values);
            packed.clear();
            let mut last = values.iter().copied().find(|&v| v != UNUSED).unwrap_or(0);
            for &v in &values {
                if v != UNUSED {
                    held += 1;
                    last = v;
                }
                packed.push(last.min(255) as u8);
            }
            bytes += z
                .as_mut()
                .and_then(|z| z.compress(&packed).ok())
                .map_or(packed.len(), |c| c.len());
        }
        Some(if held == 0 {
            f64::INFINITY
        } else {
            bytes as f64 / held as f64
        })
    };
    let first = &starts[..starts.len().min(FIRST_WINDOWS as usize)];
    let scored: Vec<Option<f64>> = orders
        .par_iter()
        .map_init(compressor, |z, o| score(z, o, first))
        .collect();
    let mut ranked: Vec<(f64, usize)> = Vec::new();
    for (k, s) in scored.into_iter().enumerate() {
        ranked.push((s?, k));
    }
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let rest = ranked.split_off(KEPT.min(ranked.len()));
    let mut kept: Vec<usize> = ranked.into_iter().map(|(_, k)| k).collect();
    kept.sort_unstable();
    let rescored: Vec<Option<f64>> = kept
        .par_iter()
        .map_init(compressor, |z, &k| score(z, &orders[k], &starts))
        .collect();
    let mut best: Vec<(f64, usize)> = Vec::new();
    for (&k, s) in kept.iter().zip(rescored) {
        best.push((s?, k));
    }
    // stable: the first of equal ones in `DigitOrder::all`'s order (`kept` is sorted)
    best.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut orders: Vec<Option<DigitOrder>> = orders.into_iter().map(Some).collect();
    Some(
        best.into_iter()
            .chain(rest)
            .filter_map(|(_, k)| orders[k].take())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;

    /// Values read in a digit order are the side's values at the indices the order
    /// numbers, [`UNUSED`] where a number names none, whatever the range read.
    #[test]
    fn values_in_order_are_the_values_at_their_indices() {
        let m: Material = "KRvKN".parse().unwrap();
        let index = TableIndex::new(m);
        let values: Vec<u16> = (0..index.size()).map(|i| (i % 1000) as u16).collect();
        for order in [[0u8, 1, 2, 3], [3, 1, 2, 0], [2, 0, 3, 1]] {
            let d = DigitOrder::new(&index, &order).unwrap();
            let in_order = InOrder {
                values: values.as_slice(),
                order: &d,
            };
            let mut out = Vec::new();
            for range in [
                0..5000,
                77_777..90_001,
                d.size() as usize - 3000..d.size() as usize,
            ] {
                in_order.read_into(range.clone(), &mut out);
                assert_eq!(out.len(), range.len());
                for (j, &v) in range.zip(&out) {
                    let want = d.to_index(j as u64).map_or(UNUSED, |i| values[i as usize]);
                    assert_eq!(v, want, "{order:?} {j}");
                }
            }
        }
    }

    /// The order chosen for values that depend on one digit only puts that digit first:
    /// every other digit then leaves the value alone along runs of numbers.
    #[test]
    fn values_along_one_digit_put_it_first() {
        let m: Material = "KRvKN".parse().unwrap();
        let index = TableIndex::new(m);
        // a value per square of the knight (the last digit in scheme 1), pseudo-random
        let of_square = |sq: u64| ((sq * 2_654_435_761) >> 7) as u16 % 200;
        let values: Vec<u16> = (0..index.size()).map(|i| of_square(i % 64)).collect();
        let best = best_order(&index, values.as_slice(), &|| false).unwrap();
        assert_eq!(best.order()[0], 3, "{:?}", best.order());
        assert!(best_order(&index, values.as_slice(), &|| true).is_none());
    }
}

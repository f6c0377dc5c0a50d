//! A table's positions in another order of their digits: the order a DTZ file keeps its
//! values in (index scheme [`DIGIT_ORDER_SCHEME`]).
//!
//! Scheme 1 numbers a position by the placement of both shahs (one digit of 462, or
//! 1,806 with pawns), then each group of like pieces. A *digit order* takes the same
//! digits with the shahs apart: the White shah's square among those scheme 1 lets it
//! stand on (the 10 of the triangle a1-d1-d4, or the 32 of files a-d with pawns), the
//! Black shah's among all 64, and each group's combination as in scheme 1. Any
//! permutation of these digits, the most significant first, numbers the positions
//! anew; a number whose shahs scheme 1 does not place (adjacent, or off the diagonal's
//! canonical side) names no position. Which order makes a file smallest depends on the
//! table: a DTZ's values repeat along some pieces' moves far more than along others'
//! (KBvKP's DTZ file, 432,792 bytes in scheme 1's order, is 269,361 in the order the
//! generator picks for it). The generator tries them on a sample of each table
//! (`generate::digit_order`) and names the one it keeps in the file's figures.

use super::{DIVIDEND_BITS, Divisor, NO_KK, TableIndex, kk_table};

/// The index scheme of a file whose values are in a [`DigitOrder`] (named in its figures).
pub const DIGIT_ORDER_SCHEME: u32 = 3;

/// Most digits a table has: the two shahs and a group for each other man (6 men).
pub const MAX_DIGITS: usize = 6;

/// A permutation of a table's digits (see the module documentation) and the numbering it
/// makes. Digit `0` is the White shah, `1` the Black shah, `2 + k` scheme 1's group `k`.
#[derive(Clone, Debug)]
pub struct DigitOrder {
    /// The digits, the most significant first.
    order: Vec<u8>,
    /// Per digit: its number of values.
    radix: [u64; MAX_DIGITS],
    /// Per digit: divides by its radix.
    radix_div: [Divisor; MAX_DIGITS],
    /// Per digit: its place value in this order.
    stride: [u64; MAX_DIGITS],
    /// Per group: its place value in scheme 1.
    weight: [u64; MAX_DIGITS],
    /// Per group: divides by its number of combinations.
    group_div: [Divisor; MAX_DIGITS],
    groups: usize,
    /// Scheme 1's product of the groups' sizes, and its divisor.
    rest: u64,
    rest_div: Divisor,
    /// Number of indices: the product of the radices.
    size: u64,
    /// kk number -> (White shah's digit, Black shah's square).
    kk_digits: Vec<(u8, u8)>,
    /// White shah's digit * 64 + Black shah's square -> kk number, or `NO_KK`.
    kk_of: Vec<u32>,
}

impl PartialEq for DigitOrder {
    fn eq(&self, other: &DigitOrder) -> bool {
        self.order == other.order && self.radix == other.radix && self.rest == other.rest
    }
}

impl Eq for DigitOrder {}

impl DigitOrder {
    /// How many digits the table of `index` has.
    #[must_use]
    pub fn digits(index: &TableIndex) -> usize {
        2 + index.groups.len()
    }

    /// The numbering of `index`'s positions (scheme 1) in the order `order` of its digits,
    /// the most significant first; `None` if `order` is not a permutation of them, the
    /// index is not scheme 1's, or the numbers would not fit the index's integers.
    #[must_use]
    pub fn new(index: &TableIndex, order: &[u8]) -> Option<DigitOrder> {
        let n = DigitOrder::digits(index);
        if index.scheme() != 1 || order.len() != n || n > MAX_DIGITS {
            return None;
        }
        let mut seen = [false; MAX_DIGITS];
        for &d in order {
            if usize::from(d) >= n || std::mem::replace(&mut seen[usize::from(d)], true) {
                return None;
            }
        }
        let kk = kk_table(index.pawns);
        // the White shah's squares, in the order of squares
        let mut wk_digit = [u8::MAX; 64];
        let mut wk_count = 0u8;
        for &(wk, _) in &kk.pairs {
            if wk_digit[usize::from(wk)] == u8::MAX {
                wk_digit[usize::from(wk)] = wk_count;
                wk_count += 1;
            }
        }
        let kk_digits: Vec<(u8, u8)> = kk
            .pairs
            .iter()
            .map(|&(wk, bk)| (wk_digit[usize::from(wk)], bk))
            .collect();
        let mut kk_of = vec![NO_KK; usize::from(wk_count) * 64];
        for (k, &(w, b)) in kk_digits.iter().enumerate() {
            kk_of[usize::from(w) * 64 + usize::from(b)] = k as u32;
        }
        let one = Divisor::new(1);
        let mut radix = [1u64; MAX_DIGITS];
        radix[0] = u64::from(wk_count);
        radix[1] = 64;
        let mut weight = [0u64; MAX_DIGITS];
        let mut group_div = [one; MAX_DIGITS];
        for (k, g) in index.groups.iter().enumerate() {
            radix[2 + k] = g.size;
            weight[k] = g.weight;
            group_div[k] = g.size_div;
        }
        let mut stride = [0u64; MAX_DIGITS];
        let mut size: u64 = 1;
        for &d in order.iter().rev() {
            stride[usize::from(d)] = size;
            size = size.checked_mul(radix[usize::from(d)])?;
        }
        if size >= 1 << DIVIDEND_BITS {
            return None;
        }
        let mut radix_div = [one; MAX_DIGITS];
        for d in 0..n {
            radix_div[d] = Divisor::new(radix[d]);
        }
        Some(DigitOrder {
            order: order.to_vec(),
            radix,
            radix_div,
            stride,
            weight,
            group_div,
            groups: index.groups.len(),
            rest: index.rest,
            rest_div: index.rest_div,
            size,
            kk_digits,
            kk_of,
        })
    }

    /// Every order of the digits of `index`'s table, in lexicographic order (the identity
    /// first).
    #[must_use]
    pub fn all(index: &TableIndex) -> Vec<Vec<u8>> {
        let n = DigitOrder::digits(index) as u8;
        let mut out: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..n {
            let mut next = Vec::new();
            for p in &out {
                for d in (0..n).filter(|d| !p.contains(d)) {
                    let mut q = p.clone();
                    q.push(d);
                    next.push(q);
                }
            }
            out = next;
        }
        out
    }

    /// The digits, the most significant first.
    #[must_use]
    pub fn order(&self) -> &[u8] {
        &self.order
    }

    /// The size of each digit, in the order (the most significant first).
    #[must_use]
    pub fn radices(&self) -> Vec<u64> {
        self.order
            .iter()
            .map(|&d| self.radix[usize::from(d)])
            .collect()
    }

    /// Number of indices in this order (more than scheme 1's: some name no position).
    #[must_use]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The number in this order of scheme 1's index `i` (below its size).
    #[inline]
    #[must_use]
    pub fn from_index(&self, i: u64) -> u64 {
        let (kk, mut rest) = self.rest_div.div_rem(i);
        let (w, b) = self.kk_digits[kk as usize];
        let mut j = u64::from(w) * self.stride[0] + u64::from(b) * self.stride[1];
        for k in (0..self.groups).rev() {
            let (q, c) = self.group_div[k].div_rem(rest);
            j += c * self.stride[2 + k];
            rest = q;
        }
        j
    }

    /// Calls `f` with [`DigitOrder::to_index`] of each number of `range` in turn (below
    /// [`DigitOrder::size`]), counting the digits up rather than dividing each number.
    pub fn for_each_index(&self, range: std::ops::Range<u64>, mut f: impl FnMut(Option<u64>)) {
        if range.is_empty() {
            return;
        }
        let n = self.order.len();
        // the digits of the first number, by place in the order
        let mut digit = [0u64; MAX_DIGITS];
        let mut x = range.start;
        for p in (0..n).rev() {
            let (q, r) = self.radix_div[usize::from(self.order[p])].div_rem(x);
            digit[p] = r;
            x = q;
        }
        let last = usize::from(self.order[n - 1]);
        let last_radix = self.radix[last];
        // the step the last digit makes in scheme 1's index, where it is a group's
        let last_weight = (last >= 2).then(|| self.weight[last - 2]);
        let index_of = |digit: &[u64; MAX_DIGITS]| {
            let mut by_digit = [0u64; MAX_DIGITS];
            for p in 0..n {
                by_digit[usize::from(self.order[p])] = digit[p];
            }
            let kk = self.kk_of[(by_digit[0] * 64 + by_digit[1]) as usize];
            (kk != NO_KK).then(|| {
                let mut i = u64::from(kk) * self.rest;
                for k in 0..self.groups {
                    i += by_digit[2 + k] * self.weight[k];
                }
                i
            })
        };
        let mut i = index_of(&digit);
        for k in range.clone() {
            f(i);
            if k + 1 == range.end {
                break;
            }
            // the next number: the last digit up by one, carrying
            digit[n - 1] += 1;
            if digit[n - 1] < last_radix {
                if let (Some(w), Some(i)) = (last_weight, i.as_mut()) {
                    *i += w;
                    continue;
                }
            } else {
                let mut p = n - 1;
                while p > 0 && digit[p] == self.radix[usize::from(self.order[p])] {
                    digit[p] = 0;
                    p -= 1;
                    digit[p] += 1;
                }
            }
            i = index_of(&digit);
        }
    }

    /// Scheme 1's index numbered `j` in this order (below [`DigitOrder::size`]), or `None`
    /// if `j` places the shahs where scheme 1 does not.
    #[inline]
    #[must_use]
    pub fn to_index(&self, j: u64) -> Option<u64> {
        let mut digit = [0u64; MAX_DIGITS];
        let mut x = j;
        for &d in self.order.iter().rev() {
            let (q, r) = self.radix_div[usize::from(d)].div_rem(x);
            digit[usize::from(d)] = r;
            x = q;
        }
        let kk = self.kk_of[(digit[0] * 64 + digit[1]) as usize];
        if kk == NO_KK {
            return None;
        }
        let mut i = u64::from(kk) * self.rest;
        for k in 0..self.groups {
            i += digit[2 + k] * self.weight[k];
        }
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;

    /// Every index of scheme 1 has one number in each order, and that number leads back
    /// to it; every other number names no position. On tables with and without pawns,
    /// with a group of two, in every order of their digits.
    #[test]
    fn every_order_numbers_each_index_once() {
        for m in ["KRvKN", "KPvKP", "KRvKR", "KNvKP"] {
            let m: Material = m.parse().unwrap();
            let index = TableIndex::new(m);
            let orders = DigitOrder::all(&index);
            let n = DigitOrder::digits(&index);
            assert_eq!(orders.len(), (1..=n).product::<usize>(), "{m}");
            for order in orders {
                let d = DigitOrder::new(&index, &order).unwrap();
                assert!(d.size() >= index.size(), "{m} {order:?}");
                let mut hit = vec![false; d.size() as usize];
                for i in 0..index.size() {
                    let j = d.from_index(i);
                    assert!(j < d.size(), "{m} {order:?} {i}");
                    assert!(
                        !std::mem::replace(&mut hit[j as usize], true),
                        "{m} {order:?} {i}"
                    );
                    assert_eq!(d.to_index(j), Some(i), "{m} {order:?} {i} -> {j}");
                }
                for (j, &h) in hit.iter().enumerate() {
                    if !h {
                        assert_eq!(d.to_index(j as u64), None, "{m} {order:?} {j}");
                    }
                }
            }
        }
    }

    /// With a group of two like pieces (a digit of 2,016 combinations): a sample of
    /// indices in three orders, there and back, and counting up as dividing.
    #[test]
    fn a_group_of_two_is_one_digit() {
        let m: Material = "KRRvKN".parse().unwrap();
        let index = TableIndex::new(m);
        assert_eq!(DigitOrder::digits(&index), 4);
        for order in [[0u8, 1, 2, 3], [2, 1, 3, 0], [3, 2, 0, 1]] {
            let d = DigitOrder::new(&index, &order).unwrap();
            assert_eq!(d.size(), 10 * 64 * 2016 * 64);
            for i in (0..index.size()).step_by(9973) {
                assert_eq!(d.to_index(d.from_index(i)), Some(i), "{order:?} {i}");
            }
            let start = d.size() / 3;
            let mut j = start;
            d.for_each_index(start..start + 300_000, |i| {
                assert_eq!(i, d.to_index(j), "{order:?} {j}");
                j += 1;
            });
        }
    }

    /// Counting the digits up gives the indices dividing gives, from any number on.
    #[test]
    fn counting_up_finds_the_indices() {
        for m in ["KRvKN", "KPvKP", "KRvKR"] {
            let m: Material = m.parse().unwrap();
            let index = TableIndex::new(m);
            for order in DigitOrder::all(&index) {
                let d = DigitOrder::new(&index, &order).unwrap();
                for range in [0..d.size(), 63..200_000, d.size() - 5000..d.size(), 7..7] {
                    let mut j = range.start;
                    d.for_each_index(range.clone(), |i| {
                        assert_eq!(i, d.to_index(j), "{m} {order:?} {j}");
                        j += 1;
                    });
                    assert_eq!(j, range.end);
                }
            }
        }
    }

    /// The digits' place values follow the order: the last digit changes fastest.
    #[test]
    fn the_last_digit_is_the_fastest() {
        let m: Material = "KRvKN".parse().unwrap();
        let index = TableIndex::new(m);
        // the Black shah last: moving it one square moves the number by one
        let d = DigitOrder::new(&index, &[0, 2, 3, 1]).unwrap();
        let board = |fen: &str| *crate::Position::from_fen(fen).unwrap().board();
        let i = index
            .encode(&board("8/8/8/3n4/8/8/1R6/K5k1 w - - 0 1"))
            .unwrap();
        let k = index
            .encode(&board("8/8/8/3n4/8/8/1R6/K6k w - - 0 1"))
            .unwrap();
        assert_eq!(d.size(), 10 * 64 * 64 * 64);
        assert_eq!(d.from_index(k) - d.from_index(i), 1);
        assert!(DigitOrder::new(&index, &[0, 1, 2]).is_none());
        assert!(DigitOrder::new(&index, &[0, 1, 2, 2]).is_none());
        assert!(DigitOrder::new(&index, &[0, 1, 2, 4]).is_none());
    }
}

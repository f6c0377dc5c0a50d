//! Counting the figures of a generated table ([`TableStats`]) over all legal positions
//! with symmetry expanded (every distinct placement once), so they compare with other
//! tools.

use rayon::prelude::*;

use super::{Cells, Progress, UNUSED};
use crate::color::Color;
use crate::fen::Fen;
use crate::index::TableIndex;
use crate::position::Position;
use crate::value::Value;

pub use crate::stats::{Longest, SideStats, TableStats};

#[derive(Default, Clone, Copy)]
struct Acc {
    legal: u64,
    win: u64,
    draw: u64,
    loss: u64,
    /// (distance, index) of the longest win and loss, the index in the files' order
    /// ([`TableIndex::file_index`]); the lowest wins ties.
    longest_win: Option<(u32, u64)>,
    longest_loss: Option<(u32, u64)>,
}

fn better(a: Option<(u32, u64)>, b: Option<(u32, u64)>) -> Option<(u32, u64)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 > x.0 || (y.0 == x.0 && y.1 < x.1) {
            y
        } else {
            x
        }),
        (x, None) => x,
        (None, y) => y,
    }
}

impl Acc {
    fn merge(self, o: Acc) -> Acc {
        Acc {
            legal: self.legal + o.legal,
            win: self.win + o.win,
            draw: self.draw + o.draw,
            loss: self.loss + o.loss,
            longest_win: better(self.longest_win, o.longest_win),
            longest_loss: better(self.longest_loss, o.longest_loss),
        }
    }
}

/// How many distinct placements the canonical board of index `i` stands for, where the
/// index may be a mirror image ([`TableIndex::may_be_mirror`]: both shahs on the
/// diagonal, no pawns): 4 if the board is its own mirror, else 8.
fn mirror_multiplicity(index: &TableIndex, i: u64) -> u64 {
    match index.decode(i) {
        Some(board) if board.transform(crate::square::Square::flip_diagonal) == board => 4,
        _ => 8,
    }
}

/// The figures of a table counted so far (a slice at a time, [`Counts::add`]).
#[derive(Default, Clone, Copy)]
pub(crate) struct Counts([Acc; 2]);

impl Counts {
    /// Adds the figures of the indices `slice` (both sides to move) of a finished table,
    /// whose codes are in `codes` (slots as [`TableIndex::slot`] numbers them).
    pub(crate) fn add(
        &mut self,
        index: &TableIndex,
        codes: &Cells,
        slice: std::ops::Range<u64>,
        progress: &dyn Progress,
    ) {
        let n = index.size();
        // slots per shah pair, and the placements the board of an index that is no
        // mirror image stands for (the symmetries of the index)
        let rest = n / index.kk_count();
        let plain = if index.material().has_pawns() { 2 } else { 8 };
        progress.begin(
            &format!("{} statistics", index.material()),
            2 * (slice.end - slice.start),
        );
        let side = |turn: Color| -> Acc {
            let base = turn.index() as u64 * n;
            (slice.start >> 16..slice.end.div_ceil(1 << 16))
                .into_par_iter()
                .map(|chunk| {
                    let lo = (chunk << 16).max(slice.start);
                    let hi = ((chunk + 1) << 16).min(slice.end);
                    let mut a = Acc::default();
                    let mut run = lo;
                    while run < hi {
                        // the slots of one shah pair: only where it may be a mirror
                        // image does the board tell the multiplicity (only without
                        // pawns, where the shah pair leads the index)
                        let end = ((run / rest + 1) * rest).min(hi);
                        let mirror = index.may_be_mirror(run);
                        for i in run..end {
                            let code = codes.load((base + i) as usize);
                            if code == UNUSED {
                                continue;
                            }
                            let k = if mirror {
                                mirror_multiplicity(index, i)
                            } else {
                                plain
                            };
                            a.legal += k;
                            // the example of a longest value is the first in the files'
                            // order
                            match Value::from_dtm_code(code) {
                                Value::Win(d) => {
                                    a.win += k;
                                    if a.longest_win.is_none_or(|(l, _)| d >= l) {
                                        let f = index.file_index(i).unwrap_or(u64::MAX);
                                        a.longest_win = better(a.longest_win, Some((d, f)));
                                    }
                                }
                                Value::Draw => a.draw += k,
                                Value::Loss(d) => {
                                    a.loss += k;
                                    if a.longest_loss.is_none_or(|(l, _)| d >= l) {
                                        let f = index.file_index(i).unwrap_or(u64::MAX);
                                        a.longest_loss = better(a.longest_loss, Some((d, f)));
                                    }
                                }
                            }
                        }
                        run = end;
                    }
                    progress.advance(hi - lo);
                    a
                })
                .reduce(Acc::default, Acc::merge)
        };
        for turn in Color::ALL {
            self.0[turn.index()] = self.0[turn.index()].merge(side(turn));
        }
        progress.end();
    }

    /// The figures of every slice added.
    pub(crate) fn finish(self, index: &TableIndex) -> TableStats {
        // the examples are kept as the files number them
        let index = &TableIndex::new(index.material());
        let side = |turn: Color| {
            let acc = self.0[turn.index()];
            let fen_of = |i: u64| {
                let board = index.decode(i).expect("a used index decodes");
                Fen::from_position(&Position::from_board_unchecked(board, turn)).to_string()
            };
            SideStats {
                legal: acc.legal,
                win: acc.win,
                draw: acc.draw,
                loss: acc.loss,
                longest_win: acc.longest_win.map(|(d, i)| Longest {
                    plies: d,
                    fen: fen_of(i),
                }),
                longest_loss: acc.longest_loss.map(|(d, i)| Longest {
                    plies: d,
                    fen: fen_of(i),
                }),
            }
        };
        TableStats {
            white: side(Color::White),
            black: side(Color::Black),
        }
    }
}

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
    /// (distance, slot) of the longest win and loss; the lowest slot wins ties.
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

/// Counts the figures of a finished table.
pub(crate) fn count(index: &TableIndex, codes: &Cells, progress: &dyn Progress) -> TableStats {
    let n = index.size();
    // slots per shah pair, and the placements the board of an index that is no mirror
    // image stands for (the symmetries of the index)
    let rest = n / index.kk_count();
    let plain = if index.material().has_pawns() { 2 } else { 8 };
    progress.begin(&format!("{} statistics", index.material()), 2 * n);
    let side = |turn: Color| -> SideStats {
        let base = turn.index() as u64 * n;
        let acc = (0..n.div_ceil(1 << 16))
            .into_par_iter()
            .map(|chunk| {
                let lo = chunk << 16;
                let hi = (lo + (1 << 16)).min(n);
                let mut a = Acc::default();
                let mut run = lo;
                while run < hi {
                    // the slots of one shah pair: only where it may be a mirror image
                    // does the board tell the multiplicity
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
                        match Value::from_dtm_code(code) {
                            Value::Win(d) => {
                                a.win += k;
                                a.longest_win = better(a.longest_win, Some((d, i)));
                            }
                            Value::Draw => a.draw += k,
                            Value::Loss(d) => {
                                a.loss += k;
                                a.longest_loss = better(a.longest_loss, Some((d, i)));
                            }
                        }
                    }
                    run = end;
                }
                progress.advance(hi - lo);
                a
            })
            .reduce(Acc::default, Acc::merge);
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
    let stats = TableStats {
        white: side(Color::White),
        black: side(Color::Black),
    };
    progress.end();
    stats
}

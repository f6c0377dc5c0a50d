//! Game values: win, draw or loss for the side to move, and the distance to the end.

use std::cmp::Ordering;
use std::fmt;

use crate::color::Color;
use crate::position::Position;
use crate::rules::{Outcome, RuleSet};

/// Win, draw or loss, from the side to move's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wdl {
    Loss,
    Draw,
    Win,
}

impl Wdl {
    /// `win`, `draw` or `loss`, as in the JSON output.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Wdl::Loss => "loss",
            Wdl::Draw => "draw",
            Wdl::Win => "win",
        }
    }

    /// The same result from the other side's point of view.
    #[must_use]
    pub const fn flip(self) -> Wdl {
        match self {
            Wdl::Loss => Wdl::Win,
            Wdl::Draw => Wdl::Draw,
            Wdl::Win => Wdl::Loss,
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The value of a position for the side to move under perfect play: a win or a loss with
/// its distance in plies to the end of the game (DTM: shah mat, stalemate or bare king,
/// the winner hurrying, the loser delaying), or a draw.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Win(u32),
    Draw,
    Loss(u32),
}

impl Value {
    #[must_use]
    pub const fn wdl(self) -> Wdl {
        match self {
            Value::Win(_) => Wdl::Win,
            Value::Draw => Wdl::Draw,
            Value::Loss(_) => Wdl::Loss,
        }
    }

    /// Plies to the end of the game, `None` for a draw.
    #[must_use]
    pub const fn dtm(self) -> Option<u32> {
        match self {
            Value::Win(d) | Value::Loss(d) => Some(d),
            Value::Draw => None,
        }
    }

    /// The value of the position before a move, for the side that made the move, given the
    /// value of the position after it (for the side to move there).
    #[must_use]
    pub const fn parent(self) -> Value {
        match self {
            Value::Win(d) => Value::Loss(d + 1),
            Value::Draw => Value::Draw,
            Value::Loss(d) => Value::Win(d + 1),
        }
    }

    /// A total order: better for the side to move is greater. Shorter wins are better,
    /// longer losses are better.
    pub(crate) fn rank(self) -> i64 {
        match self {
            Value::Win(d) => i64::from(u32::MAX) - i64::from(d) + 1,
            Value::Draw => 0,
            Value::Loss(d) => -(i64::from(u32::MAX) - i64::from(d) + 1),
        }
    }

    /// Storage code in DTM files: 0 a draw, `d + 1` a decided value at distance `d` (odd
    /// distances are wins, even ones losses, for the side to move). `None` if the distance
    /// does not fit.
    #[must_use]
    pub fn to_dtm_code(self) -> Option<u16> {
        match self {
            Value::Draw => Some(0),
            Value::Win(d) | Value::Loss(d) => {
                let parity_ok = matches!(self, Value::Win(_)) == (d % 2 == 1);
                if !parity_ok {
                    return None;
                }
                u16::try_from(d + 1).ok().filter(|&c| c < u16::MAX)
            }
        }
    }

    /// The value of a DTM storage code.
    #[must_use]
    pub const fn from_dtm_code(code: u16) -> Value {
        if code == 0 {
            Value::Draw
        } else {
            let d = code as u32 - 1;
            if d % 2 == 1 {
                Value::Win(d)
            } else {
                Value::Loss(d)
            }
        }
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Value) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(d) => write!(f, "win in {d} plies"),
            Value::Draw => f.write_str("draw"),
            Value::Loss(d) => write!(f, "loss in {d} plies"),
        }
    }
}

impl Value {
    /// The value of a position where the game has ended (mate, stalemate, bare shah), or
    /// `None` if the game goes on.
    #[must_use]
    pub fn of_ended(pos: &Position, rules: RuleSet) -> Option<Value> {
        pos.outcome(rules).map(|outcome| match outcome {
            Outcome::Draw { .. } => Value::Draw,
            Outcome::Decisive { winner, .. } if winner == pos.turn() => Value::Win(0),
            Outcome::Decisive { .. } => Value::Loss(0),
        })
    }

    /// The value of a position whose material the rules decide alone (a bare side, or
    /// both). `None` if a table is needed: tables hold their own mates and stalemates, so
    /// a finished game of a table's material is looked up like any other position.
    #[must_use]
    pub fn of_decided(pos: &Position, rules: RuleSet) -> Option<Value> {
        // Tables hold their own mates and stalemates: only a bare side needs the rules.
        if !pos.is_bare(Color::White) && !pos.is_bare(Color::Black) {
            return None;
        }
        if let Some(v) = Value::of_ended(pos, rules) {
            return Some(v);
        }
        // A bare side to move that may still reply (bare-king=counter): every reply ends
        // the game, so one ply decides.
        pos.legal_moves()
            .iter()
            .map(|m| {
                let child = pos.play_unchecked(m);
                Value::of_decided(&child, rules).map(Value::parent)
            })
            .try_fold(None::<Value>, |best, v| {
                let v = v?;
                Some(Some(best.map_or(v, |b| b.max(v))))
            })
            .flatten()
    }
}

/// The five-valued result under a move rule, from the side to move's point of view: a
/// *cursed win* wins without the move rule but not with it, a *blessed loss* loses without
/// it but is saved by it. Without a move rule there are only the three plain values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Loss,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl Category {
    /// `win`, `cursed-win`, `draw`, `blessed-loss` or `loss`, as in the JSON output.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Category::Loss => "loss",
            Category::BlessedLoss => "blessed-loss",
            Category::Draw => "draw",
            Category::CursedWin => "cursed-win",
            Category::Win => "win",
        }
    }

    /// The same result from the other side's point of view.
    #[must_use]
    pub const fn flip(self) -> Category {
        match self {
            Category::Loss => Category::Win,
            Category::BlessedLoss => Category::CursedWin,
            Category::Draw => Category::Draw,
            Category::CursedWin => Category::BlessedLoss,
            Category::Win => Category::Loss,
        }
    }

    /// The result without the move rule.
    #[must_use]
    pub const fn wdl(self) -> Wdl {
        match self {
            Category::Loss | Category::BlessedLoss => Wdl::Loss,
            Category::Draw => Wdl::Draw,
            Category::CursedWin | Category::Win => Wdl::Win,
        }
    }

    /// The result under the move rule: a cursed win and a blessed loss are draws.
    #[must_use]
    pub const fn wdl_under_rule(self) -> Wdl {
        match self {
            Category::Loss => Wdl::Loss,
            Category::Win => Wdl::Win,
            _ => Wdl::Draw,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A position's DTZ: plies to the next zeroing move (a capture or a pawn move) or to the
/// end of the game, the winner hurrying to a zeroing move that keeps its win, the loser
/// delaying it; exact, not rounded. With its category under the table's move rule.
///
/// Under `move-rule=70`, a zeroing move into a cursed win or a blessed loss counts 140
/// plies more than it takes (as if the rule's count had to run out first), so that every
/// value above 140 plies is a cursed win or a blessed loss and the order of values is the
/// order of preference. Without a move rule the plies are the plain count.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dtz {
    pub category: Category,
    /// Plies; 0 for a draw and for a game already over.
    pub plies: u32,
}

impl Dtz {
    /// The value as a signed number as engines use it: positive for a win (cursed or
    /// not), negative for a loss, 0 for a draw.
    #[must_use]
    pub fn signed(self) -> i64 {
        match self.category.wdl() {
            Wdl::Win => i64::from(self.plies),
            Wdl::Draw => 0,
            Wdl::Loss => -i64::from(self.plies),
        }
    }

    /// The category of a decided position with DTZ `plies` under `move_rule`, given its
    /// result without the move rule.
    #[must_use]
    pub fn from_plies(wdl: Wdl, plies: u32, move_rule: crate::rules::MoveRule) -> Dtz {
        let over = move_rule.plies().is_some_and(|limit| plies > limit);
        let category = match (wdl, over) {
            (Wdl::Draw, _) => Category::Draw,
            (Wdl::Win, false) => Category::Win,
            (Wdl::Win, true) => Category::CursedWin,
            (Wdl::Loss, false) => Category::Loss,
            (Wdl::Loss, true) => Category::BlessedLoss,
        };
        Dtz {
            category,
            plies: if wdl == Wdl::Draw { 0 } else { plies },
        }
    }

    /// A total order: better for the side to move is greater (a quick win before a slow
    /// one, every win before a cursed one, a long loss before a short one).
    #[must_use]
    pub fn rank(self) -> i64 {
        let p = i64::from(self.plies);
        match self.category.wdl() {
            Wdl::Win => (1 << 40) - p,
            Wdl::Draw => 0,
            Wdl::Loss => p - (1 << 40),
        }
    }
}

impl fmt::Display for Dtz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.category {
            Category::Draw => f.write_str("draw"),
            c => write!(f, "{c}, zeroing in {} plies", self.plies),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtz_categories_and_order() {
        use crate::rules::MoveRule;
        let w = |p| Dtz::from_plies(Wdl::Win, p, MoveRule::Seventy);
        let l = |p| Dtz::from_plies(Wdl::Loss, p, MoveRule::Seventy);
        assert_eq!(w(140).category, Category::Win);
        assert_eq!(w(141).category, Category::CursedWin);
        assert_eq!(l(141).category, Category::BlessedLoss);
        assert_eq!(l(140).category, Category::Loss);
        assert_eq!(
            Dtz::from_plies(Wdl::Win, 500, MoveRule::None).category,
            Category::Win
        );
        assert!(w(1).rank() > w(141).rank());
        assert!(w(300).rank() > Dtz::from_plies(Wdl::Draw, 0, MoveRule::None).rank());
        assert!(l(141).rank() > l(3).rank());
        assert_eq!(l(7).signed(), -7);
        assert_eq!(Category::CursedWin.flip(), Category::BlessedLoss);
        assert_eq!(Category::CursedWin.wdl_under_rule(), Wdl::Draw);
    }

    #[test]
    fn order_prefers_short_wins_and_long_losses() {
        assert!(Value::Win(1) > Value::Win(3));
        assert!(Value::Win(99) > Value::Draw);
        assert!(Value::Draw > Value::Loss(100));
        assert!(Value::Loss(10) > Value::Loss(2));
        assert_eq!(Value::Loss(4).parent(), Value::Win(5));
    }

    #[test]
    fn codes_round_trip() {
        for v in [
            Value::Draw,
            Value::Loss(0),
            Value::Win(1),
            Value::Loss(300),
            Value::Win(301),
        ] {
            assert_eq!(Value::from_dtm_code(v.to_dtm_code().unwrap()), v);
        }
        assert_eq!(Value::Win(2).to_dtm_code(), None);
    }
}

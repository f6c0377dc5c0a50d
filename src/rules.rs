//! The rule set a game (and a table) is played under, and how a game ends.
//!
//! The default is `bare-king=counter,stalemate=loss`: the traditional ruling that a bared
//! side keeps one reply and draws if with it it captures the opponent's last piece, and
//! that a stalemated side loses. See `docs/RULES.md` in the repository.

use std::fmt;
use std::str::FromStr;

use crate::color::Color;

/// When does losing one's last piece (a *bare* shah) end the game?
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum BareKing {
    /// The bared side has one reply; if it captures the opponent's last piece with it the
    /// game is drawn, otherwise the bared side has lost.
    #[default]
    Counter,
    /// The game ends the moment a side is bared: the bared side has lost.
    Immediate,
}

/// What a stalemate (no legal move, not in check) means for the stalemated side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Stalemate {
    /// The stalemated side loses (the shatranj rule).
    #[default]
    Loss,
    /// Stalemate is a draw, as in modern chess.
    Draw,
}

/// Whether a run of plies without a capture or a pawn move draws the game.
///
/// It changes no win, draw or loss of the game itself, nor its distance to mate: it
/// decides only which wins can still be won in time. WDL and DTM files are therefore the
/// same under both, and only the DTZ file (and the five-valued category) depends on it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum MoveRule {
    /// No such rule: today's tables, and the game of the manuscripts.
    #[default]
    None,
    /// 140 plies (70 moves by each side) without a capture or a pawn move draw the game,
    /// as Fairy-Stockfish, Cute Chess and the online servers play shatranj.
    Seventy,
}

impl MoveRule {
    /// `none` or `70`, as in rule-set strings.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            MoveRule::None => "none",
            MoveRule::Seventy => "70",
        }
    }

    /// The plies without a zeroing move that draw the game, if there is such a rule.
    #[must_use]
    pub const fn plies(self) -> Option<u32> {
        match self {
            MoveRule::None => None,
            MoveRule::Seventy => Some(140),
        }
    }
}

/// A complete rule set. Part of every table's identity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RuleSet {
    pub bare_king: BareKing,
    pub stalemate: Stalemate,
    /// The move rule (see [`MoveRule`]): part of the identity of DTZ files only.
    pub move_rule: MoveRule,
}

impl RuleSet {
    /// All rule sets without a move rule (those of WDL and DTM files), the default first.
    pub const ALL: [RuleSet; 4] = [
        RuleSet {
            bare_king: BareKing::Counter,
            stalemate: Stalemate::Loss,
            move_rule: MoveRule::None,
        },
        RuleSet {
            bare_king: BareKing::Immediate,
            stalemate: Stalemate::Loss,
            move_rule: MoveRule::None,
        },
        RuleSet {
            bare_king: BareKing::Counter,
            stalemate: Stalemate::Draw,
            move_rule: MoveRule::None,
        },
        RuleSet {
            bare_king: BareKing::Immediate,
            stalemate: Stalemate::Draw,
            move_rule: MoveRule::None,
        },
    ];

    /// The same rules with `move_rule`.
    #[must_use]
    pub const fn with_move_rule(self, move_rule: MoveRule) -> RuleSet {
        RuleSet {
            bare_king: self.bare_king,
            stalemate: self.stalemate,
            move_rule,
        }
    }

    /// The same rules without a move rule: those of the WDL and DTM files.
    #[must_use]
    pub const fn base(self) -> RuleSet {
        self.with_move_rule(MoveRule::None)
    }

    /// A compact code stored in table headers: 0..4 for the rules without a move rule
    /// (every WDL and DTM file), plus 4 under `move-rule=70`.
    #[must_use]
    pub const fn code(self) -> u8 {
        let a = match self.bare_king {
            BareKing::Counter => 0,
            BareKing::Immediate => 1,
        };
        let b = match self.stalemate {
            Stalemate::Loss => 0,
            Stalemate::Draw => 2,
        };
        let c = match self.move_rule {
            MoveRule::None => 0,
            MoveRule::Seventy => 4,
        };
        a | b | c
    }

    /// The rule set of a code from [`RuleSet::code`].
    #[must_use]
    pub const fn from_code(code: u8) -> Option<RuleSet> {
        if code < 8 {
            Some(RuleSet {
                bare_king: if code & 1 == 0 {
                    BareKing::Counter
                } else {
                    BareKing::Immediate
                },
                stalemate: if code & 2 == 0 {
                    Stalemate::Loss
                } else {
                    Stalemate::Draw
                },
                move_rule: if code & 4 == 0 {
                    MoveRule::None
                } else {
                    MoveRule::Seventy
                },
            })
        } else {
            None
        }
    }

    /// A short name usable in file names: `counter-loss`, `immediate-draw`, ..., with
    /// `-70` under `move-rule=70` (`counter-loss-70`).
    #[must_use]
    pub fn slug(self) -> String {
        let tail = match self.move_rule {
            MoveRule::None => "",
            MoveRule::Seventy => "-70",
        };
        format!(
            "{}-{}{tail}",
            self.bare_king.as_str(),
            self.stalemate.as_str()
        )
    }
}

impl BareKing {
    /// `counter` or `immediate`, as in rule-set strings.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            BareKing::Counter => "counter",
            BareKing::Immediate => "immediate",
        }
    }
}

impl Stalemate {
    /// `loss` or `draw`, as in rule-set strings.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Stalemate::Loss => "loss",
            Stalemate::Draw => "draw",
        }
    }
}

impl RuleSet {
    /// The rule-set string, as `Display` writes it (`bare-king=counter,stalemate=loss`,
    /// with `,move-rule=70` under that rule; `move-rule=none` is left out, so the names
    /// of the rule sets without a move rule are what they always were).
    #[must_use]
    pub const fn name(self) -> &'static str {
        const NAMES: [&str; 8] = [
            "bare-king=counter,stalemate=loss",
            "bare-king=immediate,stalemate=loss",
            "bare-king=counter,stalemate=draw",
            "bare-king=immediate,stalemate=draw",
            "bare-king=counter,stalemate=loss,move-rule=70",
            "bare-king=immediate,stalemate=loss,move-rule=70",
            "bare-king=counter,stalemate=draw,move-rule=70",
            "bare-king=immediate,stalemate=draw,move-rule=70",
        ];
        NAMES[self.code() as usize]
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rule-set string that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseRuleSetError(String);

impl fmt::Display for ParseRuleSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid rule set: {} (expected e.g. bare-king=counter,stalemate=loss; \
             bare-king is counter or immediate, stalemate is loss or draw, \
             move-rule is none or 70)",
            self.0
        )
    }
}

impl std::error::Error for ParseRuleSetError {}

impl FromStr for RuleSet {
    type Err = ParseRuleSetError;

    /// Reads `bare-king=counter,stalemate=loss`; either part may be left out (it keeps its
    /// default), and `default` names the default rule set.
    fn from_str(s: &str) -> Result<RuleSet, ParseRuleSetError> {
        let mut rules = RuleSet::default();
        let s = s.trim();
        if s.is_empty() || s == "default" {
            return Ok(rules);
        }
        for part in s.split(',') {
            let part = part.trim();
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| ParseRuleSetError(format!("'{part}' is not key=value")))?;
            match (key.trim(), value.trim()) {
                ("bare-king", "counter") => rules.bare_king = BareKing::Counter,
                ("bare-king", "immediate") => rules.bare_king = BareKing::Immediate,
                ("stalemate", "loss") => rules.stalemate = Stalemate::Loss,
                ("stalemate", "draw") => rules.stalemate = Stalemate::Draw,
                ("move-rule", "none") => rules.move_rule = MoveRule::None,
                ("move-rule", "70") => rules.move_rule = MoveRule::Seventy,
                ("bare-king", v) | ("stalemate", v) | ("move-rule", v) => {
                    return Err(ParseRuleSetError(format!("unknown value '{v}' for {key}")));
                }
                (k, _) => return Err(ParseRuleSetError(format!("unknown rule '{k}'"))),
            }
        }
        Ok(rules)
    }
}

/// How a game was won.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// Shah mat: the side to move is in check and has no legal move.
    Checkmate,
    /// The side to move is not in check and has no legal move.
    Stalemate,
    /// A side has lost all its pieces but the shah.
    BareKing,
}

impl EndReason {
    /// `checkmate`, `stalemate` or `bare-king`, as in the JSON output.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Stalemate => "stalemate",
            EndReason::BareKing => "bare-king",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The end of a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `winner` has won by `reason`.
    Decisive { winner: Color, reason: EndReason },
    /// Drawn by the rules: both shahs bare, or a stalemate under `stalemate=draw`.
    Draw { reason: EndReason },
}

impl Outcome {
    /// The winner, if any.
    #[must_use]
    pub const fn winner(self) -> Option<Color> {
        match self {
            Outcome::Decisive { winner, .. } => Some(winner),
            Outcome::Draw { .. } => None,
        }
    }

    /// How the game ended.
    #[must_use]
    pub const fn reason(self) -> EndReason {
        match self {
            Outcome::Decisive { reason, .. } | Outcome::Draw { reason } => reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_set_strings_round_trip() {
        for rules in RuleSet::ALL {
            assert_eq!(rules.to_string().parse::<RuleSet>(), Ok(rules));
            assert_eq!(RuleSet::from_code(rules.code()), Some(rules));
        }
        assert_eq!(
            RuleSet::default().to_string(),
            "bare-king=counter,stalemate=loss"
        );
        let r: RuleSet = "stalemate=draw".parse().unwrap();
        assert_eq!(r.bare_king, BareKing::Counter);
        assert_eq!(r.stalemate, Stalemate::Draw);
        assert!("bare-king=never".parse::<RuleSet>().is_err());
        assert!("colour=blue".parse::<RuleSet>().is_err());
        assert!("bare-king".parse::<RuleSet>().is_err());
        let r: RuleSet = "move-rule=70".parse().unwrap();
        assert_eq!(r.move_rule, MoveRule::Seventy);
        assert_eq!(
            r.to_string(),
            "bare-king=counter,stalemate=loss,move-rule=70"
        );
        assert_eq!(r.slug(), "counter-loss-70");
        assert_eq!(r.base(), RuleSet::default());
        assert_eq!(RuleSet::from_code(r.code()), Some(r));
        assert_eq!(r.to_string().parse::<RuleSet>(), Ok(r));
        assert_eq!(
            "stalemate=draw,move-rule=none"
                .parse::<RuleSet>()
                .unwrap()
                .slug(),
            "counter-draw"
        );
        assert!("move-rule=50".parse::<RuleSet>().is_err());
        assert_eq!(RuleSet::from_code(8), None);
    }
}

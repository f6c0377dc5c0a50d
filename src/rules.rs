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

/// A complete rule set. Part of every table's identity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RuleSet {
    pub bare_king: BareKing,
    pub stalemate: Stalemate,
}

impl RuleSet {
    /// All rule sets, the default first.
    pub const ALL: [RuleSet; 4] = [
        RuleSet {
            bare_king: BareKing::Counter,
            stalemate: Stalemate::Loss,
        },
        RuleSet {
            bare_king: BareKing::Immediate,
            stalemate: Stalemate::Loss,
        },
        RuleSet {
            bare_king: BareKing::Counter,
            stalemate: Stalemate::Draw,
        },
        RuleSet {
            bare_king: BareKing::Immediate,
            stalemate: Stalemate::Draw,
        },
    ];

    /// A compact code, 0..4, stored in table headers.
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
        a | b
    }

    /// The rule set of a code from [`RuleSet::code`].
    #[must_use]
    pub const fn from_code(code: u8) -> Option<RuleSet> {
        if code < 4 {
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
            })
        } else {
            None
        }
    }

    /// A short name usable in file names: `counter-loss`, `immediate-draw`, ...
    #[must_use]
    pub fn slug(self) -> String {
        format!("{}-{}", self.bare_king.as_str(), self.stalemate.as_str())
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
    /// The rule-set string, as `Display` writes it (`bare-king=counter,stalemate=loss`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match (self.bare_king, self.stalemate) {
            (BareKing::Counter, Stalemate::Loss) => "bare-king=counter,stalemate=loss",
            (BareKing::Counter, Stalemate::Draw) => "bare-king=counter,stalemate=draw",
            (BareKing::Immediate, Stalemate::Loss) => "bare-king=immediate,stalemate=loss",
            (BareKing::Immediate, Stalemate::Draw) => "bare-king=immediate,stalemate=draw",
        }
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
             bare-king is counter or immediate, stalemate is loss or draw)",
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
                ("bare-king", v) | ("stalemate", v) => {
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
    }
}

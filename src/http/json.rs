//! The HTTP answers, in the lichess tablebase JSON shape
//! (`https://tablebase.lichess.ovh/standard?fen=...`), with lichess's conventions, plus
//! fields of our own.
//!
//! Conventions: a position's `category` and `dtm` are the side to move's, `dtm` signed
//! (negative when the side to move loses, `null` for a draw); each move's `category` and
//! `dtm` are those of the position after the move, for the side to move there (so the
//! best move of a won position is a `loss`, with a negative `dtm` one smaller in size).
//! The flags `checkmate`, `stalemate`, `variant_win` and `variant_loss` say how the game
//! has ended in the position (after the move, for a move): `variant_win`/`variant_loss`
//! are the bare-king ends, for the side to move. `insufficient_material` is always
//! `false` (shatranj has no such draw: shah against shah is a draw by the bare-king rule,
//! `end: "bare-king"`).
//!
//! DTZ, where the tables have DTZ files (`null` otherwise): a position's `dtz` is the side
//! to move's, plies to the next zeroing move (a capture or a pawn move) or the end of the
//! game under the rule set's move rule, signed as `dtm`; each move's `dtz` is that of the
//! position after the move, for the side to move there, as lichess gives it. Our DTZ is
//! exact, never rounded, so `precise_dtz` is always `dtz`. With DTZ, `category` is the DTZ
//! category under the move rule: `win`, `cursed-win` (won, but not within the move rule),
//! `draw`, `blessed-loss` (lost, but saved by the move rule) or `loss`; without it (and
//! under `move-rule=none` always) `win`, `draw` or `loss`.
//!
//! Our own fields: `fen`, `material`, `rules`, `wdl` (`win`/`draw`/`loss` for the side to
//! move, as `probe --json`), `end` (`checkmate`, `stalemate`, `bare-king` or `null`).

use serde::Serialize;

use crate::probe::{LineStep, MoveProbe, ProbeError, SideStats, TableInfo, Tablebase};
use crate::{Color, Dtz, EndReason, Material, Move, Outcome, Position, RuleSet, Value};

/// Lichess's `category`: the DTZ category where there is a DTZ, else `win`, `draw` or
/// `loss`.
fn category(v: Value, dtz: Option<Dtz>) -> &'static str {
    dtz.map_or(v.wdl().as_str(), |d| d.category.as_str())
}

/// The DTZ of a probed position and of the position after each of its moves.
#[derive(Debug)]
pub struct DtzView {
    /// The position's, for its side to move.
    pub dtz: Dtz,
    /// After each move of the probe, in the probe's order, for the side to move there.
    pub after: Vec<Dtz>,
}

/// The [`DtzView`] of `pos`, whose moves `probe` holds, or `None` where its table has no
/// DTZ file. Reads the DTZ files (the position's table, and those its captures lead to).
pub fn dtz_view(
    tb: &Tablebase,
    pos: &Position,
    probe: &MoveProbe,
) -> Result<Option<DtzView>, ProbeError> {
    if !tb.has_dtz_for(pos) {
        return Ok(None);
    }
    let dtz = tb.dtz(pos)?;
    let after = probe
        .moves
        .iter()
        .map(|(m, _)| tb.dtz(&pos.play_unchecked(m)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(DtzView { dtz, after }))
}

/// Lichess's signed DTM: positive when the side to move wins, negative when it loses.
fn signed_dtm(v: Value) -> Option<i64> {
    match v {
        Value::Win(d) => Some(i64::from(d)),
        Value::Loss(d) => Some(-i64::from(d)),
        Value::Draw => None,
    }
}

/// The value of the position after a move, for the side to move there, from the value
/// the move has for the side that makes it.
fn after_move(v: Value) -> Value {
    match v {
        Value::Win(d) => Value::Loss(d.saturating_sub(1)),
        Value::Loss(d) => Value::Win(d.saturating_sub(1)),
        Value::Draw => Value::Draw,
    }
}

/// How a game has ended, as lichess's flags, for the side to move.
#[derive(Serialize, Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends {
    pub checkmate: bool,
    pub stalemate: bool,
    pub variant_win: bool,
    pub variant_loss: bool,
    pub insufficient_material: bool,
}

impl Ends {
    fn of(pos: &Position, outcome: Option<Outcome>) -> Ends {
        let Some(outcome) = outcome else {
            return Ends::default();
        };
        let bare = outcome.reason() == EndReason::BareKing;
        Ends {
            checkmate: outcome.reason() == EndReason::Checkmate,
            stalemate: outcome.reason() == EndReason::Stalemate,
            variant_win: bare && outcome.winner() == Some(pos.turn()),
            variant_loss: bare && outcome.winner() == Some(!pos.turn()),
            insufficient_material: false,
        }
    }
}

/// One legal move in a probe answer.
#[derive(Serialize, Debug)]
pub struct MoveAnswer {
    pub uci: String,
    pub san: String,
    pub category: &'static str,
    pub dtz: Option<i64>,
    pub precise_dtz: Option<i64>,
    pub dtm: Option<i64>,
    pub zeroing: bool,
    #[serde(flatten)]
    pub ends: Ends,
}

/// The answer of `GET /api/v1/probe`.
#[derive(Serialize, Debug)]
pub struct ProbeAnswer {
    pub category: &'static str,
    pub dtz: Option<i64>,
    pub precise_dtz: Option<i64>,
    pub dtm: Option<i64>,
    #[serde(flatten)]
    pub ends: Ends,
    pub moves: Vec<MoveAnswer>,
    pub fen: String,
    pub material: String,
    pub rules: &'static str,
    pub wdl: &'static str,
    pub end: Option<&'static str>,
}

/// The probe answer of `pos`, whose moves and values `probe` holds, and whose DTZ `dtz`
/// holds where there is one.
#[must_use]
pub fn probe(
    pos: &Position,
    rules: RuleSet,
    probe: &MoveProbe,
    dtz: Option<&DtzView>,
) -> ProbeAnswer {
    let moves = probe
        .moves
        .iter()
        .enumerate()
        .map(|(i, (m, v))| {
            let after = pos.play_unchecked(m);
            let value = after_move(*v);
            let d = dtz.and_then(|d| d.after.get(i).copied());
            MoveAnswer {
                uci: m.to_uci(),
                san: pos.san(m),
                category: category(value, d),
                dtz: d.map(Dtz::signed),
                precise_dtz: d.map(Dtz::signed),
                dtm: signed_dtm(value),
                zeroing: zeroing(m),
                ends: Ends::of(&after, after.outcome(rules)),
            }
        })
        .collect();
    let outcome = probe.end.and_then(|_| pos.outcome(rules));
    let d = dtz.map(|d| d.dtz);
    ProbeAnswer {
        category: category(probe.value, d),
        dtz: d.map(Dtz::signed),
        precise_dtz: d.map(Dtz::signed),
        dtm: signed_dtm(probe.value),
        ends: Ends::of(pos, outcome),
        moves,
        fen: pos.fen(),
        material: Material::from_board(pos.board()).name(),
        rules: rules.name(),
        wdl: probe.value.wdl().as_str(),
        end: probe.end.map(EndReason::as_str),
    }
}

/// Whether a move resets a move counter (lichess's `zeroing`): a capture or a pawn move.
fn zeroing(m: &Move) -> bool {
    m.capture.is_some() || m.role == crate::Role::Pawn
}

/// One move of `GET /api/v1/line`: lichess's mainline step (`uci`, `san`, `dtz`) with the
/// position after it and its value for the side to move there.
#[derive(Serialize, Debug)]
pub struct LineMove {
    pub uci: String,
    pub san: String,
    pub dtz: Option<i64>,
    pub category: &'static str,
    pub dtm: Option<i64>,
    pub fen: String,
    pub end: Option<&'static str>,
}

/// The answer of `GET /api/v1/line`: an optimal line to the end of the game (the winner
/// hurrying, the loser delaying; empty for a draw or a finished game), as lichess's
/// `/standard/mainline` (`mainline`, `winner`, `dtz`) with the start's value.
#[derive(Serialize, Debug)]
pub struct LineAnswer {
    pub dtz: Option<i64>,
    pub mainline: Vec<LineMove>,
    /// `w`, `b`, or `null` for a draw.
    pub winner: Option<&'static str>,
    pub category: &'static str,
    pub dtm: Option<i64>,
    pub fen: String,
    pub material: String,
    pub rules: &'static str,
    pub wdl: &'static str,
    pub end: Option<&'static str>,
}

/// The line answer from `start` (value `value`, ended by `end` if it has, DTZ `dtz`)
/// along `steps` (each with the DTZ of the position after it in `step_dtz`, where known).
pub fn line(
    start: &Position,
    rules: RuleSet,
    (value, dtz): (Value, Option<Dtz>),
    end: Option<EndReason>,
    steps: &[LineStep],
    step_dtz: &[Option<Dtz>],
) -> Result<LineAnswer, String> {
    let mut pos = *start;
    let mut mainline = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        let (m, after) = pos.play_uci(&step.uci).map_err(|e| e.to_string())?;
        let d = step_dtz.get(i).copied().flatten();
        mainline.push(LineMove {
            san: pos.san(&m),
            uci: step.uci.clone(),
            dtz: d.map(Dtz::signed),
            category: category(step.value, d),
            dtm: signed_dtm(step.value),
            fen: step.fen.clone(),
            end: step.end.map(EndReason::as_str),
        });
        pos = after;
    }
    let winner = match value {
        Value::Win(_) => Some(start.turn()),
        Value::Loss(_) => Some(!start.turn()),
        Value::Draw => None,
    };
    Ok(LineAnswer {
        dtz: dtz.map(Dtz::signed),
        mainline,
        winner: winner.map(|c| if c == Color::White { "w" } else { "b" }),
        category: category(value, dtz),
        dtm: signed_dtm(value),
        fen: start.fen(),
        material: Material::from_board(start.board()).name(),
        rules: rules.name(),
        wdl: value.wdl().as_str(),
        end: end.map(EndReason::as_str),
    })
}

/// One table's figures in `GET /api/v1/tables`, as `info --json` prints them.
#[derive(Serialize, Debug)]
pub struct TableAnswer<'a> {
    pub material: String,
    pub rules: &'static str,
    pub wdl_bytes: u64,
    pub dtm_bytes: u64,
    pub white: &'a SideStats,
    pub black: &'a SideStats,
}

/// The answer of `GET /api/v1/tables`.
#[derive(Serialize, Debug)]
pub struct TablesAnswer<'a> {
    pub tables: Vec<TableAnswer<'a>>,
}

#[must_use]
pub fn tables(infos: &[TableInfo]) -> TablesAnswer<'_> {
    TablesAnswer {
        tables: infos
            .iter()
            .map(|t| TableAnswer {
                material: t.material.to_string(),
                rules: t.rules.name(),
                wdl_bytes: t.wdl_bytes,
                dtm_bytes: t.dtm_bytes,
                white: &t.white,
                black: &t.black,
            })
            .collect(),
    }
}

/// An error answer: `{"error": message, "status": code}`.
#[derive(Serialize, Debug)]
pub struct ErrorAnswer<'a> {
    pub error: &'a str,
    pub status: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_values_are_seen_from_the_side_to_move_after_the_move() {
        assert_eq!(after_move(Value::Win(39)), Value::Loss(38));
        assert_eq!(after_move(Value::Loss(12)), Value::Win(11));
        assert_eq!(after_move(Value::Draw), Value::Draw);
        assert_eq!(signed_dtm(Value::Loss(38)), Some(-38));
        assert_eq!(signed_dtm(Value::Win(39)), Some(39));
        assert_eq!(signed_dtm(Value::Draw), None);
    }

    #[test]
    fn ends_name_the_side_to_move() {
        let rules = RuleSet::default();
        // Black bare and to move, cannot take the rook: Black has lost.
        let lost = Position::from_fen("8/8/8/4k3/8/8/7R/K7 b - - 0 1").unwrap();
        let e = Ends::of(&lost, lost.outcome(rules));
        assert!(e.variant_loss && !e.variant_win && !e.checkmate);
        // The same with White to move: White has won.
        let won = Position::from_fen("8/8/8/4k3/8/8/7R/K7 w - - 0 1").unwrap();
        let e = Ends::of(&won, won.outcome(rules));
        assert!(e.variant_win && !e.variant_loss);
        // Shah against shah: a draw, no flag.
        let kk = Position::from_fen("8/8/8/4k3/8/8/8/K7 w - - 0 1").unwrap();
        assert_eq!(Ends::of(&kk, kk.outcome(rules)), Ends::default());
        // Mate by the rook.
        let mate = Position::from_fen("R2k3r/8/3K4/8/8/8/8/8 b - - 0 1").unwrap();
        let e = Ends::of(&mate, mate.outcome(rules));
        assert!(e.checkmate && !e.stalemate && !e.variant_loss);
    }
}

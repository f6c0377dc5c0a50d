//! The `probe --json` object, built here once for every front that prints it: the command
//! line (`shatranj-tb probe --json`, and the fields `line --json` starts with) and the
//! Python module's `Tablebase.probe`.

use serde_json::{Map, Value as Json, json};

use super::answer::ProbeResult;
use crate::position::Position;

impl ProbeResult {
    /// The fields every answer about a position starts with: `fen`, `material` (as on the
    /// board), `rules`, `wdl`, `dtm` (null for a draw), `dtz` (plies to the next zeroing
    /// move, positive for a win, negative for a loss, 0 for a draw; null without DTZ
    /// files), `category` (`win`, `cursed-win`, `draw`, `blessed-loss` or `loss` under the
    /// rule set's move rule; null without DTZ files), `end` (null while the game goes on).
    #[must_use]
    pub fn position_json(&self) -> Map<String, Json> {
        let mut out = Map::new();
        out.insert("fen".into(), json!(self.fen));
        out.insert("material".into(), json!(self.material.to_string()));
        out.insert("rules".into(), json!(self.rules.name()));
        out.insert("wdl".into(), json!(self.wdl().as_str()));
        out.insert("dtm".into(), json!(self.dtm()));
        out.insert("dtz".into(), json!(self.dtz.map(|d| d.signed())));
        out.insert(
            "category".into(),
            json!(self.dtz.map(|d| d.category.as_str())),
        );
        out.insert("end".into(), json!(self.end.map(|e| e.as_str())));
        out
    }

    /// The `probe --json` object: [`ProbeResult::position_json`]'s fields, then
    /// `best_move` (UCI, null once the game has ended) and `moves`, best first, each
    /// `{uci, san, wdl, dtm, dtz, zeroing}` from the probed side's view (`dtz` the move's
    /// DTZ for the side that plays it, null without DTZ files; `zeroing` whether it is a
    /// capture or a pawn move). `pos` is the position probed
    /// (for the moves' SAN).
    #[must_use]
    pub fn to_json(&self, pos: &Position) -> Json {
        let mut out = self.position_json();
        out.insert(
            "best_move".into(),
            json!(self.best_move().map(|m| m.uci.as_str())),
        );
        let moves: Vec<Json> = self
            .moves
            .iter()
            .map(|m| {
                let san = pos
                    .play_uci(&m.uci)
                    .map_or_else(|_| String::new(), |(mv, _)| pos.san(&mv));
                json!({
                    "uci": m.uci,
                    "san": san,
                    "wdl": m.value.wdl().as_str(),
                    "dtm": m.value.dtm(),
                    "dtz": m.dtz.map(|d| d.signed()),
                    "zeroing": m.zeroing,
                })
            })
            .collect();
        out.insert("moves".into(), moves.into());
        out.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::MoveValue;
    use crate::rules::MoveRule;
    use crate::value::{Dtz, Wdl};
    use crate::{EndReason, RuleSet, Value};

    #[test]
    fn the_probe_object_has_every_field_in_order() {
        let pos = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q6R w - - 0 1").unwrap();
        let r = ProbeResult {
            fen: pos.fen(),
            material: "KRQvKQ".parse().unwrap(),
            rules: RuleSet::default(),
            value: Value::Win(7),
            end: None,
            moves: vec![
                MoveValue {
                    uci: "h1a1".into(),
                    value: Value::Win(7),
                    dtz: Some(Dtz::from_plies(Wdl::Win, 1, MoveRule::None)),
                    zeroing: true,
                },
                MoveValue {
                    uci: "c3b4".into(),
                    value: Value::Draw,
                    dtz: None,
                    zeroing: false,
                },
            ],
            dtz: Some(Dtz::from_plies(Wdl::Win, 1, MoveRule::None)),
        };
        let j = r.to_json(&pos);
        let keys: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "fen",
                "material",
                "rules",
                "wdl",
                "dtm",
                "dtz",
                "category",
                "end",
                "best_move",
                "moves"
            ]
        );
        assert_eq!(j["fen"], "8/8/8/3k4/8/1KQ5/8/q6R w - - 0 1");
        assert_eq!(j["material"], "KRQvKQ");
        assert_eq!(j["rules"], "bare-king=counter,stalemate=loss");
        assert_eq!(j["wdl"], "win");
        assert_eq!(j["dtm"], 7);
        assert_eq!(j["dtz"], 1);
        assert_eq!(j["category"], "win");
        assert_eq!(j["end"], Json::Null);
        assert_eq!(j["best_move"], "h1a1");
        assert_eq!(
            j["moves"],
            json!([
                {"uci": "h1a1", "san": "Rxa1", "wdl": "win", "dtm": 7, "dtz": 1, "zeroing": true},
                {"uci": "c3b4", "san": "Qb4", "wdl": "draw", "dtm": null, "dtz": null, "zeroing": false},
            ])
        );
    }

    #[test]
    fn a_finished_game_has_no_best_move_and_names_its_end() {
        let pos = Position::from_fen("8/8/8/8/8/8/4k3/K7 w - - 0 1").unwrap();
        let r = ProbeResult {
            fen: pos.fen(),
            material: "KvK".parse().unwrap(),
            rules: RuleSet::default(),
            value: Value::Draw,
            end: Some(EndReason::BareKing),
            moves: Vec::new(),
            dtz: None,
        };
        let j = r.to_json(&pos);
        assert_eq!(j["best_move"], Json::Null);
        assert_eq!(j["dtm"], Json::Null);
        assert_eq!(j["end"], EndReason::BareKing.as_str());
        assert_eq!(j["moves"], json!([]));
    }
}

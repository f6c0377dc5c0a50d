//! The JSON form of a [`Solution`] (`solve --json`, and the HTTP API's `/api/v1/solve`).

use serde_json::{Value as Json, json};

use super::{Solution, TreeNode};
use crate::fen::Fen;
use crate::value::Value;

fn dtm(v: Option<Value>) -> Json {
    v.and_then(Value::dtm).map_or(Json::Null, |d| json!(d))
}

impl Solution {
    /// The main line in short algebraic notation, as Fairy-Stockfish writes it.
    #[must_use]
    pub fn line_san(&self) -> Vec<String> {
        let mut pos = self.position;
        self.line
            .iter()
            .map(|m| {
                let san = pos.san(m);
                pos = pos.play_unchecked(m);
                san
            })
            .collect()
    }

    /// The main line in SAN with move numbers: `1. Rh8+ Kxh8 2. Bf5+ ...` (`1... ` if
    /// Black moves first).
    #[must_use]
    pub fn line_text(&self) -> String {
        let mut out = String::new();
        let mut number = 1;
        let mut white = self.position.turn() == crate::color::Color::White;
        for (i, san) in self.line_san().into_iter().enumerate() {
            if !out.is_empty() {
                out.push(' ');
            }
            if white {
                out.push_str(&format!("{number}. "));
            } else if i == 0 {
                out.push_str(&format!("{number}... "));
            }
            if !white {
                number += 1;
            }
            white = !white;
            out.push_str(&san);
        }
        out
    }

    /// The `solve --json` object: `fen`, `rules`, `result` (`win`, `loss`, `draw`,
    /// `unknown`), `plies`, `end`, `keys` (`[{uci, san, plies}]`), `line` (UCI),
    /// `line_san`, `tree` (moves with `uci` and `san`),
    /// `proved` (in words), `max_plies`, `no_win_within`, `no_loss_within`,
    /// `from_table`, `stopped`, `nodes`, `table_hits`, `seconds`.
    #[must_use]
    pub fn to_json(&self) -> Json {
        let line: Vec<String> = self.line.iter().map(|m| m.to_uci()).collect();
        let keys: Vec<Json> = self
            .keys
            .iter()
            .map(|k| json!({"uci": k.mv.to_uci(), "san": self.position.san(&k.mv), "plies": k.plies}))
            .collect();
        json!({
            "fen": Fen::from_position(&self.position).to_string(),
            "rules": self.rules.to_string(),
            "result": self.verdict.as_str(),
            "plies": self.plies,
            "end": self.end.map(|e| e.as_str()),
            "keys": keys,
            "line": line,
            "line_san": self.line_san(),
            "tree": self.tree.as_ref().map_or(Json::Null, tree_json),
            "proved": self.in_words(),
            "max_plies": self.max_plies,
            "no_win_within": self.no_win_within,
            "no_loss_within": self.no_loss_within,
            "from_table": self.from_table,
            "stopped": self.stopped,
            "nodes": self.nodes,
            "table_hits": self.table_hits,
            "seconds": self.seconds,
        })
    }
}

/// A tree node: `fen`, `wdl` and `dtm` for its side to move (null where not proven),
/// `end`, `table`, `truncated`, and `moves` (`[{uci, node}]`).
fn tree_json(node: &TreeNode) -> Json {
    let moves: Vec<Json> = node
        .moves
        .iter()
        .map(|(m, child)| {
            json!({"uci": m.to_uci(), "san": node.position.san(m), "node": tree_json(child)})
        })
        .collect();
    json!({
        "fen": Fen::from_position(&node.position).to_string(),
        "wdl": node.value.map(|v| v.wdl().as_str()),
        "dtm": dtm(node.value),
        "end": node.end.map(|e| e.as_str()),
        "table": node.table,
        "truncated": node.truncated,
        "moves": moves,
    })
}

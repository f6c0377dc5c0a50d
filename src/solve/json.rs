//! The JSON form of a [`Solution`] (`solve --json`, and the HTTP API's `/api/v1/solve`).

use serde_json::{Value as Json, json};

use super::{Solution, TreeNode};
use crate::fen::Fen;
use crate::value::Value;

fn dtm(v: Option<Value>) -> Json {
    v.and_then(Value::dtm).map_or(Json::Null, |d| json!(d))
}

impl Solution {
    /// The `solve --json` object: `fen`, `rules`, `result` (`win`, `loss`, `draw`,
    /// `unknown`), `plies`, `end`, `keys` (`[{uci, plies}]`), `line` (UCI), `tree`,
    /// `proved` (in words), `max_plies`, `no_win_within`, `no_loss_within`,
    /// `from_table`, `stopped`, `nodes`, `table_hits`, `seconds`.
    #[must_use]
    pub fn to_json(&self) -> Json {
        let line: Vec<String> = self.line.iter().map(|m| m.to_uci()).collect();
        let keys: Vec<Json> = self
            .keys
            .iter()
            .map(|k| json!({"uci": k.mv.to_uci(), "plies": k.plies}))
            .collect();
        json!({
            "fen": Fen::from_position(&self.position).to_string(),
            "rules": self.rules.to_string(),
            "result": self.verdict.as_str(),
            "plies": self.plies,
            "end": self.end.map(|e| e.as_str()),
            "keys": keys,
            "line": line,
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
        .map(|(m, child)| json!({"uci": m.to_uci(), "node": tree_json(child)}))
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

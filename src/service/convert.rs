//! The border between the domain and the wire: domain values into protobuf messages, and
//! the ONE mapping from the service's errors to gRPC status codes. Proto types go no
//! further into the crate than this module and the handlers.

use std::fmt;
use std::path::Path;

use tonic::{Code, Status};

use super::pb;
use crate::probe::{
    DtzProbe, LineStep, Longest, MoveProbe, ProbeError, ProbeResult, SideStats, TableInfo,
};
use crate::rules::ParseRuleSetError;
use crate::{Category, Dtz, EndReason, FenError, Material, Position, RuleSet, Value, Wdl};

/// Everything a call can fail with. Turned into a [`Status`] by [`From`], in one place.
#[derive(Debug)]
pub enum ServiceError {
    /// The FEN cannot be read, or it describes an illegal position.
    Fen { fen: String, source: FenError },
    /// The request's `rules` field cannot be read.
    Rules(ParseRuleSetError),
    /// The request expects another rule set than the server's tables.
    RulesMismatch { requested: RuleSet, served: RuleSet },
    /// The tables are not open yet.
    NotReady,
    /// The server is draining for shutdown.
    ShuttingDown,
    /// The probe library failed.
    Probe(ProbeError),
    /// As many searches as the server allows are running.
    Busy,
    /// The problem solver failed, or the request's bounds are out of range.
    Solve(crate::solve::SolveError),
    /// A bug or a panic in a worker.
    Internal(String),
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::Fen { fen, source } => write!(f, "{source} (FEN '{fen}')"),
            ServiceError::Rules(e) => e.fmt(f),
            ServiceError::RulesMismatch { requested, served } => write!(
                f,
                "this server's tables are for {served}, not the requested {requested}"
            ),
            ServiceError::NotReady => f.write_str("the tables are not open yet; retry later"),
            ServiceError::ShuttingDown => f.write_str("the server is shutting down"),
            ServiceError::Probe(e) => probe_message(e, f),
            ServiceError::Busy => {
                f.write_str("the server is running as many searches as it allows; retry later")
            }
            ServiceError::Solve(crate::solve::SolveError::Probe(e)) => probe_message(e, f),
            ServiceError::Solve(e) => e.fmt(f),
            ServiceError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for ServiceError {}

/// The message of a probe error. Only file names are shown, not the server's directories.
fn probe_message(e: &ProbeError, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match e {
        ProbeError::MissingTable { material, rules } => {
            write!(
                f,
                "no table for {material} under {rules}; generate it with \
                 `shatranj-tb generate {material}"
            )?;
            if *rules != RuleSet::default() {
                write!(f, " --rules {rules}")?;
            }
            f.write_str("` in the server's table folder; it is found without a restart")
        }
        ProbeError::Io { path, source } => {
            write!(f, "cannot read table file {}: {source}", file_name(path))
        }
        ProbeError::Corrupt { path, message } => {
            // The library's message may name the file by its full path: keep the name only.
            let name = file_name(path);
            let message = message.replace(&path.display().to_string(), &name);
            write!(
                f,
                "table file {name} is unusable ({message}); rebuild it with `shatranj-tb generate`"
            )
        }
        ProbeError::TooManyMen { men } => write!(
            f,
            "the position has {men} men, more than any table of this tablebase holds"
        ),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl ServiceError {
    /// The gRPC status code of this error (the table in the proto file's header).
    #[must_use]
    pub fn code(&self) -> Code {
        match self {
            ServiceError::Fen { .. } | ServiceError::Rules(_) => Code::InvalidArgument,
            ServiceError::RulesMismatch { .. } => Code::FailedPrecondition,
            ServiceError::NotReady | ServiceError::ShuttingDown => Code::Unavailable,
            ServiceError::Probe(e) | ServiceError::Solve(crate::solve::SolveError::Probe(e)) => {
                match e {
                    ProbeError::MissingTable { .. } => Code::NotFound,
                    ProbeError::Corrupt { .. } => Code::DataLoss,
                    ProbeError::Io { .. } => Code::Unavailable,
                    ProbeError::TooManyMen { .. } => Code::InvalidArgument,
                }
            }
            ServiceError::Solve(crate::solve::SolveError::InvalidOptions(_)) => {
                Code::InvalidArgument
            }
            ServiceError::Solve(crate::solve::SolveError::OutOfMemory { .. }) => {
                Code::ResourceExhausted
            }
            ServiceError::Busy => Code::ResourceExhausted,
            ServiceError::Internal(_) => Code::Internal,
        }
    }
}

impl From<ServiceError> for Status {
    fn from(e: ServiceError) -> Status {
        Status::new(e.code(), e.to_string())
    }
}

impl From<ProbeError> for ServiceError {
    fn from(e: ProbeError) -> ServiceError {
        ServiceError::Probe(e)
    }
}

/// A failed stream item as the wire carries it.
#[must_use]
pub fn item_error(status: &Status) -> pb::ItemError {
    pb::ItemError {
        code: status.code() as i32,
        message: status.message().to_string(),
    }
}

#[must_use]
pub fn wdl(w: Wdl) -> pb::Wdl {
    match w {
        Wdl::Loss => pb::Wdl::Loss,
        Wdl::Draw => pb::Wdl::Draw,
        Wdl::Win => pb::Wdl::Win,
    }
}

#[must_use]
pub fn category(c: Category) -> pb::Category {
    match c {
        Category::Loss => pb::Category::Loss,
        Category::BlessedLoss => pb::Category::BlessedLoss,
        Category::Draw => pb::Category::Draw,
        Category::CursedWin => pb::Category::CursedWin,
        Category::Win => pb::Category::Win,
    }
}

/// The signed DTZ on the wire (DTZ values are far below `i32::MAX`).
#[must_use]
pub fn signed_dtz(d: Dtz) -> i32 {
    i32::try_from(d.signed()).unwrap_or(if d.signed() < 0 { i32::MIN } else { i32::MAX })
}

#[must_use]
pub fn end_reason(end: Option<EndReason>) -> pb::EndReason {
    match end {
        None => pb::EndReason::Unspecified,
        Some(EndReason::Checkmate) => pb::EndReason::Checkmate,
        Some(EndReason::Stalemate) => pb::EndReason::Stalemate,
        Some(EndReason::BareKing) => pb::EndReason::BareKing,
    }
}

/// The answer of a full probe of `pos`: the strings are written here, once each, from
/// the probe's moves, with the DTZ of the position and of each move from `dtz` (the
/// same position's DTZ probe) where the DTZ files are here.
#[must_use]
pub fn probe_response(
    pos: &Position,
    rules: RuleSet,
    probe: &MoveProbe,
    dtz: Option<&DtzProbe>,
) -> pb::ProbeResponse {
    let moves: Vec<pb::MoveValue> = probe
        .moves
        .iter()
        .map(|(m, value)| pb::MoveValue {
            uci: m.to_uci(),
            wdl: wdl(value.wdl()).into(),
            dtm: value.dtm(),
            dtz: dtz
                .and_then(|d| d.moves.iter().find(|(x, _, _)| x == m))
                .map(|(_, d, _)| signed_dtz(*d)),
            zeroing: crate::probe::is_zeroing(m),
        })
        .collect();
    pb::ProbeResponse {
        fen: pos.fen(),
        material: Material::from_board(pos.board()).name(),
        rules: rules.name().to_string(),
        wdl: wdl(probe.value.wdl()).into(),
        dtm: probe.value.dtm(),
        end: end_reason(probe.end).into(),
        best_move: moves.first().map(|m| m.uci.clone()).unwrap_or_default(),
        moves,
        dtz: dtz.map(|d| signed_dtz(d.dtz)),
        category: dtz.map_or(pb::Category::Unspecified, |d| category(d.dtz.category)) as i32,
    }
}

/// The answer of a `value_only` probe: the position's own value, no moves.
#[must_use]
pub fn value_response(pos: &Position, rules: RuleSet, value: Value) -> pb::ProbeResponse {
    pb::ProbeResponse {
        fen: pos.fen(),
        material: Material::from_board(pos.board()).name(),
        rules: rules.name().to_string(),
        wdl: wdl(value.wdl()).into(),
        dtm: value.dtm(),
        end: end_reason(pos.outcome(rules).map(|o| o.reason())).into(),
        best_move: String::new(),
        moves: Vec::new(),
        dtz: None,
        category: pb::Category::Unspecified as i32,
    }
}

#[must_use]
pub fn line_step(s: &LineStep) -> pb::LineStep {
    pb::LineStep {
        uci: s.uci.clone(),
        fen: s.fen.clone(),
        wdl: wdl(s.value.wdl()).into(),
        dtm: s.value.dtm(),
        end: end_reason(s.end).into(),
        dtz: s.dtz.map(signed_dtz),
        category: s
            .dtz
            .map_or(pb::Category::Unspecified, |d| category(d.category)) as i32,
    }
}

#[must_use]
pub fn line_response(start: &ProbeResult, steps: &[LineStep]) -> pb::LineResponse {
    pb::LineResponse {
        fen: start.fen.clone(),
        material: start.material.to_string(),
        rules: start.rules.to_string(),
        wdl: wdl(start.value.wdl()).into(),
        dtm: start.value.dtm(),
        end: end_reason(start.end).into(),
        steps: steps.iter().map(line_step).collect(),
        dtz: start.dtz.map(signed_dtz),
        category: start
            .dtz
            .map_or(pb::Category::Unspecified, |d| category(d.category)) as i32,
    }
}

fn longest(l: &Longest) -> pb::Longest {
    pb::Longest {
        plies: l.plies,
        fen: l.fen.clone(),
    }
}

fn side_stats(s: &SideStats) -> pb::SideStats {
    pb::SideStats {
        legal: s.legal,
        win: s.win,
        draw: s.draw,
        loss: s.loss,
        longest_win: s.longest_win.as_ref().map(longest),
        longest_loss: s.longest_loss.as_ref().map(longest),
    }
}

#[must_use]
pub fn table_info(t: &TableInfo) -> pb::TableInfo {
    pb::TableInfo {
        material: t.material.to_string(),
        rules: t.rules.to_string(),
        wdl_bytes: t.wdl_bytes,
        dtm_bytes: t.dtm_bytes,
        white: Some(side_stats(&t.white)),
        black: Some(side_stats(&t.black)),
    }
}

/// The domain value of a wire WDL and DTM, for clients written in Rust. `None` for
/// `WDL_UNSPECIFIED`, for an unknown number, or for a decided value without a distance.
#[must_use]
pub fn value_from_wire(wdl: i32, dtm: Option<u32>) -> Option<Value> {
    match (pb::Wdl::try_from(wdl).ok()?, dtm) {
        (pb::Wdl::Win, Some(d)) => Some(Value::Win(d)),
        (pb::Wdl::Loss, Some(d)) => Some(Value::Loss(d)),
        (pb::Wdl::Draw, _) => Some(Value::Draw),
        _ => None,
    }
}

/// The `Solve` answer of a solution.
#[must_use]
pub fn solve_answer(s: &crate::solve::Solution) -> pb::SolveAnswer {
    use crate::solve::Verdict;
    pb::SolveAnswer {
        fen: s.position.fen(),
        rules: s.rules.to_string(),
        result: match s.verdict {
            Verdict::Win => pb::SolveResult::Win,
            Verdict::Loss => pb::SolveResult::Loss,
            Verdict::Draw => pb::SolveResult::Draw,
            Verdict::Unknown => pb::SolveResult::Unknown,
        } as i32,
        plies: s.plies,
        end: end_reason(s.end) as i32,
        keys: s
            .keys
            .iter()
            .map(|k| pb::SolveKey {
                uci: k.mv.to_uci(),
                plies: k.plies,
                san: s.position.san(&k.mv),
            })
            .collect(),
        line: s.line.iter().map(crate::position::Move::to_uci).collect(),
        tree: s.tree.as_ref().map(solve_tree),
        proved: s.in_words(),
        no_win_within: s.no_win_within,
        no_loss_within: s.no_loss_within,
        stopped: s.stopped,
        nodes: s.nodes,
        table_hits: s.table_hits,
        seconds: s.seconds,
        max_plies: s.max_plies,
        line_san: s.line_san(),
    }
}

fn solve_tree(node: &crate::solve::TreeNode) -> pb::SolveTreeNode {
    pb::SolveTreeNode {
        fen: node.position.fen(),
        wdl: node.value.map_or(pb::Wdl::Unspecified, |v| wdl(v.wdl())) as i32,
        dtm: node.value.and_then(Value::dtm),
        end: end_reason(node.end) as i32,
        table: node.table,
        truncated: node.truncated,
        moves: node
            .moves
            .iter()
            .map(|(m, child)| pb::SolveTreeMove {
                uci: m.to_uci(),
                node: Some(solve_tree(child)),
                san: node.position.san(m),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn code_and_message(e: ServiceError) -> (Code, String) {
        let s = Status::from(e);
        (s.code(), s.message().to_string())
    }

    #[test]
    fn missing_table_names_the_table_and_the_command() {
        let material: Material = "KQvKQ".parse().unwrap();
        let (code, msg) = code_and_message(ServiceError::Probe(ProbeError::MissingTable {
            material,
            rules: RuleSet::default(),
        }));
        assert_eq!(code, Code::NotFound);
        assert!(msg.contains("`shatranj-tb generate KQvKQ`"), "{msg}");

        let rules: RuleSet = "stalemate=draw".parse().unwrap();
        let (_, msg) = code_and_message(ServiceError::Probe(ProbeError::MissingTable {
            material,
            rules,
        }));
        assert!(
            msg.contains("`shatranj-tb generate KQvKQ --rules bare-king=counter,stalemate=draw`"),
            "{msg}"
        );
    }

    #[test]
    fn each_error_has_its_code() {
        let path = PathBuf::from("/srv/secret/tables/KQvKQ.tbw");
        let (code, msg) = code_and_message(ServiceError::Probe(ProbeError::Corrupt {
            path: path.clone(),
            message: format!("table file {}: bad checksum in block 3", path.display()),
        }));
        assert_eq!(code, Code::DataLoss);
        assert!(
            msg.contains("KQvKQ.tbw") && !msg.contains("/srv/secret"),
            "{msg}"
        );

        let (code, _) = code_and_message(ServiceError::Probe(ProbeError::Io {
            path,
            source: std::io::Error::other("disk on fire"),
        }));
        assert_eq!(code, Code::Unavailable);

        let (code, _) = code_and_message(ServiceError::Probe(ProbeError::TooManyMen { men: 9 }));
        assert_eq!(code, Code::InvalidArgument);

        let fen = "8/8/8/8/8/8/8/8 w - - 0 1".to_string();
        let source = crate::Position::from_fen(&fen).unwrap_err();
        let (code, msg) = code_and_message(ServiceError::Fen { fen, source });
        assert_eq!(code, Code::InvalidArgument);
        assert!(msg.contains("8/8/8/8/8/8/8/8"), "{msg}");

        let (code, _) = code_and_message(ServiceError::RulesMismatch {
            requested: "stalemate=draw".parse().unwrap(),
            served: RuleSet::default(),
        });
        assert_eq!(code, Code::FailedPrecondition);
        assert_eq!(
            code_and_message(ServiceError::NotReady).0,
            Code::Unavailable
        );
    }

    #[test]
    fn values_round_trip_through_the_wire() {
        for v in [Value::Win(39), Value::Draw, Value::Loss(0)] {
            let w = wdl(v.wdl()) as i32;
            assert_eq!(value_from_wire(w, v.dtm()), Some(v));
        }
        assert_eq!(value_from_wire(0, None), None);
    }
}

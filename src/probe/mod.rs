//! THROWAWAY STAND-IN for the probe library being written on `main`, so that the gRPC
//! service compiles and its tests run meanwhile. It has exactly the agreed public API;
//! it answers positions the rules decide (game over) and reports every other material as a
//! missing table. Deleted before `main` is merged into the `grpc` branch.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{EndReason, Material, Outcome, Position, RuleSet, Value, Wdl};

#[derive(Debug)]
pub struct Tablebase {
    dir: PathBuf,
    rules: RuleSet,
}

#[derive(Clone, Debug)]
pub struct ProbeResult {
    pub fen: String,
    pub material: Material,
    pub rules: RuleSet,
    pub value: Value,
    pub end: Option<EndReason>,
    pub moves: Vec<MoveValue>,
}

impl ProbeResult {
    pub fn wdl(&self) -> Wdl {
        self.value.wdl()
    }
    pub fn dtm(&self) -> Option<u32> {
        self.value.dtm()
    }
    pub fn best_move(&self) -> Option<&MoveValue> {
        self.moves.first()
    }
}

#[derive(Clone, Debug)]
pub struct MoveValue {
    pub uci: String,
    pub value: Value,
}

#[derive(Clone, Debug)]
pub struct LineStep {
    pub uci: String,
    pub fen: String,
    pub value: Value,
    pub end: Option<EndReason>,
}

#[derive(Clone, Debug)]
pub struct TableInfo {
    pub material: Material,
    pub rules: RuleSet,
    pub wdl_bytes: u64,
    pub dtm_bytes: u64,
    pub white: SideStats,
    pub black: SideStats,
}

#[derive(Clone, Debug, Default)]
pub struct SideStats {
    pub legal: u64,
    pub win: u64,
    pub draw: u64,
    pub loss: u64,
    pub longest_win: Option<Longest>,
    pub longest_loss: Option<Longest>,
}

#[derive(Clone, Debug)]
pub struct Longest {
    pub plies: u32,
    pub fen: String,
}

#[derive(Debug)]
pub enum ProbeError {
    MissingTable {
        material: Material,
        rules: RuleSet,
    },
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    Corrupt {
        path: PathBuf,
        message: String,
    },
    TooManyMen {
        men: u32,
    },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::MissingTable { material, rules } => write!(
                f,
                "missing table {material} ({rules}): run `shatranj-tb generate {material}`"
            ),
            ProbeError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ProbeError::Corrupt { path, message } => {
                write!(f, "{}: corrupt table: {message}", path.display())
            }
            ProbeError::TooManyMen { men } => write!(f, "{men} men: too many"),
        }
    }
}

impl std::error::Error for ProbeError {}

impl Tablebase {
    pub fn open(dir: impl AsRef<Path>, rules: RuleSet) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::read_dir(&dir).map_err(|source| ProbeError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(Tablebase { dir, rules })
    }

    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    pub fn probe(&self, pos: &Position) -> Result<ProbeResult, ProbeError> {
        let material = Material::from_board(pos.board());
        if material.men() > 6 {
            return Err(ProbeError::TooManyMen {
                men: material.men(),
            });
        }
        let Some(outcome) = pos.outcome(self.rules) else {
            let _ = &self.dir;
            return Err(ProbeError::MissingTable {
                material,
                rules: self.rules,
            });
        };
        let value = match outcome {
            Outcome::Decisive { winner, .. } if winner == pos.turn() => Value::Win(0),
            Outcome::Decisive { .. } => Value::Loss(0),
            Outcome::Draw { .. } => Value::Draw,
        };
        Ok(ProbeResult {
            fen: pos.fen(),
            material,
            rules: self.rules,
            value,
            end: Some(outcome.reason()),
            moves: Vec::new(),
        })
    }

    pub fn line(&self, pos: &Position) -> Result<Vec<LineStep>, ProbeError> {
        self.probe(pos).map(|_| Vec::new())
    }

    pub fn tables(&self) -> Result<Vec<TableInfo>, ProbeError> {
        Ok(Vec::new())
    }
}

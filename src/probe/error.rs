//! Why a probe failed: [`ProbeError`], naming the table file or folder at fault.

use std::fmt;
use std::path::{Path, PathBuf};

use super::{DTM_EXT, DTZ_EXT, MAX_MEN, WDL_EXT};
use crate::format::FormatError;
use crate::material::Material;
use crate::rules::RuleSet;

/// Why a probe failed.
#[derive(Debug)]
pub enum ProbeError {
    /// No table for this material and rule set in the directory (or, for a DTZ lookup,
    /// no DTZ file of it under the rule set's move rule).
    MissingTable { material: Material, rules: RuleSet },
    /// The file could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is damaged, of another format version, or of another rule set.
    Corrupt { path: PathBuf, message: String },
    /// More men than any table holds.
    TooManyMen { men: u32 },
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::MissingTable { material, rules } => {
                if material.is_decided_by_rules() {
                    return write!(
                        f,
                        "{material} has no table and needs none: a side is bare, so the rules decide every position"
                    );
                }
                if material.men() > MAX_MEN {
                    return write!(
                        f,
                        "{material} has {} men; tables hold at most {MAX_MEN}",
                        material.men()
                    );
                }
                let flag = if *rules == RuleSet::default() {
                    String::new()
                } else {
                    format!(" --rules {rules}")
                };
                write!(
                    f,
                    "missing table {material} for rules {rules}: generate it with `shatranj-tb generate {material}{flag}`"
                )
            }
            ProbeError::Io { path, source } => {
                let what = if is_table_file(path) {
                    "table file"
                } else {
                    "table folder"
                };
                write!(f, "cannot read the {what} {}: {source}", path.display())
            }
            ProbeError::Corrupt { path, message } => {
                write!(f, "damaged table file {}: {message}", path.display())
            }
            ProbeError::TooManyMen { men } => {
                write!(f, "position has {men} men; tables hold at most {MAX_MEN}")
            }
        }
    }
}

/// The message already says what the operating system reported, so no `source` is
/// given: a chain printer (`anyhow`'s `{:#}`) would print it a second time.
impl std::error::Error for ProbeError {}

/// Whether `path` names a table file (rather than the folder of the tables).
fn is_table_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == WDL_EXT || e == DTM_EXT || e == DTZ_EXT)
}

impl From<FormatError> for ProbeError {
    fn from(e: FormatError) -> ProbeError {
        match e {
            FormatError::Io { path, source } => ProbeError::Io { path, source },
            other => {
                // The format layer's message starts with the file's name, which
                // `ProbeError` writes itself.
                let path = other.path().to_path_buf();
                let full = other.to_string();
                let prefix = format!("table file {}: ", path.display());
                let message = full.strip_prefix(&prefix).unwrap_or(&full).to_string();
                ProbeError::Corrupt { path, message }
            }
        }
    }
}

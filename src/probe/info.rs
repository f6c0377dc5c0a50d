//! The figures of tables ([`TableInfo`]), read from the statistics in their files.

use super::{ProbeError, TableInfo, Tablebase};
use crate::color::Color;
use crate::format::Metric;
use crate::material::Material;
use crate::stats::DtzStats;
use crate::stats::TableStats;

impl Tablebase {
    /// The figures of one table, for `material` as written (White's pieces first).
    pub fn table_info(&self, material: Material) -> Result<TableInfo, ProbeError> {
        let stored = material.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material,
            rules: self.rules,
        })?;
        let dtm = self.file(slot, stored, Metric::Dtm)?;
        let wdl = self.file(slot, stored, Metric::Wdl)?;
        let stats: TableStats =
            serde_json::from_slice(&dtm.meta().extra).map_err(|e| ProbeError::Corrupt {
                path: dtm.path().to_path_buf(),
                message: format!("statistics unreadable: {e}"),
            })?;
        let stats = if material.is_mirrored_form() {
            stats.mirrored()
        } else {
            stats
        };
        let dtz = if self.has_dtz_file(stored) {
            let file = self.file(slot, stored, Metric::Dtz)?;
            let s = self.dtz_stats(stored)?;
            Some((
                file.file_len(),
                if material.is_mirrored_form() {
                    s.mirrored()
                } else {
                    s
                },
            ))
        } else {
            None
        };
        Ok(TableInfo {
            material,
            rules: self.rules,
            wdl_bytes: wdl.file_len(),
            dtm_bytes: dtm.file_len(),
            dtz_bytes: dtz.as_ref().map(|d| d.0),
            dtz: dtz.map(|d| d.1),
            white: stats.side(Color::White).clone(),
            black: stats.side(Color::Black).clone(),
        })
    }

    /// The DTZ figures of a table (stored colours), from its DTZ file under this
    /// tablebase's move rule.
    pub fn dtz_stats(&self, material: Material) -> Result<DtzStats, ProbeError> {
        let stored = material.normalized();
        let slot = self.present_slot(stored).ok_or(ProbeError::MissingTable {
            material,
            rules: self.rules,
        })?;
        let dtz = self.file(slot, stored, Metric::Dtz)?;
        serde_json::from_slice(&dtz.meta().extra).map_err(|e| ProbeError::Corrupt {
            path: dtz.path().to_path_buf(),
            message: format!("DTZ figures unreadable: {e}"),
        })
    }

    /// The figures of every table here.
    pub fn tables(&self) -> Result<Vec<TableInfo>, ProbeError> {
        self.materials()
            .into_iter()
            .map(|m| self.table_info(m))
            .collect()
    }
}

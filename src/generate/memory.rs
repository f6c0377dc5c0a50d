//! Tables held in memory: sub-tables for generating without files, and for tests.

use std::collections::HashMap;

use super::{GenError, Generated, NoProgress, Progress, SubTables, generate};
use crate::index::TableIndex;
use crate::material::Material;
use crate::position::Position;
use crate::rules::RuleSet;
use crate::value::Value;

/// Generated tables kept in memory, answering like files would.
pub struct MemoryTables {
    rules: RuleSet,
    tables: HashMap<Material, (TableIndex, Generated)>,
}

impl MemoryTables {
    #[must_use]
    pub fn new(rules: RuleSet) -> MemoryTables {
        MemoryTables {
            rules,
            tables: HashMap::new(),
        }
    }

    /// Generates `material` and everything it depends on that is not here yet.
    pub fn generate_with_dependencies(
        &mut self,
        material: Material,
        progress: &dyn Progress,
    ) -> Result<&Generated, GenError> {
        for m in material.with_dependencies() {
            if !self.tables.contains_key(&m) {
                let g = generate(m, self.rules, self, progress)?;
                self.insert(g);
            }
        }
        Ok(&self.tables[&material.normalized()].1)
    }

    /// Generates quietly; see [`MemoryTables::generate_with_dependencies`].
    pub fn generate(&mut self, material: Material) -> Result<&Generated, GenError> {
        self.generate_with_dependencies(material, &NoProgress)
    }

    pub fn insert(&mut self, g: Generated) {
        self.tables
            .insert(g.material, (TableIndex::new(g.material), g));
    }

    #[must_use]
    pub fn get(&self, material: &Material) -> Option<&Generated> {
        self.tables.get(&material.normalized()).map(|(_, g)| g)
    }
}

impl SubTables for MemoryTables {
    fn value(&self, pos: &Position) -> Result<Value, GenError> {
        if let Some(v) = Value::of_decided(pos, self.rules) {
            return Ok(v);
        }
        let m = Material::from_board(pos.board());
        let pos = if m.is_mirrored_form() {
            pos.swap_colors()
        } else {
            *pos
        };
        let stored = m.normalized();
        let (index, g) = self
            .tables
            .get(&stored)
            .ok_or_else(|| GenError::SubTable(format!("{stored} is not in memory")))?;
        let i = index
            .encode(pos.board())
            .ok_or_else(|| GenError::Inconsistent(format!("no index for {pos:?}")))?;
        g.value_at(pos.turn(), i)
            .ok_or_else(|| GenError::Inconsistent(format!("unused index for {pos:?}")))
    }
}

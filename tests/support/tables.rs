//! The default table set (every table up to 4 men, default rules), generated once into
//! `target/test-tables/` and shared by the test binaries. Generation keeps tables that
//! are present and intact, so later runs (and other test binaries) reuse them; files are
//! written to temporary names and renamed, so concurrent test binaries cannot see half a
//! table.

#![allow(dead_code)] // each test binary uses part of this

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use shatranj_tb::generate::NoProgress;
use shatranj_tb::generate::files::generate_into;
use shatranj_tb::{Material, RuleSet};

/// The directory of the default 4-man tables, generated on first use.
pub fn default_tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("target dir")
            .join("test-tables");
        generate_into(
            &dir,
            &Material::all_with_tables(4),
            RuleSet::default(),
            &NoProgress,
            |_| {},
        )
        .expect("the default tables generate");
        dir
    })
}

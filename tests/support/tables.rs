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

/// A directory holding the default 4-man tables and the 5-man tables `materials`
/// (default rules), for tests that compare with a 5-man table: the 4-man files are
/// linked (or copied) from [`default_tables`], the 5-man ones generated on first use.
pub fn five_man_tables(materials: &[Material]) -> PathBuf {
    // one thread at a time: two linking the same file at once would race
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let four = default_tables();
    let dir = four.with_file_name("test-tables-5");
    std::fs::create_dir_all(&dir).expect("a test table directory");
    for entry in std::fs::read_dir(four).expect("the 4-man tables") {
        let entry = entry.expect("a directory entry");
        let target = dir.join(entry.file_name());
        if target.exists() || entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        match std::fs::hard_link(entry.path(), &target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // no hard links here: a copy, written beside and renamed into place
            Err(_) => {
                let tmp = dir.join(format!(".{}.copy", entry.file_name().to_string_lossy()));
                std::fs::copy(entry.path(), &tmp).expect("copying a 4-man table");
                std::fs::rename(&tmp, &target).expect("renaming a copied table");
            }
        }
    }
    generate_into(&dir, materials, RuleSet::default(), &NoProgress, |_| {})
        .expect("the 5-man tables generate");
    dir
}

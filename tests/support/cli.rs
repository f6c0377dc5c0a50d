//! Helpers for the tests that run the `shatranj-tb` binary.

#![allow(dead_code)] // each test binary uses part of this

use std::path::Path;
use std::process::{Command, Output};

use shatranj_tb::probe::Tablebase;
use shatranj_tb::{Material, RuleSet};

/// Runs the binary with `args` (no `SHATRANJ_TB_PATH` from the environment).
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shatranj-tb"))
        .args(args)
        .env_remove("SHATRANJ_TB_PATH")
        .output()
        .expect("the binary runs")
}

/// After a generation of the 4-man set was cancelled: only whole tables in `dir` (the WDL
/// and DTM files, every block intact, and the DTZ file if the table got that far, intact
/// too: it is written last, and a later run makes a missing one), no temporary file, and
/// fewer tables than the full set (else the signal came too late to prove anything).
pub fn check_only_whole_tables(dir: &Path) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in &names {
        assert!(
            name.ends_with(".tbw") || name.ends_with(".tbd") || name.ends_with(".tbz"),
            "a stray file after cancelling: {name} (all: {names:?})"
        );
    }
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let present = tb.materials();
    for m in &present {
        tb.check_files(*m)
            .unwrap_or_else(|e| panic!("{m} is not whole: {e}"));
    }
    assert!(
        present.len() < Material::all_with_tables(4).len(),
        "generation was over before the signal ({} tables): the test proves nothing",
        present.len()
    );
    let with_dtz = present.iter().filter(|m| tb.has_dtz_file(**m)).count();
    // every file belongs to a present table: a DTZ file without its table would be stray
    assert_eq!(names.len(), 2 * present.len() + with_dtz, "{names:?}");
}

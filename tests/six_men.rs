//! Six men without generating a 6-man table: `generate` takes 6-man materials and refuses,
//! before it starts and writing nothing, a table whose estimated memory is beyond
//! `--memory-limit`; `verify` asks for `--sample` on a 6-man table; `probe` of a 6-man
//! position whose table is missing says which table and how to make it.

#[path = "support/cli.rs"]
mod support_cli;

use std::path::Path;
use std::process::Output;

use shatranj_tb::generate::budget::{Needs, human_bytes, thousands};
use shatranj_tb::probe::{ProbeError, Tablebase};
use shatranj_tb::{Material, Position, RuleSet};
use support_cli::run;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn names_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn m(s: &str) -> Material {
    s.parse().unwrap()
}

/// A position of KRRvKRR (rooks in the corners, no check), White to move.
const KRRVKRR: &str = "r6r/8/8/3k4/8/8/1K6/R6R w - - 0 1";

/// The parts of a refusal for want of memory.
fn memory_refusal_parts(material: &str, limit_shown: &str) -> Vec<String> {
    let needs = Needs::of(m(material));
    vec![
        format!("{} needs more memory than the limit", needs.material),
        format!("{} positions", thousands(needs.positions)),
        format!("about {} of memory", human_bytes(needs.memory_bytes)),
        format!(
            "{} of disk",
            human_bytes(needs.disk_bytes + needs.scratch_bytes)
        ),
        format!("the memory limit is {limit_shown}"),
        "--memory-limit SIZE raises it".to_string(),
        "nothing was written".to_string(),
    ]
}

/// A 4-man and a 6-man table beyond a small limit: exit 1, a message with the table, its
/// positions, the memory and disk it needs and the limit, and nothing written (the
/// folder stays empty; a folder not there yet is not created), with its dependencies
/// and alone (`--no-deps`).
#[test]
fn a_table_beyond_the_memory_limit_is_refused_writing_nothing() {
    for (material, limit, shown) in [("KRvKQ", "10M", "10.0 MiB"), ("KRRvKRR", "4GiB", "4.0 GiB")] {
        for no_deps in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let fresh = tmp.path().join("new");
            for folder in [tmp.path(), fresh.as_path()] {
                let mut args = vec!["generate", material, "--tables", folder.to_str().unwrap()];
                args.extend(["--memory-limit", limit]);
                if no_deps {
                    args.push("--no-deps");
                }
                let out = run(&args);
                let err = stderr(&out);
                assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
                for part in memory_refusal_parts(material, shown) {
                    assert!(err.contains(&part), "{args:?}: {part:?} not in {err}");
                }
                assert!(!err.contains("panicked"), "{err}");
                assert!(
                    names_in(tmp.path()).is_empty(),
                    "{args:?}: {:?}",
                    names_in(tmp.path())
                );
            }
        }
    }
}

/// A run is checked before its first table: `--men 6` under a limit that every table up
/// to 5 men fits (so a run that only looked table by table would write those first)
/// names its largest table and writes nothing.
#[test]
fn a_run_is_refused_by_its_largest_table_before_the_first() {
    let needs: Vec<Needs> = Material::all_with_tables(6)
        .into_iter()
        .map(Needs::of)
        .collect();
    let largest = needs.iter().max_by_key(|n| n.memory_bytes).unwrap();
    assert_eq!(largest.material.men(), 6);
    let five_max = needs
        .iter()
        .filter(|n| n.material.men() <= 5)
        .map(|n| n.memory_bytes)
        .max()
        .unwrap();
    let limit = (five_max + (1 << 30)).div_ceil(1 << 30);
    assert!(limit << 30 < largest.memory_bytes);
    let tmp = tempfile::tempdir().unwrap();
    let limit_arg = format!("{limit}G");
    let out = run(&[
        "generate",
        "--men",
        "6",
        "--tables",
        tmp.path().to_str().unwrap(),
        "--memory-limit",
        &limit_arg,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for part in memory_refusal_parts(&largest.material.to_string(), &format!("{limit}.0 GiB")) {
        assert!(err.contains(&part), "{part:?} not in {err}");
    }
    // refused before any table started: none announced what it needs
    assert!(!err.contains("(estimated)"), "{err}");
    assert!(
        names_in(tmp.path()).is_empty(),
        "{:?}",
        names_in(tmp.path())
    );
}

/// A table that fits says what it needs before it starts, also when stderr is not a
/// terminal: its positions, memory and disk, the figures of `--plan`.
#[test]
fn a_table_states_what_it_needs_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(&[
        "generate",
        "KRvKQ",
        "--tables",
        tmp.path().to_str().unwrap(),
        "--memory-limit",
        "1G",
    ]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let needs = Needs::of(m("KRvKQ"));
    let line = format!(
        "KRvKQ: 3,784,704 positions; about {} of memory and {} of disk (estimated)",
        human_bytes(needs.memory_bytes),
        human_bytes(needs.disk_bytes + needs.scratch_bytes)
    );
    let announced = err
        .find(&line)
        .unwrap_or_else(|| panic!("{line:?} not in {err}"));
    let written = err
        .find("KRvKQ: 23773728 positions")
        .expect("the table's summary");
    assert!(announced < written, "{err}");
    assert_eq!(needs.positions, 2 * 462 * 64 * 64);
}

/// `--memory-limit` takes bytes or a unit, and refuses anything else as the user's error.
#[test]
fn memory_limits_are_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    // 20 MB (decimal) is below KRvKQ's estimate
    let needs = Needs::of(m("KRvKQ"));
    assert!(needs.memory_bytes > 20_000_000 && needs.memory_bytes < 100_000_000);
    let out = run(&[
        "generate",
        "KRvKQ",
        "--tables",
        dir,
        "--memory-limit",
        "20MB",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the memory limit is 19.1 MiB"),
        "{}",
        stderr(&out)
    );
    for bad in ["lots", "14X", "-1G", "1.5.1G"] {
        let arg = format!("--memory-limit={bad}");
        let out = run(&["generate", "KRvKQ", "--tables", dir, &arg]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
        assert!(err.contains("is not a size"), "{bad}: {err}");
    }
    assert!(names_in(tmp.path()).is_empty());
}

/// Seven men are still beyond the tablebase, with the same words as before; six are not.
#[test]
fn seven_men_are_refused_six_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = run(&["generate", "KRRRvKRR", "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("KRRRvKRR has 7 men; tables hold at most 6"),
        "{}",
        stderr(&out)
    );
    let out = run(&["generate", "--men", "7", "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("at most 6 men are generated"),
        "{}",
        stderr(&out)
    );
    // a 7-man position: too many men, not a missing table
    let out = run(&[
        "probe",
        "r6r/8/8/3k4/8/8/1K6/RR5R w - - 0 1",
        "--tables",
        dir,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("7 men; tables hold at most 6"),
        "{}",
        stderr(&out)
    );
    assert!(names_in(tmp.path()).is_empty());
}

/// A 6-man position whose table is missing: the missing-table error naming it and the
/// command that builds it, from the CLI and the library, not "at most 5 men".
#[test]
fn a_six_man_position_without_its_table_is_a_missing_table() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    for args in [
        vec!["probe", KRRVKRR, "--tables", dir],
        vec!["probe", KRRVKRR, "--tables", dir, "--json"],
        vec!["info", "KRRvKRR", "--tables", dir],
    ] {
        let out = run(&args);
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert_eq!(out.status.code(), Some(1), "{args:?}: {all}");
        assert!(all.contains("missing table KRRvKRR"), "{args:?}: {all}");
        assert!(all.contains("generate KRRvKRR --tables"), "{args:?}: {all}");
        assert!(!all.contains("at most"), "{args:?}: {all}");
    }
    let tb = Tablebase::open(tmp.path(), RuleSet::default()).unwrap();
    let pos = Position::from_fen(KRRVKRR).unwrap();
    match tb.value(&pos) {
        Err(ProbeError::MissingTable { material, .. }) => assert_eq!(material, m("KRRvKRR")),
        other => panic!("{other:?}"),
    }
    // with pawns, Black the stronger side (the table is stored as KRRPvKP)
    let pawns = Position::from_fen("r3k2r/8/4p3/8/8/4P3/8/4K3 w - - 0 1").unwrap();
    match tb.wdl(&pawns) {
        Err(e @ ProbeError::MissingTable { .. }) => {
            assert!(e.to_string().contains("missing table KPvKRRP"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

/// `verify` of a 6-man table checks a sample: without `--sample` it says so, before
/// looking for the table; with it, a missing table is the missing-table error.
#[test]
fn verify_of_six_men_asks_for_a_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = run(&["verify", "KRRvKRR", "--tables", dir]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("KRRvKRR has 6 men"), "{err}");
    assert!(err.contains("--sample N"), "{err}");
    let out = run(&["verify", "KRRvKRR", "--sample", "1000", "--tables", dir]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("missing table KRRvKRR"), "{err}");
}

/// The limit is on tables to generate: a table present and intact is kept under any
/// limit, in a run and as one job.
#[test]
fn a_table_present_is_kept_under_any_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let out = run(&["generate", "KRvKQ", "--tables", dir, "--memory-limit", "1G"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let files = names_in(tmp.path()).len();
    for extra in [None, Some("--no-deps")] {
        let mut args = vec!["generate", "KRvKQ", "--tables", dir, "--memory-limit", "1M"];
        args.extend(extra);
        let out = run(&args);
        let err = stderr(&out);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("KRvKQ: present and intact, kept"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("(estimated)"), "{args:?}: {err}");
    }
    assert_eq!(names_in(tmp.path()).len(), files);
}

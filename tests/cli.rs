//! The `shatranj-tb` binary: output formats and exit codes (0 ok, 1 user error).

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shatranj-tb"))
        .args(args)
        .output()
        .expect("run shatranj-tb")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn perft_prints_the_count() {
    let o = run(&["perft", "startpos", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "4176\n");
    // full FEN, and the F/A letters
    let o = run(&["perft", "8/8/3k4/8/2an4/8/8/R2FK3 w - - 0 1", "2"]);
    assert_eq!(stdout(&o), "262\n");
}

#[test]
fn perft_divide_lists_moves_and_total() {
    let o = run(&["perft", "startpos", "2", "--divide"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 17);
    assert_eq!(lines[0], "a2a3 16");
    assert_eq!(lines[16], "total 256");
    let sum: u64 = lines[..16]
        .iter()
        .map(|l| l.split_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 256);
    // promotions are written with the ferz letter
    let o = run(&[
        "perft",
        "8/1P4k1/8/8/8/5q2/6P1/4K3 w - - 0 1",
        "1",
        "--divide",
    ]);
    assert!(stdout(&o).contains("b7b8q 1\n"), "{}", stdout(&o));
}

#[test]
fn user_errors_exit_1_with_a_message() {
    for (args, needle) in [
        (&["perft", "8/8/8 w", "2"][..], "invalid FEN"),
        (
            &["perft", "4k3/8/8/8/8/8/8/K3R3 w", "2"][..],
            "illegal position",
        ),
        (&["perft", "startpos", "two"][..], "invalid value"),
        (&["perft", "startpos"][..], "required"),
        (&["no-such-command"][..], "unrecognized subcommand"),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
    // the error chain is printed once, without repeating itself
    let o = run(&["perft", "4k3/8/8/8/8/8/8/K3R3 w", "2"]);
    assert_eq!(
        stderr(&o),
        "shatranj-tb: error: FEN '4k3/8/8/8/8/8/8/K3R3 w': illegal position: \
         the side not to move is in check\n"
    );
}

#[test]
fn help_shows_the_piece_legend() {
    for args in [&["--help"][..], &["perft", "--help"][..]] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0));
        let out = stdout(&o);
        assert!(out.contains(shatranj_tb::role::LEGEND), "{args:?}: {out}");
    }
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("shatranj-tb "));
}

/// Abu Na'im's mansuba (Murray No. 53): White mates in 3 with Nh5+ only.
const ABU_NAIM: &str = "6K1/3r3r/5kn1/5p2/5P2/6N1/8/4R1R1 w - - 0 1";

#[test]
fn solve_proves_a_mansuba_in_words_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().to_str().unwrap();
    let o = run(&["solve", ABU_NAIM, "--plies", "7", "--tables", tables]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("White wins in 5 plies by shah mat"), "{out}");
    assert!(out.contains("Key (unique): Nh5+ g3h5 (5 plies)"), "{out}");
    assert!(
        out.contains("Main line: 1. Nh5+ Rxh5 2. Rxg6+ Kxg6 3. Re6# (checkmate)"),
        "{out}"
    );
    let o = run(&[
        "solve", ABU_NAIM, "--plies", "7", "--tables", tables, "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["result"], "win");
    assert_eq!(j["plies"], 5);
    assert_eq!(j["end"], "checkmate");
    assert_eq!(
        j["keys"],
        serde_json::json!([{"uci": "g3h5", "san": "Nh5+", "plies": 5}])
    );
    assert_eq!(
        j["line_san"],
        serde_json::json!(["Nh5+", "Rxh5", "Rxg6+", "Kxg6", "Re6#"])
    );
    assert_eq!(
        j["line"],
        serde_json::json!(["g3h5", "h7h5", "g1g6", "f6g6", "e1e6"])
    );
    for field in ["tree", "nodes", "table_hits", "seconds", "rules", "fen"] {
        assert!(!j[field].is_null(), "{field}");
    }
    // within 3 plies there is no win, and nothing more is claimed
    let o = run(&[
        "solve", ABU_NAIM, "--plies", "3", "--tables", tables, "--json",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (j["result"].as_str(), j["plies"].is_null()),
        (Some("unknown"), true)
    );
    assert_eq!(j["proved"], "no forced win within 3 plies");
}

#[test]
fn solve_refuses_bad_input_as_a_user_error() {
    for (args, says) in [
        (vec!["solve", "not a fen"], "FEN"),
        (
            vec!["solve", "8/8/8/4k3/8/8/4R3/K7 w - - 0 1"],
            "illegal position",
        ),
        (vec!["solve", ABU_NAIM, "--plies", "0"], "plies"),
        (vec!["solve", ABU_NAIM, "--plies", "999"], "plies"),
        (vec!["solve", ABU_NAIM, "--hash", "0"], "hash"),
        (vec!["solve", ABU_NAIM, "--hash", "99999999"], "hash"),
        (vec!["solve", ABU_NAIM, "--time", "0"], "--time"),
        (vec!["solve", ABU_NAIM, "--threads", "100000"], "threads"),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}
/// `--tables` naming a folder that does not exist, a file, or a path that cannot be read
/// as a folder: exit 1, the message naming the folder and the cause, for every command
/// that reads tables.
#[test]
fn a_bad_tables_folder_is_a_user_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, b"not a folder").unwrap();
    let missing = tmp.path().join("nonexistent");
    let under_file = file.join("sub");
    let fen = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1";
    for (dir, needle) in [
        (&missing, "does not exist"),
        (&file, "is not a folder"),
        (&under_file, "cannot read the table folder"),
    ] {
        let dir = dir.to_str().unwrap();
        for args in [
            &["verify", "--tables", dir][..],
            &["info", "--tables", dir][..],
            &["probe", fen, "--tables", dir][..],
            &["line", fen, "--tables", dir][..],
        ] {
            let o = run(args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains(needle) && err.contains(dir), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(stdout(&o).is_empty(), "{args:?}");
        }
    }
    // generate creates a missing folder, but not one under a file
    let o = run(&["generate", "KQvK", "--tables", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = run(&[
        "generate",
        "KQvKQ",
        "--tables",
        under_file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot read the table folder"),
        "{}",
        stderr(&o)
    );
    // an existing but empty folder has no tables to verify: a user error too
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = run(&["verify", "--tables", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no tables"), "{}", stderr(&o));
    // and a probe there says which table is missing and how to make it there
    let o = run(&["probe", fen, "--tables", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let want = format!(
        "`shatranj-tb generate KQvKQ --tables {}`",
        empty.to_str().unwrap()
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
}

/// `info` advises only commands that work: a material with a bare side needs no table,
/// one of seven men is beyond the tablebase.
#[test]
fn info_advises_only_what_works() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    for (material, needle) in [("KQQQQvK", "needs none"), ("KQQvKQRR", "at most 6")] {
        let o = run(&["info", material, "--tables", dir]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{material}: {err}");
        assert!(err.contains(needle), "{material}: {err}");
        assert!(!err.contains("generate"), "{material}: {err}");
        // and generate refuses them, as info says
        let o = run(&["generate", material, "--tables", dir]);
        assert_eq!(o.status.code(), Some(1), "{material}: {}", stderr(&o));
    }
}

/// With `--json`, an error is one JSON object on stdout, `{"error", "kind"}`, and the
/// exit code is unchanged.
#[test]
fn json_errors_are_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    let missing = tmp.path().join("nonexistent");
    for (args, kind, code) in [
        (
            &["probe", "8/8/8 w", "--json", "--tables", dir][..],
            "invalid-fen",
            1,
        ),
        (
            &["probe", "4k3/8/8/8/8/8/8/K3R3 w", "--json", "--tables", dir][..],
            "illegal-position",
            1,
        ),
        (
            &["line", "8/8/8/3k4/8/1KQ5/8/q7 w", "--json", "--tables", dir][..],
            "missing-table",
            1,
        ),
        (
            &["info", "--json", "--tables", missing.to_str().unwrap()][..],
            "missing-folder",
            1,
        ),
        (&["probe", "--json"][..], "usage", 1),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        let j: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", stdout(&o)));
        assert_eq!(j["kind"], kind, "{args:?}: {j}");
        assert!(
            j["error"].as_str().is_some_and(|m| !m.is_empty()),
            "{args:?}: {j}"
        );
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn perft_refuses_absurd_depths() {
    let o = run(&["perft", "startpos", "99"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("at most 12"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
}

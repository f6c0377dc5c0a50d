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

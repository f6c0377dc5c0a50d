//! The table commands of the binary: probe, line, info, verify, generate.

#[path = "support/tables.rs"]
mod support_tables;

#[path = "support/cli.rs"]
mod support_cli;

use std::process::Output;

use serde_json::Value as Json;
use support_cli::run;
use support_tables::{count_legal_placements, default_tables};

fn json_of(out: &Output) -> Json {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

const DIAMOND: &str = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1";

#[test]
fn probe_json_of_al_sulis_diamond() {
    let dir = default_tables().to_str().unwrap();
    let j = json_of(&run(&["probe", DIAMOND, "--tables", dir, "--json"]));
    assert_eq!(j["fen"], DIAMOND);
    assert_eq!(j["material"], "KQvKQ");
    assert_eq!(j["rules"], "bare-king=counter,stalemate=loss");
    assert_eq!(j["wdl"], "win");
    assert_eq!(j["dtm"], 39);
    assert_eq!(j["end"], Json::Null);
    assert_eq!(j["best_move"], "b3b4");
    let moves = j["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 9);
    assert_eq!(moves[0]["uci"], "b3b4");
    assert_eq!(moves[0]["dtm"], 39);
    assert!(
        moves
            .iter()
            .any(|m| m["wdl"] == "draw" && m["dtm"].is_null())
    );

    let human = run(&["probe", DIAMOND, "--tables", dir]);
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.contains("White wins in 39 plies"), "{text}");
}

#[test]
fn line_json_plays_to_the_end() {
    let dir = default_tables().to_str().unwrap();
    let j = json_of(&run(&["line", DIAMOND, "--tables", dir, "--json"]));
    let line = j["line"].as_array().unwrap();
    assert_eq!(line.len(), 39);
    assert_eq!(line[0]["uci"], "b3b4");
    assert_eq!(line[0]["dtm"], 38);
    assert_eq!(line[38]["dtm"], 0);
    assert_eq!(line[38]["wdl"], "loss");
    assert!(line[38]["end"].is_string());
}

#[test]
fn rules_decide_bare_sides_without_files() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let j = json_of(&run(&[
        "probe",
        "8/3k4/5R2/8/4K3/8/8/8 b",
        "--tables",
        dir,
        "--json",
    ]));
    assert_eq!(j["wdl"], "loss");
    assert_eq!(j["dtm"], 0);
    assert_eq!(j["end"], "bare-king");
    let j = json_of(&run(&[
        "probe",
        "8/4k3/5R2/8/4K3/8/8/8 b",
        "--tables",
        dir,
        "--json",
    ]));
    assert_eq!(j["wdl"], "draw");
    assert_eq!(j["best_move"], "e7f6");
    let j = json_of(&run(&[
        "probe",
        "8/4k3/5R2/8/4K3/8/8/8 b",
        "--tables",
        dir,
        "--rules",
        "bare-king=immediate",
        "--json",
    ]));
    assert_eq!(j["wdl"], "loss");
    assert_eq!(j["rules"], "bare-king=immediate,stalemate=loss");
}

#[test]
fn errors_name_the_problem() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let out = run(&["probe", DIAMOND, "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing table KQvKQ"), "{err}");
    assert!(err.contains("shatranj-tb generate KQvKQ"), "{err}");

    let out = run(&["probe", "8/8/8/3k4/8/1KQ5/8/q7 x", "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("side-to-move"));

    let out = run(&["probe", "8/8/8/3Kk3/8/8/8/8 w", "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("adjacent"));

    let out = run(&["generate", "KRvK", "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs no table"));

    let out = run(&[
        "probe",
        DIAMOND,
        "--tables",
        dir,
        "--rules",
        "bare-king=sometimes",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn info_reports_the_material_as_written() {
    let dir = default_tables().to_str().unwrap();
    let j = json_of(&run(&["info", "KQvKR", "--tables", dir, "--json"]));
    let t = &j["tables"][0];
    assert_eq!(t["material"], "KQvKR");
    assert_eq!(t["black"]["loss"], 0);
    assert!(t["wdl_bytes"].as_u64().unwrap() > 0);
    // the figures count every legal placement once, as placing the men says
    let material = "KQvKR".parse().unwrap();
    for (side, turn) in [
        ("white", shatranj_tb::Color::White),
        ("black", shatranj_tb::Color::Black),
    ] {
        let legal = t[side]["legal"].as_u64().unwrap();
        assert_eq!(legal, count_legal_placements(material, turn), "{side}");
        let sum = ["win", "draw", "loss"]
            .iter()
            .map(|k| t[side][k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(legal, sum, "{side}");
    }
    assert!(t["white"]["longest_win"]["plies"].as_u64().unwrap() > 0);
    // the ferz side to move can lose; the rook side never does
    assert!(t["white"]["longest_loss"]["fen"].is_string());
    assert!(t["black"]["longest_loss"].is_null());
}

#[test]
fn verify_and_generate_on_a_copy() {
    let copy = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(default_tables()).unwrap() {
        let f = f.unwrap();
        let name = f.file_name().into_string().unwrap();
        if name.starts_with("KNvKN.") || name.starts_with("KBvKB.") {
            std::fs::copy(f.path(), copy.path().join(&name)).unwrap();
        }
    }
    let dir = copy.path().to_str().unwrap();
    let out = run(&["verify", "--tables", dir]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KNvKN: ") && err.contains("all agree"),
        "{err}"
    );
    // a sample of random positions
    let out = run(&["verify", "KBvKB", "--sample", "5000", "--tables", dir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("KBvKB: 5000 random positions checked, all agree"),
        "{err}"
    );
    let out = run(&["verify", "KBvKB", "--sample", "0", "--tables", dir]);
    assert_eq!(out.status.code(), Some(1));

    // present and intact tables are kept
    let out = run(&["generate", "KNvKN", "--tables", dir]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("kept"));

    // a flipped byte in a block is found
    let path = copy.path().join("KBvKB.counter-loss.tbd");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 100;
    bytes[at] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let out = run(&["verify", "KBvKB", "--tables", dir]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("KBvKB.counter-loss.tbd"), "{err}");

    // generate replaces the damaged table
    let out = run(&["generate", "KBvKB", "--tables", dir]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["verify", "KBvKB", "--tables", dir]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A table whose WDL file is missing or damaged: `probe` and `line` (which read the DTM
/// file) answer but name the broken file in a warning; `info` fails naming it; a damaged
/// file's message says what is wrong once, with the file named once.
#[test]
fn a_broken_wdl_file_is_named() {
    let source = default_tables();
    let dir = tempfile::tempdir().unwrap();
    let tbd = "KQvKQ.counter-loss.tbd";
    let tbw = "KQvKQ.counter-loss.tbw";
    std::fs::copy(source.join(tbd), dir.path().join(tbd)).unwrap();
    let d = dir.path().to_str().unwrap();
    for cmd in ["probe", "line"] {
        let out = run(&[cmd, DIAMOND, "--tables", d]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {err}");
        assert!(err.contains("warning") && err.contains(tbw), "{cmd}: {err}");
    }
    let out = run(&["info", "KQvKQ", "--tables", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(tbw) && err.contains("No such file"), "{err}");

    // truncated: named once, the fault said once
    let bytes = std::fs::read(source.join(tbw)).unwrap();
    std::fs::write(dir.path().join(tbw), &bytes[..bytes.len() / 2]).unwrap();
    let out = run(&["info", "KQvKQ", "--tables", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches(tbw).count(), 1, "{err}");
    assert_eq!(err.matches("truncated").count(), 1, "{err}");
    assert!(err.contains("damaged table file"), "{err}");
}

/// Probing a position of a table that is present prints its moves in SAN, and a win in
/// one is "1 ply", not "1 plies".
#[test]
fn moves_in_san_and_one_ply() {
    let dir = default_tables().to_str().unwrap();
    let out = run(&["line", "k7/7p/1K6/8/8/8/8/6R1 w - - 0 1", "--tables", dir]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("White wins in 1 ply\n"), "{text}");
    assert!(text.contains("g1g8   Rg8#"), "{text}");
    let j = json_of(&run(&["probe", DIAMOND, "--tables", dir, "--json"]));
    assert_eq!(j["moves"][0]["san"], "Kb4");
    // a draw: a line of 20 plies that keep it
    let drawn = "8/8/8/4k3/8/2q5/8/1K1Q4 w - - 0 1";
    let j = json_of(&run(&["line", drawn, "--tables", dir, "--json"]));
    assert_eq!(j["wdl"], "draw");
    let line = j["line"].as_array().unwrap();
    assert_eq!(line.len(), 20);
    assert!(
        line.iter()
            .all(|s| s["wdl"] == "draw" && s["end"].is_null())
    );
}

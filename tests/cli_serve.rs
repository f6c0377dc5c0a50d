//! `shatranj-tb serve` as a process: where it listens, what stops it, and what it leaves
//! behind when stopped while it still generates its tables.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use shatranj_tb::probe::Tablebase;
use shatranj_tb::{Material, RuleSet};

fn serve(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_shatranj-tb"))
        .arg("serve")
        .args(args)
        .env_remove("SHATRANJ_TB_PATH")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// The first line of the server's log, which names the address it listens on.
fn first_line(child: &mut Child) -> (String, BufReader<ChildStderr>) {
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("read the log");
    (line, err)
}

/// Sends SIGTERM (through the shell's own `kill`, present wherever `sh` is).
fn terminate(child: &Child) {
    let ok = Command::new("sh")
        .args(["-c", "kill -TERM \"$0\"", &child.id().to_string()])
        .status()
        .expect("run sh")
        .success();
    assert!(ok, "kill -TERM failed");
}

/// Waits for the process to exit, at most `limit`; its exit code and how long it took.
fn wait_at_most(child: &mut Child, limit: Duration) -> (Option<i32>, Duration) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return (status.code(), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the server did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_port_in_use_is_a_user_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shatranj-tb"))
        .args(["serve", "--no-generate", "--listen", &addr, "--tables"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&addr) && err.contains("another process uses that port"),
        "{err}"
    );
    assert_eq!(
        err.matches("Address already in use").count(),
        1,
        "the cause once: {err}"
    );
}

#[test]
fn no_generate_refuses_a_missing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("does-not-exist");
    let out = Command::new(env!("CARGO_BIN_EXE_shatranj-tb"))
        .args([
            "serve",
            "--no-generate",
            "--listen",
            "127.0.0.1:0",
            "--tables",
        ])
        .arg(&missing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("does not exist"), "{err}");
}

/// A host name is resolved; an empty folder is served with a loud warning; SIGTERM stops
/// the server with exit code 0.
#[test]
fn listens_on_a_host_name_and_warns_of_an_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve(&[
        "--no-generate",
        "--listen",
        "localhost:0",
        "--tables",
        dir.path().to_str().unwrap(),
    ]);
    let (line, mut err) = first_line(&mut child);
    assert!(line.contains("listening on "), "{line}");
    let mut rest = String::new();
    let mut warned = false;
    let mut serving = false;
    while !(warned && serving) {
        rest.clear();
        if err.read_line(&mut rest).unwrap() == 0 {
            break;
        }
        warned |= rest.contains("WARNING: no tables");
        serving |= rest.contains("serving shatranj.tablebase.v1.Tablebase");
    }
    assert!(warned && serving, "{line}{rest}");
    terminate(&child);
    let (code, _) = wait_at_most(&mut child, Duration::from_secs(15));
    assert_eq!(code, Some(0));
}

/// SIGTERM while `serve` still generates its default tables: the generation stops, the
/// process exits 0 within the promised 10 s, and the folder holds only whole tables
/// (each with both files, every block intact) and no temporary file.
#[test]
fn sigterm_during_generation_exits_promptly_leaving_no_partial_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve(&[
        "--listen",
        "127.0.0.1:0",
        "--tables",
        dir.path().to_str().unwrap(),
    ]);
    let (line, _err) = first_line(&mut child);
    assert!(line.contains("listening on "), "{line}");
    // The default set takes seconds to generate: stop it after its first tables.
    std::thread::sleep(Duration::from_millis(1500));
    terminate(&child);
    let (code, took) = wait_at_most(&mut child, Duration::from_secs(20));
    assert_eq!(code, Some(0));
    assert!(took < Duration::from_secs(10), "exit took {took:?}");
    check_only_whole_tables(dir.path());
}

fn check_only_whole_tables(dir: &Path) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in &names {
        assert!(
            name.ends_with(".tbw") || name.ends_with(".tbd"),
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
        "generation was over before SIGTERM ({} tables): the test proves nothing",
        present.len()
    );
    assert_eq!(names.len(), 2 * present.len(), "{names:?}");
}

//! `shatranj-tb serve` as a process: where it listens, what stops it, and what it leaves
//! behind when stopped while it still generates its tables.

#[path = "support/cli.rs"]
mod support_cli;

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use shatranj_tb::{Material, RuleSet};
use support_cli::check_only_whole_tables;

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

/// One HTTP/1.1 GET; the status and the body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the HTTP API");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read the answer");
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {raw:?}"));
    let body = raw
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// A served table file copied over in place (as `cp` does) makes its probes fail with a
/// 500 naming the file, not the server crash; copied back, it answers again.
#[test]
fn a_served_file_copied_over_in_place_is_an_error_not_a_crash() {
    let source = tempfile::tempdir().unwrap();
    let m: Material = "KQvKQ".parse().unwrap();
    shatranj_tb::generate::files::generate_into(
        source.path(),
        &[m],
        RuleSet::default(),
        &shatranj_tb::generate::NoProgress,
        |_| {},
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for ext in ["tbw", "tbd"] {
        let name = format!("KQvKQ.counter-loss.{ext}");
        std::fs::copy(source.path().join(&name), dir.path().join(&name)).unwrap();
    }
    let mut child = serve(&[
        "--no-generate",
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
        "--cache-mb",
        "0",
        "--tables",
        dir.path().to_str().unwrap(),
    ]);
    let (_, mut err) = first_line(&mut child);
    let (mut http, mut serving, mut line) = (None, false, String::new());
    while http.is_none() || !serving {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the log ended");
        if let Some(rest) = line.split_once("HTTP API on http://") {
            http = Some(rest.1.trim().trim_end_matches('/').to_string());
        }
        serving |= line.contains("serving shatranj.tablebase.v1.Tablebase");
    }
    let http = http.unwrap();
    // the log says so just before the server has the tables
    let start = Instant::now();
    while http_get(&http, "/healthz").0 != 200 {
        assert!(start.elapsed() < Duration::from_secs(20), "never healthy");
        std::thread::sleep(Duration::from_millis(20));
    }
    let probe = "/api/v1/probe?fen=8/8/8/3k4/8/1KQ5/8/q7_w_-_-_0_1";
    let (status, want) = http_get(&http, probe);
    assert_eq!(status, 200, "{want}");
    let tbd = dir.path().join("KQvKQ.counter-loss.tbd");
    let shorter = std::fs::read(source.path().join("KQvKQ.counter-loss.tbw")).unwrap();
    // `std::fs::write` opens with truncation and writes, as `cp` does
    std::fs::write(&tbd, &shorter).unwrap();
    let (status, body) = http_get(&http, probe);
    assert_eq!(status, 500, "{body}");
    assert!(
        body.contains("KQvKQ.counter-loss.tbd") && body.contains("changed in place"),
        "{body}"
    );
    std::fs::copy(source.path().join("KQvKQ.counter-loss.tbd"), &tbd).unwrap();
    assert_eq!(http_get(&http, probe), (200, want));
    assert!(child.try_wait().unwrap().is_none(), "the server exited");
    terminate(&child);
    let (code, _) = wait_at_most(&mut child, Duration::from_secs(15));
    assert_eq!(code, Some(0));
}

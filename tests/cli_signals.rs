//! `shatranj-tb generate` stopped by SIGTERM or SIGINT: it cancels within a few seconds,
//! says so, exits non-zero, and leaves only whole tables behind.

#[path = "support/cli.rs"]
mod support_cli;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support_cli::check_only_whole_tables;

fn generate(dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_shatranj-tb"))
        .args(["generate", "--men", "4", "--tables"])
        .arg(dir)
        .env_remove("SHATRANJ_TB_PATH")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Sends `signal` (through the shell's own `kill`, present wherever `sh` is).
fn send(child: &Child, signal: &str) {
    let ok = Command::new("sh")
        .args([
            "-c",
            &format!("kill -{signal} \"$0\""),
            &child.id().to_string(),
        ])
        .status()
        .expect("run sh")
        .success();
    assert!(ok, "kill -{signal} failed");
}

/// Waits for the process to exit, at most `limit`: its exit code, how long it took, and
/// its stderr.
fn wait_at_most(child: &mut Child, limit: Duration) -> (Option<i32>, Duration, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), start.elapsed(), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("generate did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stopped_by(signal: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = generate(dir.path());
    // The 4-man set takes seconds: stop it after its first tables.
    std::thread::sleep(Duration::from_millis(1500));
    send(&child, signal);
    let (code, took, err) = wait_at_most(&mut child, Duration::from_secs(20));
    assert_eq!(code, Some(1), "{err}");
    assert!(took < Duration::from_secs(5), "exit took {took:?}");
    assert!(
        err.contains("generation cancelled by a signal"),
        "no message naming the cancellation: {err}"
    );
    check_only_whole_tables(dir.path());
}

#[test]
fn sigterm_cancels_generate_leaving_only_whole_tables() {
    stopped_by("TERM");
}

#[test]
fn sigint_cancels_generate_leaving_only_whole_tables() {
    stopped_by("INT");
}

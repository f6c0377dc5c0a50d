//! The README's Rust snippets, run: each README line of a ```rust block must appear, in
//! order, in this file (except the `let addr = ...` line, which points the gRPC snippet
//! at the test server), and the functions below run them.

#[path = "support/tables.rs"]
mod support_tables;

use std::error::Error;
use std::sync::Arc;

#[rustfmt::skip] // as in the README
fn library_snippet() -> Result<(), Box<dyn Error>> {
    // README: begin
    use shatranj_tb::{Position, RuleSet};
    use shatranj_tb::probe::Tablebase;

    let tb = Tablebase::open("tables", RuleSet::default())?; // lists files; opens each on first use
    let pos = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1")?;
    let r = tb.probe(&pos)?;        // value, end, every move with its value, best first
    assert_eq!(r.dtm(), Some(39));
    let wdl = tb.wdl(&pos)?;        // WDL files only (and the smaller tables' for captures): for engines
    let line = tb.line(&pos)?;      // an optimal line to the end of the game
    let first = pos.play_uci(&line[0].uci)?.0;
    assert_eq!(pos.san(&first), "Kb4"); // short algebraic notation, as Fairy-Stockfish writes it
    // README: end
    assert_eq!(wdl, shatranj_tb::Wdl::Win);
    assert_eq!(line.len(), 39);
    Ok(())
}

#[rustfmt::skip] // as in the README
async fn grpc_snippet(url: String) -> Result<(), Box<dyn Error>> {
    // README: begin
    use shatranj_tb::service::pb::{tablebase_client::TablebaseClient, ProbeRequest};
    let addr = url;
    let mut tb = TablebaseClient::connect(addr).await?;
    let r = tb.probe(ProbeRequest { fen: "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1".into(), ..Default::default() }).await?;
    assert_eq!(r.into_inner().dtm, Some(39));
    // README: end
    Ok(())
}

/// The ```rust blocks of the README, line by line, trimmed.
fn readme_rust_lines() -> Vec<Vec<String>> {
    let readme = include_str!("../README.md");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in readme.lines() {
        match (&mut current, line.trim()) {
            (None, "```rust") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().expect("in a block")),
            (Some(block), l) if !l.is_empty() => block.push(l.to_string()),
            _ => {}
        }
    }
    blocks
}

#[test]
fn the_readme_snippets_are_the_ones_run_here() {
    let source = include_str!("readme.rs");
    let ours: Vec<Vec<String>> = source
        .split("// README: begin")
        .skip(1)
        .map(|part| {
            part.split("// README: end")
                .next()
                .expect("an end marker")
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .collect();
    let theirs = readme_rust_lines();
    assert_eq!(theirs.len(), 2, "two Rust snippets in the README");
    assert_eq!(
        ours.len() - 1,
        theirs.len(),
        "one marked copy each (and this test's own split string)"
    );
    for (readme, here) in theirs.iter().zip(&ours[..theirs.len()]) {
        let keep = |l: &&String| !l.starts_with("let addr");
        let readme: Vec<&String> = readme.iter().filter(keep).collect();
        let here: Vec<&String> = here.iter().filter(keep).collect();
        assert_eq!(
            readme, here,
            "the README snippet and the one run here differ"
        );
    }
}

#[test]
fn the_library_snippet_runs() {
    // The snippet opens "tables" in the working directory: a folder whose `tables`
    // is the generated 4-man set.
    let tables = support_tables::default_tables();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(tables, dir.path().join("tables")).unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    library_snippet().unwrap();
}

#[tokio::test]
async fn the_grpc_snippet_runs() {
    let tables = tokio::task::spawn_blocking(support_tables::default_tables)
        .await
        .unwrap();
    let tb = shatranj_tb::probe::Tablebase::open(tables, shatranj_tb::RuleSet::default()).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(shatranj_tb::service::serve(Arc::new(tb), listener, async {
        let _ = stopped.await;
    }));
    grpc_snippet(url).await.unwrap();
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

//! The HTTP JSON API and the page of `serve --http`, over a real socket on 127.0.0.1:0:
//! every route and every error status, the lichess conventions, health, and shutdown.
//!
//! Positions the rules decide need no tables (an empty directory); the others use the
//! shared generated 4-man set (`tests/support/tables.rs`).

#[path = "support/tables.rs"]
mod support_tables;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;
use shatranj_tb::http::serve_with_http;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::service::{Limits, ServeError};
use shatranj_tb::{Position, RuleSet, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Al-Suli's Diamond (ferz v ferz): White wins in 39 plies.
const AL_SULI: &str = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1";
/// K v K: both shahs bare, a draw by the rules.
const K_V_K: &str = "8/8/8/4k3/8/8/8/K7 w - - 0 1";
/// Black is bare and cannot take the rook: lost at once.
const BARE_BLACK_TO_MOVE: &str = "8/8/8/4k3/8/8/7R/K7 b - - 0 1";
/// White mates at once with Ra8# (KRvKR).
const MATE_IN_ONE: &str = "3k3r/8/3K4/8/8/8/8/R7 w - - 0 1";

struct Server {
    http: std::net::SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl Server {
    async fn get(&self, path: &str) -> Answer {
        request(self.http, "GET", path).await
    }

    async fn shutdown(mut self) -> Result<(), ServeError> {
        let _ = self.stop.take().map(|tx| tx.send(()));
        self.task.await.expect("server task panicked")
    }
}

/// Starts gRPC and HTTP on 127.0.0.1:0, the tables coming from `tables`.
async fn start_with<F>(tables: F) -> Server
where
    F: Future<Output = Result<Arc<Tablebase>, std::io::Error>> + Send + 'static,
{
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = http.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let limits = Limits {
        shutdown_grace: Duration::from_secs(5),
        ..Limits::default()
    };
    let task = tokio::spawn(async move {
        serve_with_http(&limits, tables, grpc, Some(http), async {
            let _ = stopped.await;
        })
        .await
    });
    Server {
        http: addr,
        stop: Some(stop),
        task,
    }
}

async fn start_on(dir: &Path) -> Server {
    let tables = Arc::new(Tablebase::open(dir, RuleSet::default()).unwrap());
    start_with(async move { Ok(tables) }).await
}

async fn default_tables() -> &'static Path {
    tokio::task::spawn_blocking(support_tables::default_tables)
        .await
        .unwrap()
}

/// An HTTP answer: status, headers (names in lower case) and body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Json {
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }

    /// The error message of a failed request, checking the error shape.
    fn error(&self, status: u16) -> String {
        assert_eq!(self.status, status, "{}", self.text());
        let j = self.json();
        assert_eq!(j["status"], status);
        j["error"].as_str().unwrap().to_string()
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
async fn request(addr: std::net::SocketAddr, method: &str, path: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
        .await
        .expect("an answer within 30 s")
        .unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..eol]).unwrap(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[eol + 2..eol + 2 + size]);
        raw = &raw[eol + 2 + size + 2..];
    }
}

fn query(fen: &str) -> String {
    fen.replace(' ', "_")
}

/// The lichess view of a value: category and signed DTM.
fn lichess(v: Value) -> (&'static str, Json) {
    match v {
        Value::Win(d) => ("win", Json::from(d)),
        Value::Loss(d) => ("loss", Json::from(-i64::from(d))),
        Value::Draw => ("draw", Json::Null),
    }
}

#[tokio::test]
async fn probe_answers_al_suli_in_the_lichess_shape() {
    let dir = default_tables().await;
    let server = start_on(dir).await;
    let a = server
        .get(&format!("/api/v1/probe?fen={}", query(AL_SULI)))
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.header("access-control-allow-origin"), Some("*"));
    let j = a.json();
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let pos = Position::from_fen(AL_SULI).unwrap();
    let dtz = tb.dtz(&pos).unwrap();
    assert_eq!(j["category"], "win");
    assert_eq!(j["dtm"], 39);
    assert!(dtz.signed() > 0 && dtz.signed() <= 39, "{dtz:?}");
    assert_eq!(j["dtz"], dtz.signed());
    assert_eq!(j["precise_dtz"], dtz.signed());
    for flag in [
        "checkmate",
        "stalemate",
        "variant_win",
        "variant_loss",
        "insufficient_material",
    ] {
        assert_eq!(j[flag], false, "{flag}");
    }
    assert_eq!(j["fen"], AL_SULI);
    assert_eq!(j["material"], "KQvKQ");
    assert_eq!(j["rules"], "bare-king=counter,stalemate=loss");
    assert_eq!(j["wdl"], "win");
    assert_eq!(j["end"], Json::Null);

    let best = &j["moves"][0];
    assert_eq!(best["uci"], "b3b4");
    assert_eq!(best["san"], "Kb4");
    assert_eq!(best["category"], "loss");
    assert_eq!(best["dtm"], -38);
    // the DTZ of the position after Kb4, for Black: a loss
    let after_best = pos.play_uci("b3b4").unwrap().1;
    assert_eq!(best["dtz"], tb.dtz(&after_best).unwrap().signed());
    assert!(best["dtz"].as_i64().unwrap() < 0, "{best}");
    assert_eq!(best["precise_dtz"], best["dtz"]);
    assert_eq!(best["zeroing"], false);
    assert_eq!(best["checkmate"], false);

    // Every move agrees with the library, seen from the side to move after the move; a
    // DTZ-optimal move leads to a position of DTZ one ply less (none here zeroes).
    let want = tb.probe(&pos).unwrap();
    let moves = j["moves"].as_array().unwrap();
    assert_eq!(moves.len(), want.moves.len());
    let mut optimal = 0;
    for (got, w) in moves.iter().zip(&want.moves) {
        assert_eq!(got["uci"], w.uci.as_str());
        let after = pos.play_uci(&w.uci).unwrap().1;
        let d = tb.dtz(&after).unwrap();
        assert_eq!(got["dtz"], d.signed(), "{got}");
        assert_eq!(got["zeroing"], w.zeroing, "{got}");
        assert_eq!(got["category"], d.category.as_str(), "{got}");
        if w.dtz == Some(dtz) && !w.zeroing {
            assert_eq!(d.signed(), -(dtz.signed() - 1), "{got}");
            optimal += 1;
        }
        let after = match w.value {
            Value::Win(d) => Value::Loss(d - 1),
            Value::Loss(d) => Value::Win(d - 1),
            Value::Draw => Value::Draw,
        };
        let (category, dtm) = lichess(after);
        assert_eq!(
            (got["category"].as_str().unwrap(), &got["dtm"]),
            (category, &dtm)
        );
    }
    assert!(optimal >= 1);

    // Spaces written as %20 or +, and underscores, are the same FEN.
    let spaced = server
        .get(&format!(
            "/api/v1/probe?fen={}",
            AL_SULI.replace(' ', "%20")
        ))
        .await
        .json();
    let plus = server
        .get(&format!("/api/v1/probe?fen={}", AL_SULI.replace(' ', "+")))
        .await
        .json();
    assert_eq!(spaced, j);
    assert_eq!(plus, j);
    // The same position with Black to move: Black loses... or not; the value is the
    // table's, signed for the side to move.
    let black = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 b - - 0 1").unwrap();
    let jb = server
        .get("/api/v1/probe?fen=8/8/8/3k4/8/1KQ5/8/q7_b_-_-_0_1")
        .await
        .json();
    let (category, dtm) = lichess(tb.probe(&black).unwrap().value);
    assert_eq!(
        (jb["category"].as_str().unwrap(), &jb["dtm"]),
        (category, &dtm)
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_mating_move_is_a_checkmate_and_a_loss_in_zero() {
    let server = start_on(default_tables().await).await;
    let j = server
        .get(&format!("/api/v1/probe?fen={}", query(MATE_IN_ONE)))
        .await
        .json();
    assert_eq!(
        (j["category"].as_str(), j["dtm"].as_i64()),
        (Some("win"), Some(1))
    );
    let best = &j["moves"][0];
    assert_eq!(best["uci"], "a1a8");
    assert_eq!(best["san"], "Ra8#");
    assert_eq!(best["checkmate"], true);
    assert_eq!(
        (best["category"].as_str(), best["dtm"].as_i64()),
        (Some("loss"), Some(0))
    );
    // The mated position itself.
    let mated = server
        .get("/api/v1/probe?fen=R2k3r/8/3K4/8/8/8/8/8_b_-_-_1_1")
        .await
        .json();
    assert_eq!(mated["checkmate"], true);
    assert_eq!(mated["end"], "checkmate");
    assert_eq!(
        (mated["category"].as_str(), mated["dtm"].as_i64()),
        (Some("loss"), Some(0))
    );
    assert_eq!(mated["moves"], Json::Array(vec![]));
    // A capture is zeroing, and a capture of the last piece bares the shah.
    let j = server
        .get("/api/v1/probe?fen=8/8/8/4k3/8/8/3r4/K2R4_w_-_-_0_1")
        .await
        .json();
    let take = j["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["uci"] == "d1d2")
        .unwrap();
    assert_eq!(take["san"], "Rxd2");
    assert_eq!(take["zeroing"], true);
    assert_eq!(take["variant_loss"], true);
    assert_eq!(
        (take["category"].as_str(), take["dtm"].as_i64()),
        (Some("loss"), Some(0))
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn positions_the_rules_decide_need_no_table() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_on(dir.path()).await;
    let draw = server
        .get(&format!("/api/v1/probe?fen={}", query(K_V_K)))
        .await
        .json();
    assert_eq!(draw["category"], "draw");
    assert_eq!(draw["dtm"], Json::Null);
    assert_eq!(
        (&draw["dtz"], &draw["precise_dtz"]),
        (&Json::from(0), &Json::from(0))
    );
    assert_eq!(draw["end"], "bare-king");
    assert_eq!(draw["material"], "KvK");
    assert_eq!(draw["variant_win"], false);
    assert_eq!(draw["variant_loss"], false);

    let lost = server
        .get(&format!("/api/v1/probe?fen={}", query(BARE_BLACK_TO_MOVE)))
        .await
        .json();
    assert_eq!(
        (lost["category"].as_str(), lost["dtm"].as_i64()),
        (Some("loss"), Some(0))
    );
    assert_eq!(lost["variant_loss"], true);
    assert_eq!(lost["variant_win"], false);
    assert_eq!(lost["wdl"], "loss");
    assert_eq!(lost["dtz"], 0);
    assert_eq!(lost["moves"], Json::Array(vec![]));

    let won = server
        .get("/api/v1/probe?fen=8/8/8/4k3/8/8/7R/K7_w_-_-_0_1")
        .await
        .json();
    assert_eq!(
        (won["category"].as_str(), won["dtm"].as_i64()),
        (Some("win"), Some(0))
    );
    assert_eq!(won["variant_win"], true);
    assert_eq!(won["dtz"], 0);
    // White to move with a bare Black: every move keeps Black bare, decided at once
    let bare = server
        .get("/api/v1/probe?fen=8/8/8/4k3/8/8/7R/K7_b_-_-_0_1")
        .await
        .json();
    assert_eq!(bare["dtz"], 0);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn tables_without_dtz_files_answer_dtz_null() {
    // the WDL and DTM files of KQvKQ only, as an older generator wrote them
    let dir = tempfile::tempdir().unwrap();
    let material: shatranj_tb::Material = "KQvKQ".parse().unwrap();
    let rules = RuleSet::default();
    let (wdl, dtm) = shatranj_tb::generate::files::paths(dir.path(), material, rules);
    let (wdl0, dtm0) = shatranj_tb::generate::files::paths(default_tables().await, material, rules);
    std::fs::copy(wdl0, &wdl).unwrap();
    std::fs::copy(dtm0, &dtm).unwrap();
    let server = start_on(dir.path()).await;
    for _ in 0..2 {
        // cold (blocking pool), then warm (from memory)
        let j = server
            .get(&format!("/api/v1/probe?fen={}", query(AL_SULI)))
            .await
            .json();
        assert_eq!(
            (&j["category"], &j["dtm"]),
            (&Json::from("win"), &Json::from(39))
        );
        assert_eq!((&j["dtz"], &j["precise_dtz"]), (&Json::Null, &Json::Null));
        let moves = j["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 9);
        assert!(moves.iter().all(|m| m["dtz"].is_null()), "{j}");
    }
    let line = server
        .get(&format!("/api/v1/line?fen={}", query(AL_SULI)))
        .await
        .json();
    assert_eq!(line["dtz"], Json::Null);
    assert!(line["mainline"][0]["dtz"].is_null(), "{line}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn warm_probes_carry_the_same_dtz_as_cold_ones() {
    let dir = default_tables().await;
    let server = start_on(dir).await;
    for fen in [AL_SULI, MATE_IN_ONE, "8/8/8/4k3/8/8/3r4/K2R4 w - - 0 1"] {
        let cold = server
            .get(&format!("/api/v1/probe?fen={}", query(fen)))
            .await
            .json();
        let warm = server
            .get(&format!("/api/v1/probe?fen={}", query(fen)))
            .await
            .json();
        assert_eq!(cold, warm, "{fen}");
        assert!(cold["dtz"].is_i64(), "{cold}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn errors_are_json_with_their_status() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_on(dir.path()).await;

    let msg = server.get("/api/v1/probe").await.error(400);
    assert!(msg.contains("missing parameter 'fen'"), "{msg}");
    let msg = server.get("/api/v1/probe?fen=").await.error(400);
    assert!(msg.contains("'fen'"), "{msg}");
    let msg = server.get("/api/v1/probe?fen=not_a_fen").await.error(400);
    assert!(
        msg.contains("not a fen"),
        "the message quotes the FEN: {msg}"
    );
    // Black's shah in check with White to move.
    let msg = server
        .get("/api/v1/probe?fen=8/8/8/4k3/8/8/4R3/K7_w_-_-_0_1")
        .await
        .error(400);
    assert!(msg.contains("8/8/8/4k3/8/8/4R3/K7"), "{msg}");
    let msg = server.get("/api/v1/probe?fen=%zz").await.error(400);
    assert!(msg.contains("percent-encoding"), "{msg}");
    let msg = server
        .get(&format!(
            "/api/v1/probe?fen={}&rules=stalemate=draw",
            query(K_V_K)
        ))
        .await
        .error(400);
    assert!(msg.contains("stalemate=draw"), "{msg}");
    let msg = server
        .get(&format!(
            "/api/v1/probe?fen={}&rules=nonsense",
            query(K_V_K)
        ))
        .await
        .error(400);
    assert!(msg.contains("nonsense"), "{msg}");
    // The matching rule set is accepted.
    let ok = server
        .get(&format!(
            "/api/v1/probe?fen={}&rules=bare-king%3Dcounter%2Cstalemate%3Dloss",
            query(K_V_K)
        ))
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text());

    // A missing table: 404 naming the command that makes it, for probe and line.
    for route in ["probe", "line"] {
        let msg = server
            .get(&format!("/api/v1/{route}?fen={}", query(AL_SULI)))
            .await
            .error(404);
        assert!(
            msg.contains("`shatranj-tb generate KQvKQ`"),
            "{route}: {msg}"
        );
    }
    // Six men are a table like any other (here missing); seven are too many.
    let six = "r6r/8/8/3k4/8/8/1K6/R6R w - - 0 1";
    let msg = server
        .get(&format!("/api/v1/probe?fen={}", query(six)))
        .await
        .error(404);
    assert!(msg.contains("`shatranj-tb generate KRRvKRR`"), "{msg}");
    let seven = "r6r/8/8/3k4/8/8/1K6/RR5R w - - 0 1";
    let msg = server
        .get(&format!("/api/v1/probe?fen={}", query(seven)))
        .await
        .error(400);
    assert!(msg.contains("7 men"), "{msg}");
    let msg = server.get("/api/v1/line").await.error(400);
    assert!(msg.contains("'fen'"), "{msg}");

    let msg = server.get("/api/v2/probe").await.error(404);
    assert!(msg.contains("/api/v2/probe"), "{msg}");
    let post = request(server.http, "POST", "/api/v1/probe?fen=x").await;
    assert_eq!(post.error(405), "only GET is served");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_damaged_table_is_500_without_the_servers_directories() {
    let dir = tempfile::tempdir().unwrap();
    let material: shatranj_tb::Material = "KQvKQ".parse().unwrap();
    let rules = RuleSet::default();
    let (wdl, dtm) = shatranj_tb::generate::files::paths(dir.path(), material, rules);
    let (wdl0, dtm0) = shatranj_tb::generate::files::paths(default_tables().await, material, rules);
    std::fs::copy(wdl0, &wdl).unwrap();
    let bytes = std::fs::read(dtm0).unwrap();
    std::fs::write(&dtm, &bytes[..bytes.len() / 2]).unwrap();

    let server = start_on(dir.path()).await;
    let msg = server
        .get(&format!("/api/v1/probe?fen={}", query(AL_SULI)))
        .await
        .error(500);
    assert!(
        msg.contains(dtm.file_name().unwrap().to_str().unwrap()),
        "{msg}"
    );
    assert!(!msg.contains(dir.path().to_str().unwrap()), "{msg}");
    let msg = server.get("/api/v1/tables").await.error(500);
    assert!(msg.contains("KQvKQ"), "{msg}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn line_plays_al_suli_to_the_end() {
    let dir = default_tables().await;
    let server = start_on(dir).await;
    let j = server
        .get(&format!("/api/v1/line?fen={}", query(AL_SULI)))
        .await
        .json();
    assert_eq!(j["category"], "win");
    assert_eq!(j["dtm"], 39);
    assert_eq!(j["winner"], "w");
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let start = Position::from_fen(AL_SULI).unwrap();
    assert_eq!(j["dtz"], tb.dtz(&start).unwrap().signed());
    assert_eq!(j["fen"], AL_SULI);
    let line = j["mainline"].as_array().unwrap();
    assert_eq!(line.len(), 39);
    assert_eq!(line[0]["uci"], "b3b4");
    assert_eq!(line[0]["san"], "Kb4");
    // The value falls by one a ply, its sign alternating with the side to move.
    for (k, step) in line.iter().enumerate() {
        let left = 38 - k as i64;
        let want = if k % 2 == 0 { -left } else { left };
        assert_eq!(step["dtm"].as_i64(), Some(want), "ply {}", k + 1);
        assert_eq!(step["category"], if k % 2 == 0 { "loss" } else { "win" });
    }
    let last = line.last().unwrap();
    assert!(last["end"].is_string(), "{last}");
    // Each step's FEN is the library's line, its DTZ that of the position after it.
    let want = tb.line(&start).unwrap();
    for (got, w) in line.iter().zip(&want) {
        let after = Position::from_fen(&w.fen).unwrap();
        assert_eq!(got["dtz"], tb.dtz(&after).unwrap().signed(), "{got}");
        assert_eq!(
            (got["uci"].as_str(), got["fen"].as_str()),
            (Some(w.uci.as_str()), Some(w.fen.as_str()))
        );
    }
    // A draw has no line and no winner.
    let draw = server
        .get(&format!("/api/v1/line?fen={}", query(K_V_K)))
        .await
        .json();
    assert_eq!(draw["mainline"], Json::Array(vec![]));
    assert_eq!(draw["winner"], Json::Null);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn tables_lists_the_info_figures() {
    let dir = default_tables().await;
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let want = tb.tables().unwrap();
    let server = start_on(dir).await;
    let j = server.get("/api/v1/tables").await.json();
    let got = j["tables"].as_array().unwrap();
    assert_eq!(got.len(), want.len());
    assert!(got.len() >= 15);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g["material"], w.material.to_string());
        assert_eq!(g["rules"], w.rules.to_string());
        assert_eq!(
            (g["wdl_bytes"].as_u64(), g["dtm_bytes"].as_u64()),
            (Some(w.wdl_bytes), Some(w.dtm_bytes))
        );
        for (side, s) in [("white", &w.white), ("black", &w.black)] {
            assert_eq!(g[side]["legal"].as_u64(), Some(s.legal));
            assert_eq!(g[side]["win"].as_u64(), Some(s.win));
            assert_eq!(g[side]["draw"].as_u64(), Some(s.draw));
            assert_eq!(g[side]["loss"].as_u64(), Some(s.loss));
            assert_eq!(
                g[side]["longest_win"]["plies"].as_u64(),
                s.longest_win.as_ref().map(|l| u64::from(l.plies))
            );
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn health_is_503_until_the_tables_open() {
    let dir = tempfile::tempdir().unwrap();
    let tables = Arc::new(Tablebase::open(dir.path(), RuleSet::default()).unwrap());
    let (open, opened) = oneshot::channel::<()>();
    let server = start_with(async move {
        let _ = opened.await;
        Ok(tables)
    })
    .await;
    let before = server.get("/healthz").await;
    assert_eq!(before.status, 503);
    assert_eq!(before.json()["status"], "NOT_SERVING");
    let msg = server
        .get(&format!("/api/v1/probe?fen={}", query(K_V_K)))
        .await
        .error(503);
    assert!(msg.contains("not open yet"), "{msg}");
    // The page is there already.
    assert_eq!(server.get("/").await.status, 200);

    open.send(()).unwrap();
    let mut serving = None;
    for _ in 0..100 {
        let a = server.get("/healthz").await;
        if a.status == 200 {
            serving = Some(a.json());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(serving.expect("serving within 2 s")["status"], "SERVING");
    let addr = server.http;
    server.shutdown().await.unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the HTTP listener is closed after shutdown"
    );
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_from_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_on(dir.path()).await;
    let page = server.get("/?fen=8/8/8/3k4/8/1KQ5/8/q7_w_-_-_0_1").await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(page.text().contains("<title>shatranj-tb explorer</title>"));
    // Every piece is drawn by the page itself.
    for piece in ["k", "q", "b", "n", "r", "p"] {
        assert!(
            page.text().contains(&format!("<symbol id=\"p-{piece}\"")),
            "{piece}"
        );
    }
    // The script and style sheet are inlined: one request before the first paint.
    assert!(
        page.text().contains("/api/v1/probe?fen="),
        "the script is in the page"
    );
    assert!(
        page.text().contains("#board {"),
        "the style sheet is in the page"
    );
    assert!(
        !page.text().contains("/*EXPLORER_"),
        "every placeholder is filled"
    );
    let icon = server.get("/favicon.svg").await;
    assert_eq!(icon.status, 200);
    assert_eq!(icon.header("content-type"), Some("image/svg+xml"));
    // Works offline: nothing is fetched from another host.
    for a in [&page, &icon] {
        let text = a.text().replace("http://www.w3.org/2000/svg", "");
        for needle in ["http://", "https://", "//cdn", "@import"] {
            assert!(!text.contains(needle), "an asset refers to {needle}");
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn solve_proves_dilaram_and_refuses_bad_bounds() {
    let server = start_on(default_tables().await).await;
    let dilaram = format!("fen={}", query("1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1"));
    let a = server
        .get(&format!("/api/v1/solve?{dilaram}&plies=11&tree_depth=1"))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let j = a.json();
    assert_eq!(j["result"], "win");
    assert_eq!(j["plies"], 11);
    assert_eq!(j["end"], "checkmate");
    assert_eq!(
        j["keys"],
        serde_json::json!([{"uci": "h4h8", "san": "Rh8+", "plies": 11}])
    );
    assert_eq!(j["line"].as_array().unwrap().len(), 11);
    assert_eq!(j["tree"]["moves"][0]["uci"], "h4h8");
    let a = server
        .get(&format!("/api/v1/solve?{dilaram}&plies=9"))
        .await;
    let j = a.json();
    assert_eq!(
        (j["result"].as_str(), j["no_win_within"].as_u64()),
        (Some("unknown"), Some(9))
    );
    for bad in ["plies=0", "plies=1000", "plies=x", "time=-2"] {
        let a = server.get(&format!("/api/v1/solve?{dilaram}&{bad}")).await;
        assert_eq!(a.status, 400, "{bad}: {a:?}");
        assert!(a.json()["error"].is_string());
    }
    let a = server.get("/api/v1/solve?fen=8/8/8/8/8/8/8/8_w").await;
    assert_eq!(a.status, 400);
    server.shutdown().await.unwrap();
}

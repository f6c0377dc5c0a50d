//! The gRPC service over a real socket on 127.0.0.1:0: every method, every error code,
//! health, reflection, limits and graceful shutdown.
//!
//! Most checks use positions the rules decide (no table files needed, an empty tables
//! directory). Checks that need tables use the shared generated 4-man set
//! (`tests/support/tables.rs`) through [`start_on_tables`], which takes any directory.

#[path = "support/tables.rs"]
mod support_tables;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use shatranj_tb::RuleSet;
use shatranj_tb::probe::Tablebase;
use shatranj_tb::service::pb::tablebase_client::TablebaseClient;
use shatranj_tb::service::pb::{self, probe_many_response::Outcome};
use shatranj_tb::service::{Limits, SERVICE_NAME, ServeError, serve_with};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

/// K v K: both shahs bare, a draw by the rules.
const K_V_K: &str = "8/8/8/4k3/8/8/8/K7 w - - 0 1";
/// Black is bare and cannot take the rook: lost at once, DTM 0.
const BARE_BLACK_TO_MOVE: &str = "8/8/8/4k3/8/8/7R/K7 b - - 0 1";
/// The same with White to move: won, DTM 0.
const BARE_BLACK_WHITE_TO_MOVE: &str = "8/8/8/4k3/8/8/7R/K7 w - - 0 1";
/// Al-Suli's Diamond (ferz v ferz): a win in 39 plies, needs table KQvKQ.
const AL_SULI: &str = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1";
/// Black's shah in check with White to move: illegal.
const ILLEGAL: &str = "8/8/8/4k3/8/8/4R3/K7 w - - 0 1";

struct TestServer {
    channel: Channel,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), ServeError>>,
}

impl TestServer {
    fn client(&self) -> TablebaseClient<Channel> {
        TablebaseClient::new(self.channel.clone())
    }

    fn health(&self) -> HealthClient<Channel> {
        HealthClient::new(self.channel.clone())
    }

    /// Signals shutdown and waits for the server to return.
    async fn shutdown(mut self) -> Result<(), ServeError> {
        let _ = self.stop.take().map(|tx| tx.send(()));
        self.task.await.expect("server task panicked")
    }
}

fn test_limits() -> Limits {
    Limits {
        shutdown_grace: Duration::from_secs(5),
        ..Limits::default()
    }
}

/// Starts a server whose tables come from `tables` (maybe later), on 127.0.0.1:0.
async fn start_with<F>(limits: Limits, tables: F) -> TestServer
where
    F: Future<Output = Result<Arc<Tablebase>, std::io::Error>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        serve_with(&limits, tables, listener, async {
            let _ = stopped.await;
        })
        .await
    });
    // The listener is bound before the spawn: connecting at once works.
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    TestServer {
        channel,
        stop: Some(stop),
        task,
    }
}

/// Starts a server on the tables of `dir` (the default rule set). The helper for checks
/// against generated tables.
async fn start_on_tables(dir: &Path) -> TestServer {
    let tables = Arc::new(Tablebase::open(dir, RuleSet::default()).expect("open tables"));
    start_with(test_limits(), async move { Ok(tables) }).await
}

/// A server over an empty tables directory (kept alive by the returned guard).
async fn start_empty() -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (start_on_tables(dir.path()).await, dir)
}

fn req(fen: &str) -> pb::ProbeRequest {
    pb::ProbeRequest {
        fen: fen.to_string(),
        ..Default::default()
    }
}

async fn check(health: &mut HealthClient<Channel>, service: &str) -> ServingStatus {
    let answer: HealthCheckResponse = health
        .check(HealthCheckRequest {
            service: service.to_string(),
        })
        .await
        .unwrap()
        .into_inner();
    answer.status()
}

#[tokio::test]
async fn probe_answers_positions_the_rules_decide() {
    let (server, _dir) = start_empty().await;
    let mut client = server.client();

    let draw = client.probe(req(K_V_K)).await.unwrap().into_inner();
    assert_eq!(draw.wdl(), pb::Wdl::Draw);
    assert_eq!(draw.dtm, None);
    assert_eq!(draw.end(), pb::EndReason::BareKing);
    assert_eq!(draw.material, "KvK");
    assert_eq!(draw.rules, "bare-king=counter,stalemate=loss");
    assert_eq!(draw.fen, K_V_K);

    let loss = client
        .probe(req(BARE_BLACK_TO_MOVE))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((loss.wdl(), loss.dtm), (pb::Wdl::Loss, Some(0)));
    assert_eq!(loss.end(), pb::EndReason::BareKing);
    assert_eq!(loss.material, "KRvK");
    assert!(loss.moves.is_empty() && loss.best_move.is_empty());

    let win = client
        .probe(req(BARE_BLACK_WHITE_TO_MOVE))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((win.wdl(), win.dtm), (pb::Wdl::Win, Some(0)));
    assert_eq!(win.end(), pb::EndReason::BareKing);

    // DTZ needs no file either: 0 plies, the category says who has won
    assert_eq!((draw.dtz, draw.category()), (Some(0), pb::Category::Draw));
    assert_eq!((loss.dtz, loss.category()), (Some(0), pb::Category::Loss));
    assert_eq!((win.dtz, win.category()), (Some(0), pb::Category::Win));

    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn probe_agrees_with_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let tb = Tablebase::open(dir.path(), RuleSet::default()).unwrap();
    let server = start_on_tables(dir.path()).await;
    let mut client = server.client();
    for fen in [K_V_K, BARE_BLACK_TO_MOVE, BARE_BLACK_WHITE_TO_MOVE] {
        let pos = shatranj_tb::Position::from_fen(fen).unwrap();
        let want = tb.probe(&pos).unwrap();
        let got = client.probe(req(fen)).await.unwrap().into_inner();
        assert_eq!(
            shatranj_tb::service::value_from_wire(got.wdl, got.dtm),
            Some(want.value),
            "{fen}"
        );
        assert_eq!(got.fen, want.fen);
        assert_eq!(got.moves.len(), want.moves.len());
        for (g, w) in got.moves.iter().zip(&want.moves) {
            assert_eq!(g.uci, w.uci);
            assert_eq!(
                shatranj_tb::service::value_from_wire(g.wdl, g.dtm),
                Some(w.value)
            );
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_fen_and_illegal_position_are_invalid_argument() {
    let (server, _dir) = start_empty().await;
    let mut client = server.client();

    let status = client.probe(req("not a fen")).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("not a fen"), "{status:?}");

    let status = client.probe(req(ILLEGAL)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains(ILLEGAL), "{status:?}");

    let status = client
        .line(pb::LineRequest {
            fen: ILLEGAL.into(),
            rules: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn missing_table_is_not_found_and_says_how_to_generate_it() {
    let (server, _dir) = start_empty().await;
    let status = server.client().probe(req(AL_SULI)).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(
        status.message().contains("shatranj-tb generate KQvKQ"),
        "{status:?}"
    );
    // a 6-man position: its table is missing like any other; a 7-man one has too many men
    let six = server
        .client()
        .probe(req("r6r/8/8/3k4/8/8/1K6/R6R w - - 0 1"))
        .await
        .unwrap_err();
    assert_eq!(six.code(), Code::NotFound, "{six:?}");
    assert!(
        six.message().contains("shatranj-tb generate KRRvKRR"),
        "{six:?}"
    );
    let seven = server
        .client()
        .probe(req("r6r/8/8/3k4/8/8/1K6/RR5R w - - 0 1"))
        .await
        .unwrap_err();
    assert_eq!(seven.code(), Code::InvalidArgument, "{seven:?}");
    assert!(seven.message().contains("7 men"), "{seven:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn requested_rules_are_checked() {
    let (server, _dir) = start_empty().await;
    let mut client = server.client();
    let with_rules = |rules: &str| pb::ProbeRequest {
        fen: K_V_K.into(),
        rules: rules.into(),
        ..Default::default()
    };
    client
        .probe(with_rules("bare-king=counter,stalemate=loss"))
        .await
        .unwrap();
    let status = client
        .probe(with_rules("stalemate=draw"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    let status = client
        .probe(with_rules("bare-king=maybe"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn probe_many_answers_every_item_in_order_and_survives_bad_ones() {
    let (server, _dir) = start_empty().await;
    let fens = [
        K_V_K,
        "not a fen",
        BARE_BLACK_TO_MOVE,
        ILLEGAL,
        AL_SULI,
        BARE_BLACK_WHITE_TO_MOVE,
    ];
    // Many rounds, so that the pipeline has several items under way at once.
    let requests: Vec<_> = (0..50).flat_map(|_| fens.map(req)).collect();
    let n = requests.len();
    let answers: Vec<_> = server
        .client()
        .probe_many(tokio_stream::iter(requests))
        .await
        .unwrap()
        .into_inner()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(answers.len(), n);
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a.index, i as u64);
        let fen = fens[i % fens.len()];
        assert_eq!(a.request_fen, fen);
        match (fen, a.outcome.as_ref().unwrap()) {
            (K_V_K, Outcome::Result(r)) => assert_eq!(r.wdl(), pb::Wdl::Draw),
            (BARE_BLACK_TO_MOVE, Outcome::Result(r)) => assert_eq!(r.wdl(), pb::Wdl::Loss),
            (BARE_BLACK_WHITE_TO_MOVE, Outcome::Result(r)) => assert_eq!(r.wdl(), pb::Wdl::Win),
            ("not a fen" | ILLEGAL, Outcome::Error(e)) => {
                assert_eq!(e.code, Code::InvalidArgument as i32, "{e:?}");
            }
            (AL_SULI, Outcome::Error(e)) => assert_eq!(e.code, Code::NotFound as i32, "{e:?}"),
            (fen, outcome) => panic!("unexpected answer for {fen}: {outcome:?}"),
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn line_and_list_tables_answer() {
    let (server, _dir) = start_empty().await;
    let mut client = server.client();
    let line = client
        .line(pb::LineRequest {
            fen: BARE_BLACK_TO_MOVE.into(),
            rules: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((line.wdl(), line.dtm), (pb::Wdl::Loss, Some(0)));
    assert_eq!(line.end(), pb::EndReason::BareKing);
    assert!(line.steps.is_empty(), "the game is over: {line:?}");

    let tables = client
        .list_tables(pb::ListTablesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(tables.tables.is_empty(), "{tables:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn health_is_not_serving_until_the_tables_are_open() {
    let dir = tempfile::tempdir().unwrap();
    let (open_tx, open_rx) = oneshot::channel::<()>();
    let path = dir.path().to_path_buf();
    let server = start_with(test_limits(), async move {
        let _ = open_rx.await;
        Tablebase::open(&path, RuleSet::default())
            .map(Arc::new)
            .map_err(std::io::Error::other)
    })
    .await;
    let mut health = server.health();
    assert_eq!(check(&mut health, "").await, ServingStatus::NotServing);
    assert_eq!(
        check(&mut health, SERVICE_NAME).await,
        ServingStatus::NotServing
    );
    let status = server.client().probe(req(K_V_K)).await.unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");

    let mut watch = health
        .watch(HealthCheckRequest {
            service: SERVICE_NAME.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        watch.next().await.unwrap().unwrap().status(),
        ServingStatus::NotServing
    );
    open_tx.send(()).unwrap();
    assert_eq!(
        watch.next().await.unwrap().unwrap().status(),
        ServingStatus::Serving
    );
    assert_eq!(check(&mut health, "").await, ServingStatus::Serving);
    server.client().probe(req(K_V_K)).await.unwrap();
    drop(watch);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn failing_to_open_the_tables_stops_the_server() {
    let (fail, failed) = oneshot::channel::<()>();
    let server = start_with(test_limits(), async {
        let _ = failed.await;
        Err(std::io::Error::other("no such tables"))
    })
    .await;
    fail.send(()).unwrap();
    let err = server.task.await.unwrap().unwrap_err();
    assert!(matches!(err, ServeError::Tables(_)), "{err:?}");
}

#[tokio::test]
async fn reflection_lists_the_service() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::{ServerReflectionRequest, ServerReflectionResponse};

    let (server, _dir) = start_empty().await;
    let mut reflection = ServerReflectionClient::new(server.channel.clone());
    let ask = |m: MessageRequest| ServerReflectionRequest {
        host: String::new(),
        message_request: Some(m),
    };
    let answers: Vec<ServerReflectionResponse> = reflection
        .server_reflection_info(tokio_stream::iter([
            ask(MessageRequest::ListServices(String::new())),
            ask(MessageRequest::FileContainingSymbol(SERVICE_NAME.into())),
        ]))
        .await
        .unwrap()
        .into_inner()
        .collect::<Result<_, _>>()
        .await
        .unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = &answers[0].message_response else {
        panic!("{:?}", answers[0]);
    };
    let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&SERVICE_NAME), "{names:?}");
    assert!(names.contains(&"grpc.health.v1.Health"), "{names:?}");
    let Some(MessageResponse::FileDescriptorResponse(files)) = &answers[1].message_response else {
        panic!("{:?}", answers[1]);
    };
    assert!(!files.file_descriptor_proto.is_empty());
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn oversized_request_is_refused() {
    let (server, _dir) = start_empty().await;
    let status = server
        .client()
        .probe(req(&"8".repeat(200_000)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::OutOfRange, "{status:?}");
    server.shutdown().await.unwrap();
}

/// A unary `Probe` whose request message is held back until `gate` opens: the call is
/// open on the server (headers received) but not yet answered.
fn held_probe(
    channel: Channel,
    fen: &str,
    gate: oneshot::Receiver<()>,
) -> JoinHandle<Result<pb::ProbeResponse, tonic::Status>> {
    let request = req(fen);
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(async move {
        if gate.await.is_ok() {
            let _ = tx.send(request).await;
        }
    });
    tokio::spawn(async move {
        let body = ReceiverStream::new(rx);
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unknown(e.to_string()))?;
        let path = format!("/{SERVICE_NAME}/Probe").parse().unwrap();
        let codec = tonic_prost::ProstCodec::<pb::ProbeRequest, pb::ProbeResponse>::default();
        grpc.client_streaming(tonic::Request::new(body), path, codec)
            .await
            .map(tonic::Response::into_inner)
    })
}

#[tokio::test]
async fn slow_call_gets_deadline_exceeded() {
    let dir = tempfile::tempdir().unwrap();
    let tables = Arc::new(Tablebase::open(dir.path(), RuleSet::default()).unwrap());
    let limits = Limits {
        request_timeout: Duration::from_millis(200),
        ..test_limits()
    };
    let server = start_with(limits, async move { Ok(tables) }).await;
    let (_gate, held) = oneshot::channel();
    let status = held_probe(server.channel.clone(), K_V_K, held)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(status.code(), Code::Cancelled, "{status:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn shutdown_lets_the_call_in_flight_finish() {
    let (server, _dir) = start_empty().await;
    let mut health = server.health();
    let mut watch = health
        .watch(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        watch.next().await.unwrap().unwrap().status(),
        ServingStatus::Serving
    );

    let (open, gate) = oneshot::channel();
    let in_flight = held_probe(server.channel.clone(), BARE_BLACK_TO_MOVE, gate);
    // A later call on the same connection is answered only after the server has read the
    // held call's headers (HTTP/2 frames arrive in order): the held call is now open.
    server.client().probe(req(K_V_K)).await.unwrap();

    let started = Instant::now();
    let TestServer {
        channel,
        stop,
        mut task,
    } = server;
    stop.unwrap().send(()).unwrap();
    assert_eq!(
        watch.next().await.unwrap().unwrap().status(),
        ServingStatus::NotServing
    );
    drop(watch);
    // The server waits for the call in flight rather than returning.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), &mut task)
            .await
            .is_err(),
        "the server returned with a call in flight"
    );

    open.send(()).unwrap();
    let answer = in_flight
        .await
        .unwrap()
        .expect("the call in flight finishes");
    assert_eq!((answer.wdl(), answer.dtm), (pb::Wdl::Loss, Some(0)));

    drop((channel, health));
    task.await.unwrap().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "shutdown waited for the grace period: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn shutdown_ends_open_probe_many_streams() {
    let (server, _dir) = start_empty().await;
    let (tx, rx) = mpsc::channel(4);
    let mut answers = server
        .client()
        .probe_many(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    tx.send(req(K_V_K)).await.unwrap();
    let first = answers.next().await.unwrap().unwrap();
    assert_eq!(first.index, 0);

    let TestServer {
        channel,
        stop,
        task,
    } = server;
    stop.unwrap().send(()).unwrap();
    let end = answers.next().await.unwrap().unwrap_err();
    assert_eq!(end.code(), Code::Unavailable, "{end:?}");
    assert!(end.message().contains("shutting down"), "{end:?}");
    drop((answers, tx, channel));
    task.await.unwrap().unwrap();
}

// ---- checks on generated tables ------------------------------------------------------

/// The shared 4-man tables (generated on first use, off the async runtime).
async fn default_tables() -> &'static Path {
    tokio::task::spawn_blocking(support_tables::default_tables)
        .await
        .unwrap()
}

#[tokio::test]
async fn al_suli_diamond_is_a_win_in_39() {
    let server = start_on_tables(default_tables().await).await;
    let mut client = server.client();
    let answer = client.probe(req(AL_SULI)).await.unwrap().into_inner();
    assert_eq!((answer.wdl(), answer.dtm), (pb::Wdl::Win, Some(39)));
    assert_eq!(answer.material, "KQvKQ");
    assert_eq!(answer.end(), pb::EndReason::Unspecified);
    assert_eq!(answer.best_move, answer.moves[0].uci);
    assert_eq!(
        (answer.moves[0].wdl(), answer.moves[0].dtm),
        (pb::Wdl::Win, Some(39))
    );
    assert_eq!(answer.moves.len(), 9);

    let line = client
        .line(pb::LineRequest {
            fen: AL_SULI.into(),
            rules: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((line.wdl(), line.dtm), (pb::Wdl::Win, Some(39)));
    assert_eq!(line.steps.len(), 39);
    assert_eq!(line.steps[0].uci, answer.best_move);
    // DTZ along the line: the start's as the probe's, each step's the library's
    assert_eq!((line.dtz, line.category()), (answer.dtz, pb::Category::Win));
    let tb = Tablebase::open(default_tables().await, RuleSet::default()).unwrap();
    for step in &line.steps {
        let after = shatranj_tb::Position::from_fen(&step.fen).unwrap();
        let want = tb.dtz(&after).unwrap();
        assert_eq!(step.dtz, Some(want.signed() as i32), "{step:?}");
        assert_ne!(step.category(), pb::Category::Unspecified, "{step:?}");
    }
    let last = line.steps.last().unwrap();
    assert_ne!(last.end(), pb::EndReason::Unspecified, "{last:?}");
    assert_eq!((last.wdl(), last.dtm), (pb::Wdl::Loss, Some(0)));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn probe_carries_the_dtz_of_the_library() {
    let dir = default_tables().await;
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let server = start_on_tables(dir).await;
    let mut client = server.client();
    let mut fens = table_positions(dir, 3);
    fens.extend([AL_SULI.to_string(), BARE_BLACK_TO_MOVE.to_string()]);
    let mut categories = std::collections::BTreeSet::new();
    for fen in &fens {
        let pos = shatranj_tb::Position::from_fen(fen).unwrap();
        let want = tb.probe_dtz(&pos).unwrap();
        // cold (files opened on the blocking pool), then warm: the same answer
        let got = client.probe(req(fen)).await.unwrap().into_inner();
        let again = client.probe(req(fen)).await.unwrap().into_inner();
        assert_eq!(got, again, "{fen}");
        assert_eq!(got.dtz, Some(want.dtz.signed() as i32), "{fen}");
        assert_eq!(
            got.category().as_str_name(),
            format!(
                "CATEGORY_{}",
                want.dtz.category.as_str().replace('-', "_").to_uppercase()
            ),
            "{fen}"
        );
        categories.insert(got.category);
        assert_eq!(got.moves.len(), want.moves.len(), "{fen}");
        for g in &got.moves {
            let (m, d, zeroing) = want
                .moves
                .iter()
                .find(|(m, _, _)| m.to_uci() == g.uci)
                .unwrap_or_else(|| panic!("{fen}: {} not a legal move", g.uci));
            assert_eq!(g.dtz, Some(d.signed() as i32), "{fen} {m:?}");
            assert_eq!(g.zeroing, *zeroing, "{fen} {m:?}");
        }
        if !got.moves.is_empty() {
            assert!(
                got.moves.iter().any(|m| m.dtz == got.dtz),
                "{fen}: no move keeps the DTZ"
            );
        }
    }
    assert_eq!(categories.len(), 3, "{categories:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn probe_without_dtz_files_has_no_dtz() {
    // the WDL and DTM files of KQvKQ only, as an older generator wrote them
    let dir = tempfile::tempdir().unwrap();
    let material: shatranj_tb::Material = "KQvKQ".parse().unwrap();
    let (wdl, dtm) = shatranj_tb::generate::files::paths(dir.path(), material, RuleSet::default());
    let (wdl0, dtm0) =
        shatranj_tb::generate::files::paths(default_tables().await, material, RuleSet::default());
    std::fs::copy(wdl0, &wdl).unwrap();
    std::fs::copy(dtm0, &dtm).unwrap();
    let server = start_on_tables(dir.path()).await;
    let mut client = server.client();
    for _ in 0..2 {
        // cold, then warm (from memory)
        let answer = client.probe(req(AL_SULI)).await.unwrap().into_inner();
        assert_eq!((answer.wdl(), answer.dtm), (pb::Wdl::Win, Some(39)));
        assert_eq!(
            (answer.dtz, answer.category()),
            (None, pb::Category::Unspecified)
        );
        assert_eq!(answer.moves.len(), 9);
        assert!(answer.moves.iter().all(|m| m.dtz.is_none()), "{answer:?}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn list_tables_gives_the_info_figures() {
    let dir = default_tables().await;
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let want = tb.tables().unwrap();
    let server = start_on_tables(dir).await;
    let got = server
        .client()
        .list_tables(pb::ListTablesRequest {})
        .await
        .unwrap()
        .into_inner()
        .tables;
    assert_eq!(got.len(), want.len());
    assert!(got.len() >= 15, "{} tables", got.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.material, w.material.to_string());
        assert_eq!((g.wdl_bytes, g.dtm_bytes), (w.wdl_bytes, w.dtm_bytes));
        for (gs, ws) in [(&g.white, &w.white), (&g.black, &w.black)] {
            let gs = gs.as_ref().unwrap();
            assert_eq!(
                (gs.legal, gs.win, gs.draw, gs.loss),
                (ws.legal, ws.win, ws.draw, ws.loss)
            );
            assert_eq!(
                gs.longest_win.as_ref().map(|l| (l.plies, l.fen.clone())),
                ws.longest_win.as_ref().map(|l| (l.plies, l.fen.clone()))
            );
        }
    }
    let kqvkq = got.iter().find(|t| t.material == "KQvKQ").unwrap();
    assert!(kqvkq.white.as_ref().unwrap().longest_win.is_some());
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn probe_many_on_tables_agrees_with_unary_probe() {
    let server = start_on_tables(default_tables().await).await;
    let mut client = server.client();
    let fens = [
        AL_SULI,
        "8/8/8/8/8/8/5k2/KR6 w - - 0 1",
        "garbage",
        "8/8/8/3k4/8/1KQ5/8/q7 b - - 0 1",
        "8/8/2k5/8/8/8/8/KN6 b - - 0 1",
    ];
    let answers: Vec<_> = client
        .probe_many(tokio_stream::iter(fens.map(req)))
        .await
        .unwrap()
        .into_inner()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(answers.len(), fens.len());
    for (fen, a) in fens.iter().zip(&answers) {
        match (client.probe(req(fen)).await, a.outcome.as_ref().unwrap()) {
            (Ok(unary), Outcome::Result(streamed)) => assert_eq!(&unary.into_inner(), streamed),
            (Err(status), Outcome::Error(e)) => {
                assert_eq!(status.code() as i32, e.code);
                assert_eq!(status.message(), e.message);
            }
            (unary, streamed) => panic!("{fen}: {unary:?} vs {streamed:?}"),
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn damaged_table_is_data_loss() {
    let dir = tempfile::tempdir().unwrap();
    let material: shatranj_tb::Material = "KQvKQ".parse().unwrap();
    let (wdl, dtm) = shatranj_tb::generate::files::paths(dir.path(), material, RuleSet::default());
    let (wdl0, dtm0) =
        shatranj_tb::generate::files::paths(default_tables().await, material, RuleSet::default());
    std::fs::copy(wdl0, &wdl).unwrap();
    let bytes = std::fs::read(dtm0).unwrap();
    std::fs::write(&dtm, &bytes[..bytes.len() / 2]).unwrap();

    let server = start_on_tables(dir.path()).await;
    let status = server.client().probe(req(AL_SULI)).await.unwrap_err();
    assert_eq!(status.code(), Code::DataLoss, "{status:?}");
    let name = dtm.file_name().unwrap().to_str().unwrap();
    assert!(status.message().contains(name), "{status:?}");
    assert!(
        !status.message().contains(dir.path().to_str().unwrap()),
        "the server's directories stay private: {status:?}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn value_only_answers_the_value_without_the_moves() {
    let server = start_on_tables(default_tables().await).await;
    let mut client = server.client();
    for fen in [
        AL_SULI,
        BARE_BLACK_TO_MOVE,
        K_V_K,
        "8/8/2k5/8/8/8/8/KN6 b - - 0 1",
    ] {
        let full = client.probe(req(fen)).await.unwrap().into_inner();
        let value_only = pb::ProbeRequest {
            value_only: true,
            ..req(fen)
        };
        let short = client.probe(value_only.clone()).await.unwrap().into_inner();
        // the moves and the DTZ (read from the DTZ files, never from memory) are left out
        assert!(full.dtz.is_some(), "{fen}: {full:?}");
        let expected = pb::ProbeResponse {
            best_move: String::new(),
            moves: Vec::new(),
            dtz: None,
            category: pb::Category::Unspecified as i32,
            ..full
        };
        assert_eq!(short, expected, "{fen}");
        let streamed = client
            .probe_many(tokio_stream::iter([value_only]))
            .await
            .unwrap()
            .into_inner()
            .next()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(streamed.outcome, Some(Outcome::Result(expected)), "{fen}");
    }
    let status = client
        .probe(pb::ProbeRequest {
            value_only: true,
            ..req(ILLEGAL)
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    server.shutdown().await.unwrap();
}

/// Random legal positions of the tables in `dir` (seeded), a few of each material.
fn table_positions(dir: &Path, per_material: usize) -> Vec<String> {
    use rand::{Rng as _, SeedableRng as _};
    use shatranj_tb::index::TableIndex;
    let tb = Tablebase::open(dir, RuleSet::default()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let mut fens = Vec::new();
    for material in tb.materials() {
        let index = TableIndex::new(material);
        let mut found = 0;
        while found < per_material {
            let turn = if rng.r#gen::<bool>() {
                shatranj_tb::Color::White
            } else {
                shatranj_tb::Color::Black
            };
            let board = index.decode(rng.gen_range(0..index.size()));
            if let Some(pos) = board.and_then(|b| shatranj_tb::Position::from_board(b, turn).ok()) {
                fens.push(pos.fen());
                found += 1;
            }
        }
    }
    fens
}

#[tokio::test]
async fn probe_many_keeps_request_order_across_cold_and_warm_batches() {
    let dir = default_tables().await;
    // A fresh server: every table file is still closed, so the first probes of each table
    // go to the blocking pool while the positions the rules decide and the bad requests
    // are answered at once; a small window makes many batches.
    let limits = Limits {
        stream_window: 5,
        ..test_limits()
    };
    let tables = Arc::new(Tablebase::open(dir, RuleSet::default()).unwrap());
    let server = start_with(limits, async move { Ok(tables) }).await;
    let mut client = server.client();

    let others = [
        K_V_K,
        "not a fen",
        BARE_BLACK_TO_MOVE,
        ILLEGAL,
        "8/8/8/3k4/8/1KQ5/8/qr6 w - - 0 1", // 5 men: no table here
    ];
    let mut requests = Vec::new();
    for (i, fen) in table_positions(dir, 6).into_iter().enumerate() {
        requests.push(pb::ProbeRequest {
            fen,
            value_only: i % 3 == 2,
            ..Default::default()
        });
        requests.push(req(others[i % others.len()]));
    }
    let answers: Vec<_> = client
        .probe_many(tokio_stream::iter(requests.clone()))
        .await
        .unwrap()
        .into_inner()
        .collect::<Result<Vec<_>, _>>()
        .await
        .unwrap();
    assert_eq!(answers.len(), requests.len());
    let mut codes = std::collections::BTreeSet::new();
    for (i, (request, a)) in requests.iter().zip(&answers).enumerate() {
        assert_eq!(a.index, i as u64);
        assert_eq!(a.request_fen, request.fen);
        match (
            client.probe(request.clone()).await,
            a.outcome.as_ref().unwrap(),
        ) {
            (Ok(unary), Outcome::Result(streamed)) => {
                assert_eq!(&unary.into_inner(), streamed, "{}", request.fen);
                codes.insert(0);
            }
            (Err(status), Outcome::Error(e)) => {
                assert_eq!(status.code() as i32, e.code);
                assert_eq!(status.message(), e.message);
                codes.insert(e.code);
            }
            (unary, streamed) => panic!("{}: {unary:?} vs {streamed:?}", request.fen),
        }
    }
    let expected = [0, Code::InvalidArgument as i32, Code::NotFound as i32];
    assert_eq!(codes, expected.into_iter().collect());
    server.shutdown().await.unwrap();
}

/// Dilaram's mate, 11 men: above every table.
const DILARAM: &str = "1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1";

fn solve_req(fen: &str, max_plies: u32) -> pb::SolveRequest {
    pb::SolveRequest {
        fen: fen.to_string(),
        max_plies,
        ..Default::default()
    }
}

/// The stream's progress messages and its one answer.
async fn solve_stream(
    client: &mut TablebaseClient<Channel>,
    request: pb::SolveRequest,
) -> Result<(Vec<pb::SolveProgress>, pb::SolveAnswer), tonic::Status> {
    let mut stream = client.solve(request).await?.into_inner();
    let mut progress = Vec::new();
    let mut answer = None;
    while let Some(update) = stream.next().await {
        match update?.update {
            Some(pb::solve_update::Update::Progress(p)) => {
                assert!(answer.is_none(), "progress after the answer");
                progress.push(p);
            }
            Some(pb::solve_update::Update::Result(a)) => answer = Some(a),
            None => panic!("an empty update"),
        }
    }
    Ok((progress, answer.expect("an answer ends the stream")))
}

#[tokio::test]
async fn solve_streams_progress_then_the_proof() {
    let server = start_on_tables(default_tables().await).await;
    let mut client = server.client();
    let (progress, a) = solve_stream(&mut client, solve_req(DILARAM, 11))
        .await
        .unwrap();
    assert_eq!(a.result(), pb::SolveResult::Win);
    assert_eq!((a.plies, a.end()), (Some(11), pb::EndReason::Checkmate));
    assert_eq!(a.keys.len(), 1);
    assert_eq!((a.keys[0].uci.as_str(), a.keys[0].plies), ("h4h8", 11));
    assert_eq!(a.line.len(), 11);
    assert_eq!(a.proved, "White wins in 11 plies by shah mat");
    let tree = a.tree.expect("a tree");
    assert_eq!(tree.moves[0].uci, "h4h8");
    // every bound below 11 was refuted, in order, and reported
    let plies: Vec<u32> = progress.iter().map(|p| p.plies).collect();
    assert_eq!(plies, (1..=10).collect::<Vec<_>>());
    // within 9 plies: no win, and nothing more claimed
    let (_, a) = solve_stream(&mut client, solve_req(DILARAM, 9))
        .await
        .unwrap();
    assert_eq!(a.result(), pb::SolveResult::Unknown);
    assert_eq!((a.plies, a.no_win_within), (None, Some(9)));
    assert!(a.keys.is_empty() && a.line.is_empty());
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn solve_errors_and_limits() {
    let server = start_on_tables(default_tables().await).await;
    let mut client = server.client();
    let code = |r: Result<(Vec<pb::SolveProgress>, pb::SolveAnswer), tonic::Status>| {
        r.map(|_| ()).unwrap_err().code()
    };
    assert_eq!(
        code(solve_stream(&mut client, solve_req("not a fen", 5)).await),
        Code::InvalidArgument
    );
    assert_eq!(
        code(solve_stream(&mut client, solve_req(ILLEGAL, 5)).await),
        Code::InvalidArgument
    );
    // over the server's bound on plies
    assert_eq!(
        code(solve_stream(&mut client, solve_req(DILARAM, 41)).await),
        Code::InvalidArgument
    );
    let bad_time = pb::SolveRequest {
        time_limit_seconds: Some(-1.0),
        ..solve_req(DILARAM, 11)
    };
    assert_eq!(
        code(solve_stream(&mut client, bad_time).await),
        Code::InvalidArgument
    );
    // a time limit ends the search with what is proven
    let short = pb::SolveRequest {
        time_limit_seconds: Some(0.05),
        ..solve_req("rnb1kbnr/p2ppppp/1pp5/4NN2/2Q5/2K1B3/8/8 w - - 0 1", 15)
    };
    let (_, a) = solve_stream(&mut client, short).await.unwrap();
    assert_eq!(a.result(), pb::SolveResult::Unknown);
    assert!(a.stopped);
    assert!(a.proved.contains("time limit"), "{}", a.proved);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn solve_beyond_max_solves_is_resource_exhausted() {
    let tables = Arc::new(Tablebase::open(default_tables().await, RuleSet::default()).unwrap());
    let limits = Limits {
        max_solves: 1,
        ..test_limits()
    };
    let server = start_with(limits, async move { Ok(tables) }).await;
    let mut client = server.client();
    // a long search holds the one permit ...
    let long = pb::SolveRequest {
        time_limit_seconds: Some(20.0),
        ..solve_req("rnb1kbnr/p2ppppp/1pp5/4NN2/2Q5/2K1B3/8/8 w - - 0 1", 15)
    };
    let mut first = client.solve(long).await.unwrap().into_inner();
    // ... so a second is refused at once
    let second = client.solve(solve_req(DILARAM, 11)).await;
    assert_eq!(
        second.map(|_| ()).unwrap_err().code(),
        Code::ResourceExhausted
    );
    // closing the first call stops its search and frees the permit
    drop(first.message().await);
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match solve_stream(&mut client, solve_req(DILARAM, 3)).await {
            Ok((_, a)) => {
                assert_eq!(a.result(), pb::SolveResult::Unknown);
                break;
            }
            Err(s) if s.code() == Code::ResourceExhausted && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(s) => panic!("{s:?}"),
        }
    }
    server.shutdown().await.unwrap();
}

/// A running server finds a table copied into its directory after it started: the
/// first probe answers NOT_FOUND, a probe after the copy the table's value (a miss looks
/// at the directory again, at most once a second).
#[tokio::test]
async fn a_table_added_after_start_is_found() {
    let source = default_tables().await;
    let dir = tempfile::tempdir().unwrap();
    let server = start_on_tables(dir.path()).await;
    let mut client = server.client();
    let missing = client.probe(req(AL_SULI)).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
    assert!(missing.message().contains("KQvKQ"), "{missing:?}");
    for ext in ["tbw", "tbd"] {
        let name = format!("KQvKQ.counter-loss.{ext}");
        // as an operator would: copy beside, then rename into place
        let tmp = dir.path().join(format!(".{name}.copy"));
        std::fs::copy(source.join(&name), &tmp).unwrap();
        std::fs::rename(&tmp, dir.path().join(&name)).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let answer = loop {
        match client.probe(req(AL_SULI)).await {
            Ok(answer) => break answer.into_inner(),
            Err(e) if e.code() == Code::NotFound && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("the copied table was not found: {e:?}"),
        }
    };
    assert_eq!((answer.wdl(), answer.dtm), (pb::Wdl::Win, Some(39)));
    server.shutdown().await.unwrap();
}

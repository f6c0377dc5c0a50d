//! Load tool for the gRPC probe service: N concurrent clients send a bounded number of
//! probes, first as unary `Probe` calls, then over `ProbeMany` streams, and it prints
//! probes/s and the p50/p99 latency of each. Loopback only; stops by itself (request count
//! and a wall-clock limit).
//!
//! ```text
//! cargo run --release --example load -- --addr 127.0.0.1:50051 --clients 8 --requests 20000
//! cargo run --release --example load -- --in-process tables --material KQvKQ
//! ```
//!
//! Positions: by default a few the rules decide (they need no tables); `--material M`
//! draws random legal positions of that material (seeded, reproducible); `--fen F` adds
//! given ones. Answers with an error (e.g. NOT_FOUND for a missing table) are counted by
//! code and timed like the others.
//!
//! Clients. The load tool shares the machine with the server, so by default
//! (`--client h2`) it is a lean gRPC client, as load generators such as h2load and ghz
//! are: written on the `h2` crate (the HTTP/2 implementation under tonic and hyper), with
//! each request's gRPC frame (length prefix and encoded `ProbeRequest`) encoded once up
//! front. It is still real gRPC over real TCP connections: a unary call is one HTTP/2
//! stream (HEADERS, then a DATA frame ending the stream), and its answer is read whole:
//! the response headers, every DATA frame, the trailers with `grpc-status`; the answer
//! message is read by a small protobuf reader of its own, which goes through every field
//! (wire types checked, strings checked to be UTF-8) without building a message. A
//! `ProbeMany` stream is one HTTP/2 stream whose requests (those sent at once in one DATA
//! frame) and answers are sent and read by one task. `--client tonic` uses the generated
//! tonic client instead (tonic's `Channel`: a buffer task in front of hyper, messages
//! decoded into `String`s and `Vec`s), which costs about twice the CPU per call.
//!
//! Latency: each call's (or each streamed probe's) time from just before its request is
//! handed to the HTTP/2 layer until its answer has been read and decoded; every request is
//! timed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};
use shatranj_tb::probe::Tablebase;
use shatranj_tb::service::pb::tablebase_client::TablebaseClient;
use shatranj_tb::service::pb::{self, probe_many_response::Outcome};
use shatranj_tb::{Material, Position, RuleSet};
use tokio::sync::{Semaphore, mpsc};
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// The server's allocator (see `src/main.rs`), for the client too.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(about = "Load test for the shatranj-tb gRPC service (loopback only)")]
struct Args {
    /// Address of a running server (loopback addresses only).
    #[arg(long, default_value = "127.0.0.1:50051", conflicts_with = "in_process")]
    addr: SocketAddr,
    /// Instead of connecting to a running server, start one in this process on
    /// 127.0.0.1:0 over this tables directory.
    #[arg(long, value_name = "TABLES_DIR")]
    in_process: Option<PathBuf>,
    /// Concurrent clients (each one call at a time, or one `ProbeMany` stream).
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// HTTP/2 connections the clients share (client `c` uses connection `c % N`); by
    /// default one per client.
    #[arg(long)]
    connections: Option<usize>,
    /// Which calls to measure.
    #[arg(long, value_enum, default_value_t = Mode::Both)]
    mode: Mode,
    /// Probes per mode (unary, then streamed), split over the clients.
    #[arg(long, default_value_t = 20_000)]
    requests: usize,
    /// Stop a mode after this many seconds even if requests remain.
    #[arg(long, default_value_t = 60)]
    max_seconds: u64,
    /// Probes outstanding at once on each `ProbeMany` stream.
    #[arg(long, default_value_t = 16)]
    window: usize,
    /// Random legal positions of this material (e.g. KQvKQ).
    #[arg(long)]
    material: Option<Material>,
    /// Extra positions to probe (repeatable).
    #[arg(long)]
    fen: Vec<String>,
    /// Ask for the positions' own values only (`value_only`), not every move's.
    #[arg(long)]
    value_only: bool,
    /// Seed for the random positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Which gRPC client to load the server with (see the module docs).
    #[arg(long, value_enum, default_value_t = Client::H2)]
    client: Client,
    /// Worker threads of the load tool's async runtime (default: one a core).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Client {
    /// The lean client on `h2`: pre-encoded requests, zero-copy decoding.
    H2,
    /// The generated tonic client.
    Tonic,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Unary `Probe` calls only.
    Probe,
    /// `ProbeMany` streams only.
    Stream,
    /// Unary calls, then streams.
    Both,
}

/// Positions the rules decide: answered without tables.
const RULES_DECIDED: [&str; 3] = [
    "8/8/8/4k3/8/8/8/K7 w - - 0 1",
    "8/8/8/4k3/8/8/7R/K7 b - - 0 1",
    "8/8/8/4k3/8/8/7R/K7 w - - 0 1",
];

#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: BTreeMap<String, u64>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.latencies.extend(other.latencies);
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
    }

    fn report(mut self, mode: &str, clients: usize, connections: usize, elapsed: Duration) {
        self.latencies.sort_unstable();
        let n = self.latencies.len();
        let pct = |p: f64| {
            if n == 0 {
                return 0.0;
            }
            let i = ((n as f64 * p).ceil() as usize).clamp(1, n) - 1;
            self.latencies[i].as_secs_f64() * 1e3
        };
        println!(
            "{mode:<10} {n:>7} probes, {clients} clients/{connections} conns, {:>6.2} s: {:>9.0} probes/s, \
             p50 {:.3} ms, p99 {:.3} ms, errors {:?}",
            elapsed.as_secs_f64(),
            n as f64 / elapsed.as_secs_f64(),
            pct(0.50),
            pct(0.99),
            self.errors
        );
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let fens = positions(&args)?;
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.threads {
        runtime.worker_threads(n.max(1));
    }
    let runtime = runtime.enable_all().build()?;
    runtime.block_on(run(args, fens))
}

async fn run(args: Args, fens: Vec<String>) -> anyhow::Result<()> {
    let (addr, server) = match &args.in_process {
        Some(dir) => {
            let tables = Arc::new(Tablebase::open(dir, RuleSet::default())?);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(shatranj_tb::service::serve(tables, listener, async {
                let _ = stopped.await;
            }));
            (addr, Some((stop, task)))
        }
        None => (args.addr, None),
    };
    if !addr.ip().is_loopback() {
        bail!("{addr} is not a loopback address: this tool only loads a local server");
    }
    let fens = Arc::new(fens);
    let per_client = args.requests.div_ceil(args.clients.max(1));
    let limit = Duration::from_secs(args.max_seconds);
    let window = args.window;
    let value_only = args.value_only;

    let clients = args.clients.max(1);
    let connections = args.connections.unwrap_or(clients).clamp(1, clients);
    let mut channels = Vec::new();
    let mut h2_conns = Vec::new();
    for _ in 0..connections {
        match args.client {
            Client::Tonic => channels.push(
                Channel::from_shared(format!("http://{addr}"))?
                    .connect()
                    .await
                    .with_context(|| format!("cannot connect to {addr}"))?,
            ),
            Client::H2 => h2_conns.push(
                lean::connect(addr)
                    .await
                    .with_context(|| format!("cannot connect to {addr}"))?,
            ),
        }
    }
    let frames: Arc<Vec<Bytes>> = Arc::new(
        fens.iter()
            .map(|fen| lean::frame(&request(std::slice::from_ref(fen), 0, value_only)))
            .collect(),
    );

    let modes: &[&str] = match args.mode {
        Mode::Probe => &["Probe"],
        Mode::Stream => &["ProbeMany"],
        Mode::Both => &["Probe", "ProbeMany"],
    };
    for &mode in modes {
        let started = Instant::now();
        let deadline = started + limit;
        let mut tasks = Vec::new();
        for c in 0..clients {
            let offset = c * per_client;
            if args.client == Client::H2 {
                let conn = h2_conns[c % h2_conns.len()].clone();
                let frames = Arc::clone(&frames);
                tasks.push(tokio::spawn(async move {
                    if mode == "Probe" {
                        lean::unary(conn, &frames, offset, per_client, deadline).await
                    } else {
                        lean::streamed(conn, &frames, offset, per_client, window, deadline).await
                    }
                }));
                continue;
            }
            let client = TablebaseClient::new(channels[c % channels.len()].clone());
            let fens = Arc::clone(&fens);
            tasks.push(tokio::spawn(async move {
                if mode == "Probe" {
                    unary(client, &fens, offset, per_client, value_only, deadline).await
                } else {
                    streamed(
                        client, fens, offset, per_client, window, value_only, deadline,
                    )
                    .await
                }
            }));
        }
        let mut tally = Tally::default();
        for t in tasks {
            tally.merge(t.await??);
        }
        tally.report(mode, clients, connections, started.elapsed());
    }

    if let Some((stop, task)) = server {
        drop((channels, h2_conns));
        let _ = stop.send(());
        task.await??;
    }
    Ok(())
}

fn request(fens: &[String], i: usize, value_only: bool) -> pb::ProbeRequest {
    pb::ProbeRequest {
        fen: fens[i % fens.len()].clone(),
        value_only,
        ..Default::default()
    }
}

async fn unary(
    mut client: TablebaseClient<Channel>,
    fens: &[String],
    offset: usize,
    count: usize,
    value_only: bool,
    deadline: Instant,
) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    for i in offset..offset + count {
        if Instant::now() >= deadline {
            break;
        }
        let sent = Instant::now();
        let answer = client.probe(request(fens, i, value_only)).await;
        tally.latencies.push(sent.elapsed());
        if let Err(status) = answer {
            *tally
                .errors
                .entry(format!("{:?}", status.code()))
                .or_default() += 1;
        }
    }
    Ok(tally)
}

/// One `ProbeMany` stream with at most `window` probes outstanding (closed loop), so that
/// the latency measured is the service's, not a queue the client built up itself.
async fn streamed(
    mut client: TablebaseClient<Channel>,
    fens: Arc<Vec<String>>,
    offset: usize,
    count: usize,
    window: usize,
    value_only: bool,
    deadline: Instant,
) -> anyhow::Result<Tally> {
    let sent_at = Arc::new(Mutex::new(Vec::with_capacity(count)));
    let credit = Arc::new(Semaphore::new(window.max(1)));
    let (tx, rx) = mpsc::channel(window.max(1));
    let sender = {
        let (sent_at, credit) = (Arc::clone(&sent_at), Arc::clone(&credit));
        tokio::spawn(async move {
            for i in offset..offset + count {
                if Instant::now() >= deadline {
                    break;
                }
                let Ok(permit) = credit.acquire().await else {
                    break;
                };
                permit.forget();
                sent_at.lock().expect("stamps").push(Instant::now());
                if tx.send(request(&fens, i, value_only)).await.is_err() {
                    break;
                }
            }
        })
    };
    let mut answers = client
        .probe_many(ReceiverStream::new(rx))
        .await?
        .into_inner();
    let mut tally = Tally::default();
    while let Some(answer) = answers.next().await {
        let answer = answer?;
        credit.add_permits(1);
        let index = usize::try_from(answer.index)?;
        let sent = sent_at.lock().expect("stamps")[index];
        tally.latencies.push(sent.elapsed());
        if let Some(Outcome::Error(e)) = answer.outcome {
            let code = format!("{:?}", tonic::Code::from(e.code));
            *tally.errors.entry(code).or_default() += 1;
        }
    }
    sender.await?;
    Ok(tally)
}

/// The positions to probe: given FENs, random ones of `--material`, or the rules-decided
/// defaults.
fn positions(args: &Args) -> anyhow::Result<Vec<String>> {
    let mut fens = args.fen.clone();
    if let Some(material) = &args.material {
        let mut rng = StdRng::seed_from_u64(args.seed);
        let mut tries = 0;
        while fens.len() < 4096 {
            tries += 1;
            if tries > 1_000_000 {
                bail!("could not place {material} legally");
            }
            if let Some(fen) = random_position(material, &mut rng) {
                fens.push(fen);
            }
        }
    }
    if fens.is_empty() {
        fens.extend(RULES_DECIDED.map(String::from));
    }
    for fen in &fens {
        Position::from_fen(fen).with_context(|| format!("bad position {fen}"))?;
    }
    Ok(fens)
}

/// A random placement of `material` (plus the shahs) with a random side to move, if legal.
fn random_position(material: &Material, rng: &mut StdRng) -> Option<String> {
    let (white, black) = material.to_string().split_once('v').map(|(w, b)| {
        (
            w.to_string(),
            b.chars()
                .map(|c| c.to_ascii_lowercase())
                .collect::<String>(),
        )
    })?;
    let mut board = [None::<char>; 64];
    for piece in white.chars().chain(black.chars()) {
        let free: Vec<usize> = (0..64).filter(|&s| board[s].is_none()).collect();
        board[free[rng.gen_range(0..free.len())]] = Some(piece);
    }
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                Some(p) => {
                    if empty > 0 {
                        fen.push_str(&empty.to_string());
                        empty = 0;
                    }
                    fen.push(p);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            fen.push_str(&empty.to_string());
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen.push_str(if rng.r#gen::<bool>() { " w" } else { " b" });
    fen.push_str(" - - 0 1");
    Position::from_fen(&fen).ok().map(|p| p.fen())
}

/// The lean client (`--client h2`, see the module docs).
mod lean {
    use std::net::SocketAddr;
    use std::time::Instant;

    use anyhow::{Context as _, bail};
    use bytes::{Buf as _, BufMut as _, Bytes, BytesMut};
    use h2::client::SendRequest;
    use http::{HeaderMap, Method, Request, Uri};
    use prost::Message as _;
    use shatranj_tb::service::pb;

    use super::Tally;

    /// A protobuf reader for the answer messages of `tablebase.proto`, written for this
    /// client rather than generated: it reads every field of every message, checks the
    /// wire types and that strings are UTF-8, skips fields it does not know (as protobuf
    /// requires), and keeps only what the tool counts, so no message is built and
    /// nothing is allocated.
    mod wire {
        use anyhow::{Context as _, bail};

        fn varint(buf: &mut &[u8]) -> anyhow::Result<u64> {
            let mut value = 0u64;
            for shift in (0..64).step_by(7) {
                let (&b, rest) = buf.split_first().context("truncated varint")?;
                *buf = rest;
                value |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    return Ok(value);
                }
            }
            bail!("varint longer than 10 bytes")
        }

        fn delimited<'a>(buf: &mut &'a [u8]) -> anyhow::Result<&'a [u8]> {
            let len = usize::try_from(varint(buf)?)?;
            if len > buf.len() {
                bail!("truncated field");
            }
            let (field, rest) = buf.split_at(len);
            *buf = rest;
            Ok(field)
        }

        fn string(buf: &mut &[u8]) -> anyhow::Result<()> {
            std::str::from_utf8(delimited(buf)?).context("a string that is not UTF-8")?;
            Ok(())
        }

        fn skip(wire_type: u64, buf: &mut &[u8]) -> anyhow::Result<()> {
            let len = match wire_type {
                0 => return varint(buf).map(drop),
                1 => 8,
                2 => return delimited(buf).map(drop),
                5 => 4,
                other => bail!("wire type {other}"),
            };
            *buf = buf.get(len..).context("truncated field")?;
            Ok(())
        }

        /// Calls `field` with each field's number and wire type, `buf` at its value; a
        /// field it does not read (it returns false) is skipped.
        fn fields(
            mut buf: &[u8],
            mut field: impl FnMut(u64, u64, &mut &[u8]) -> anyhow::Result<bool>,
        ) -> anyhow::Result<()> {
            while !buf.is_empty() {
                let key = varint(&mut buf)?;
                let (number, wire_type) = (key >> 3, key & 7);
                if !field(number, wire_type, &mut buf)? {
                    skip(wire_type, &mut buf)?;
                }
            }
            Ok(())
        }

        /// A `ProbeResponse`: its `wdl` (0 if unset) and number of moves.
        pub fn probe_response(buf: &[u8]) -> anyhow::Result<(i32, usize)> {
            let (mut wdl, mut moves) = (0, 0);
            fields(buf, |number, wire_type, buf| {
                match (number, wire_type) {
                    // fen, material, rules, best_move
                    (1 | 2 | 3 | 7, 2) => string(buf)?,
                    (4, 0) => wdl = varint(buf)? as i32,
                    // dtm, end
                    (5 | 6, 0) => drop(varint(buf)?),
                    (8, 2) => {
                        // MoveValue: uci, wdl, dtm
                        fields(delimited(buf)?, |number, wire_type, buf| {
                            match (number, wire_type) {
                                (1, 2) => string(buf)?,
                                (2 | 3, 0) => drop(varint(buf)?),
                                _ => return Ok(false),
                            }
                            Ok(true)
                        })?;
                        moves += 1;
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            Ok((wdl, moves))
        }

        /// The outcome of one answer of a `ProbeMany` stream.
        pub enum Item {
            /// The probe's `wdl` (0 if unset).
            Result(i32),
            /// The item's status code.
            Error(i32),
            Missing,
        }

        /// A `ProbeManyResponse`: its index and outcome.
        pub fn probe_many_response(buf: &[u8]) -> anyhow::Result<(u64, Item)> {
            let (mut index, mut item) = (0, Item::Missing);
            fields(buf, |number, wire_type, buf| {
                match (number, wire_type) {
                    (1, 0) => index = varint(buf)?,
                    (2, 2) => string(buf)?,
                    (3, 2) => item = Item::Result(probe_response(delimited(buf)?)?.0),
                    (4, 2) => {
                        let mut code = 0;
                        fields(delimited(buf)?, |number, wire_type, buf| {
                            match (number, wire_type) {
                                (1, 0) => code = varint(buf)? as i32,
                                (2, 2) => string(buf)?,
                                _ => return Ok(false),
                            }
                            Ok(true)
                        })?;
                        item = Item::Error(code);
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            Ok((index, item))
        }
    }

    const PROBE: &str = "/shatranj.tablebase.v1.Tablebase/Probe";
    const PROBE_MANY: &str = "/shatranj.tablebase.v1.Tablebase/ProbeMany";

    /// One HTTP/2 connection, shared by the clients given it, with the request heads
    /// of the two calls.
    #[derive(Clone)]
    pub struct Conn {
        send: SendRequest<Bytes>,
        probe: Request<()>,
        probe_many: Request<()>,
    }

    pub async fn connect(addr: SocketAddr) -> anyhow::Result<Conn> {
        let tcp = tokio::net::TcpStream::connect(addr).await?;
        tcp.set_nodelay(true)?;
        // windows as hyper's client sets them, so flow control seldom stops a stream
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(2 << 20)
            .initial_connection_window_size(5 << 20)
            .handshake::<_, Bytes>(tcp)
            .await?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let request = |path: &str| -> anyhow::Result<Request<()>> {
            let uri: Uri = format!("http://{addr}{path}").parse()?;
            Ok(Request::builder()
                .method(Method::POST)
                .uri(uri)
                .header(http::header::CONTENT_TYPE, "application/grpc")
                .header(http::header::TE, "trailers")
                .body(())?)
        };
        Ok(Conn {
            send,
            probe: request(PROBE)?,
            probe_many: request(PROBE_MANY)?,
        })
    }

    /// The gRPC frame of a request: uncompressed flag, big-endian length, message.
    pub fn frame(req: &pb::ProbeRequest) -> Bytes {
        let len = req.encoded_len();
        let mut buf = BytesMut::with_capacity(5 + len);
        buf.put_u8(0);
        buf.put_u32(u32::try_from(len).expect("a small message"));
        req.encode(&mut buf).expect("capacity reserved");
        buf.freeze()
    }

    /// The `grpc-status` of a header block, if it has one.
    fn grpc_status(headers: &HeaderMap) -> Option<i32> {
        headers
            .get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    }

    /// The next whole gRPC message at the front of `buf`, taken off it.
    fn next_message(buf: &mut BytesMut) -> anyhow::Result<Option<Bytes>> {
        if buf.len() < 5 {
            return Ok(None);
        }
        if buf[0] != 0 {
            bail!("a compressed message, which this client did not ask for");
        }
        let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if buf.len() < 5 + len {
            return Ok(None);
        }
        buf.advance(5);
        Ok(Some(buf.split_to(len).freeze()))
    }

    fn count_error(tally: &mut Tally, code: i32) {
        *tally
            .errors
            .entry(format!("{:?}", tonic::Code::from(code)))
            .or_default() += 1;
    }

    /// Opens a stream for a call to `uri` once the connection takes one more.
    async fn open(
        conn: &mut Conn,
        many: bool,
    ) -> anyhow::Result<(h2::client::ResponseFuture, h2::SendStream<Bytes>)> {
        std::future::poll_fn(|cx| conn.send.poll_ready(cx)).await?;
        let head = if many { &conn.probe_many } else { &conn.probe };
        Ok(conn.send.send_request(head.clone(), false)?)
    }

    /// One unary call: the status (0 for OK) and, if OK, the answer's `wdl`.
    async fn call(conn: &mut Conn, frame: Bytes) -> anyhow::Result<(i32, Option<i32>)> {
        let (response, mut body_out) = open(conn, false).await?;
        body_out.send_data(frame, true)?;
        let (head, mut body) = response.await?.into_parts();
        if head.status != http::StatusCode::OK {
            bail!("HTTP status {}", head.status);
        }
        if let Some(code) = grpc_status(&head.headers) {
            // trailers-only answer: an error
            return Ok((code, None));
        }
        let mut buf = BytesMut::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk?;
            let _ = body.flow_control().release_capacity(chunk.len());
            buf.extend_from_slice(&chunk);
        }
        let code = body
            .trailers()
            .await?
            .as_ref()
            .and_then(grpc_status)
            .context("no grpc-status in the trailers")?;
        if code != 0 {
            return Ok((code, None));
        }
        let message = next_message(&mut buf)?.context("an OK answer without a message")?;
        Ok((0, Some(wire::probe_response(&message)?.0)))
    }

    /// Unary calls one after the other, each timed.
    pub async fn unary(
        mut conn: Conn,
        frames: &[Bytes],
        offset: usize,
        count: usize,
        deadline: Instant,
    ) -> anyhow::Result<Tally> {
        let mut tally = Tally::default();
        tally.latencies.reserve(count);
        for i in offset..offset + count {
            if Instant::now() >= deadline {
                break;
            }
            let sent = Instant::now();
            let (code, answer) = call(&mut conn, frames[i % frames.len()].clone()).await?;
            tally.latencies.push(sent.elapsed());
            if code != 0 {
                count_error(&mut tally, code);
            } else if answer.is_none_or(|wdl| wdl == 0) {
                bail!("an OK answer without a value");
            }
        }
        Ok(tally)
    }

    /// One `ProbeMany` stream with at most `window` probes outstanding (closed loop: one
    /// request sent for each answer read), requests and answers handled by this one task.
    pub async fn streamed(
        mut conn: Conn,
        frames: &[Bytes],
        offset: usize,
        count: usize,
        window: usize,
        deadline: Instant,
    ) -> anyhow::Result<Tally> {
        let mut tally = Tally::default();
        tally.latencies.reserve(count);
        let mut sent_at: Vec<Instant> = Vec::with_capacity(count);
        let (response, mut out) = open(&mut conn, true).await?;
        let mut closed = false;
        // Sends up to `n` more requests in one DATA frame (as tonic's client joins the
        // messages ready at once), ending the stream after the last one.
        let mut batch = BytesMut::new();
        let mut send_more = |n: usize, sent_at: &mut Vec<Instant>| -> anyhow::Result<()> {
            if closed || n == 0 {
                return Ok(());
            }
            let now = Instant::now();
            let last = count.min(sent_at.len() + n);
            if now < deadline {
                while sent_at.len() < last {
                    batch.extend_from_slice(&frames[(offset + sent_at.len()) % frames.len()]);
                    sent_at.push(now);
                }
            }
            closed = sent_at.len() >= count || now >= deadline;
            out.send_data(batch.split().freeze(), closed)?;
            Ok(())
        };
        send_more(window.max(1), &mut sent_at)?;
        let (head, mut body) = response.await?.into_parts();
        if head.status != http::StatusCode::OK {
            bail!("HTTP status {}", head.status);
        }
        if let Some(code) = grpc_status(&head.headers) {
            bail!("the stream failed at once: {:?}", tonic::Code::from(code));
        }
        let mut buf = BytesMut::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk?;
            let _ = body.flow_control().release_capacity(chunk.len());
            buf.extend_from_slice(&chunk);
            let mut answered = 0;
            while let Some(message) = next_message(&mut buf)? {
                let (index, item) = wire::probe_many_response(&message)?;
                let sent = sent_at
                    .get(usize::try_from(index)?)
                    .context("an answer to no request")?;
                tally.latencies.push(sent.elapsed());
                match item {
                    wire::Item::Result(wdl) if wdl != 0 => {}
                    wire::Item::Error(code) => count_error(&mut tally, code),
                    _ => bail!("an answer without a value"),
                }
                answered += 1;
            }
            send_more(answered, &mut sent_at)?;
        }
        let code = body.trailers().await?.as_ref().and_then(grpc_status);
        if code != Some(0) {
            bail!("the stream ended with grpc-status {code:?}");
        }
        Ok(tally)
    }
}

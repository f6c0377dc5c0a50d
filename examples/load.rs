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

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
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
    let mut channels = Vec::new();
    for _ in 0..args.connections.unwrap_or(clients).clamp(1, clients) {
        channels.push(
            Channel::from_shared(format!("http://{addr}"))?
                .connect()
                .await
                .with_context(|| format!("cannot connect to {addr}"))?,
        );
    }

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
            let client = TablebaseClient::new(channels[c % channels.len()].clone());
            let fens = Arc::clone(&fens);
            let offset = c * per_client;
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
        tally.report(mode, clients, channels.len(), started.elapsed());
    }

    if let Some((stop, task)) = server {
        drop(channels);
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

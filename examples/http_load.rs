//! Load tool for the HTTP JSON API of `serve --http`: N keep-alive HTTP/1.1 connections
//! each send `GET /api/v1/probe?fen=...` one after another (as `wrk` and `oha` do), and it
//! prints answers/s and the p50/p99/p99.9 latency. Loopback only; stops by itself (request
//! count and a wall-clock limit).
//!
//! ```text
//! shatranj-tb serve --tables tables --http 127.0.0.1:8080 &
//! cargo run --release --example http_load -- --addr 127.0.0.1:8080 --material KQvKQ
//! ```
//!
//! Positions: 4096 random legal positions of `--material` (seeded), or `--fen` ones. Before
//! the timed run each position is probed once (not timed), so that the tables are warm.
//! The client is lean, since it shares the cores with the server: each request's bytes are
//! written once up front, and an answer is read by its `Content-Length`; an answer counts
//! as good when its status is 200 and its body is a JSON object starting with
//! `{"category":` (the probe answer's first field).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};
use shatranj_tb::{Board, Color, Material, Piece, Position, Square};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

#[derive(Parser, Debug)]
#[command(about = "Load test for the shatranj-tb HTTP API (loopback only)")]
struct Args {
    /// Address of the server's HTTP listener (loopback addresses only).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Keep-alive connections, each with one request in flight.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Timed requests in all (at most 10,000,000).
    #[arg(long, default_value_t = 200_000)]
    requests: usize,
    /// Random legal positions of this material.
    #[arg(long, default_value = "KQvKQ")]
    material: Material,
    /// Probe these positions instead of random ones.
    #[arg(long)]
    fen: Vec<String>,
    /// Seed of the random positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads of the tool's own runtime.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Stop after this many seconds at most.
    #[arg(long, default_value_t = 120)]
    max_seconds: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if !args.addr.ip().is_loopback() {
        bail!(
            "{} is not a loopback address: this tool only loads a local server",
            args.addr
        );
    }
    if args.requests > 10_000_000 {
        bail!("--requests is at most 10,000,000");
    }
    let fens = positions(&args)?;
    let requests: Vec<Vec<u8>> = fens
        .iter()
        .map(|f| {
            format!(
                "GET /api/v1/probe?fen={} HTTP/1.1\r\nHost: {}\r\n\r\n",
                f.replace(' ', "_"),
                args.addr
            )
            .into_bytes()
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    runtime.block_on(run(&args, Arc::new(requests)))
}

/// One connection's tally.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    statuses: BTreeMap<u16, usize>,
    bad_bodies: usize,
}

async fn run(args: &Args, requests: Arc<Vec<Vec<u8>>>) -> anyhow::Result<()> {
    // Warm-up, untimed: every position once, on one connection.
    let mut conn = Conn::open(args.addr).await?;
    let warm_start = Instant::now();
    for r in requests.iter() {
        conn.request(r).await?;
    }
    println!(
        "warm-up: {} positions of {} in {:.2} s",
        requests.len(),
        if args.fen.is_empty() {
            args.material.to_string()
        } else {
            "--fen".to_string()
        },
        warm_start.elapsed().as_secs_f64()
    );
    drop(conn);

    let connections = args.connections.max(1);
    let per_conn = args.requests.div_ceil(connections);
    let deadline = Instant::now() + Duration::from_secs(args.max_seconds);
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(connections);
    for c in 0..connections {
        let requests = Arc::clone(&requests);
        let addr = args.addr;
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::open(addr).await?;
            let mut tally = Tally {
                latencies: Vec::with_capacity(per_conn),
                ..Tally::default()
            };
            for k in 0..per_conn {
                if k % 256 == 0 && Instant::now() > deadline {
                    break;
                }
                let r = &requests[(c * 7919 + k) % requests.len()];
                let t = Instant::now();
                let (status, good) = conn.request(r).await?;
                tally.latencies.push(t.elapsed());
                *tally.statuses.entry(status).or_default() += 1;
                if !good {
                    tally.bad_bodies += 1;
                }
            }
            anyhow::Ok(tally)
        }));
    }
    let mut all = Tally::default();
    for t in tasks {
        let tally = t.await.context("a client task failed")??;
        all.latencies.extend(tally.latencies);
        for (s, n) in tally.statuses {
            *all.statuses.entry(s).or_default() += n;
        }
        all.bad_bodies += tally.bad_bodies;
    }
    let elapsed = start.elapsed();
    all.latencies.sort_unstable();
    let n = all.latencies.len();
    let pct = |p: f64| {
        let i = ((n as f64 * p).ceil() as usize).clamp(1, n.max(1)) - 1;
        all.latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{n} answers over {connections} connections in {:.2} s: {:.0} answers/s, \
         p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms; statuses {:?}, bad bodies {}",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.99),
        pct(0.999),
        pct(1.0),
        all.statuses,
        all.bad_bodies
    );
    if all.statuses.keys().any(|&s| s != 200) || all.bad_bodies > 0 {
        bail!("some answers failed");
    }
    Ok(())
}

/// A keep-alive HTTP/1.1 connection with one request in flight.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> anyhow::Result<Conn> {
        let stream = TcpStream::connect(addr)
            .await
            .with_context(|| format!("cannot connect to {addr}"))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(16 * 1024),
        })
    }

    /// Sends one request and reads its answer: the status and whether the body is a
    /// probe answer.
    async fn request(&mut self, request: &[u8]) -> anyhow::Result<(u16, bool)> {
        self.stream.write_all(request).await?;
        self.buf.clear();
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i + 4;
            }
            self.fill().await?;
        };
        let head = std::str::from_utf8(&self.buf[..head_end]).context("a non-UTF-8 header")?;
        let status: u16 = head
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .context("no status line")?;
        let length: usize = head
            .split("\r\n")
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .context("no Content-Length")?;
        while self.buf.len() < head_end + length {
            self.fill().await?;
        }
        if self.buf.len() > head_end + length {
            bail!("more bytes than the answer's Content-Length");
        }
        let good = status == 200 && self.buf[head_end..].starts_with(b"{\"category\":");
        Ok((status, good))
    }

    async fn fill(&mut self) -> anyhow::Result<()> {
        let mut chunk = [0u8; 8192];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            bail!("the server closed the connection");
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The positions to probe: `--fen`, or 4096 random legal positions of `--material`.
fn positions(args: &Args) -> anyhow::Result<Vec<String>> {
    if !args.fen.is_empty() {
        for fen in &args.fen {
            Position::from_fen(fen).with_context(|| format!("bad position {fen}"))?;
        }
        return Ok(args.fen.clone());
    }
    let name = args.material.to_string();
    let (white, black) = name.split_once('v').context("a material like KQvKQ")?;
    let pieces: Vec<char> = white
        .chars()
        .chain(black.chars().map(|c| c.to_ascii_lowercase()))
        .collect();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut fens = Vec::new();
    let mut tries = 0;
    while fens.len() < 4096 {
        tries += 1;
        if tries > 1_000_000 {
            bail!("could not place {name} legally");
        }
        let mut board = Board::empty();
        for &c in &pieces {
            let free: Vec<u32> = (0..64)
                .filter(|&s| !board.occupied().contains(Square::new(s)))
                .collect();
            let piece = Piece::from_char(c).context("a piece letter")?;
            board.set_piece_at(Square::new(free[rng.gen_range(0..free.len())]), piece);
        }
        let turn = if rng.gen_bool(0.5) {
            Color::White
        } else {
            Color::Black
        };
        if let Ok(pos) = Position::from_board(board, turn) {
            fens.push(pos.fen());
        }
    }
    Ok(fens)
}

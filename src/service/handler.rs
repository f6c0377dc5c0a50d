//! The `shatranj.tablebase.v1.Tablebase` service: request handlers over a shared
//! [`Tablebase`].
//!
//! Where probes run: a probe that can be answered from memory (table files open, blocks
//! decompressed in the cache: the steady state of a warm server) is a few microseconds of
//! CPU and cannot block, so it runs on the async runtime, in the handler ([`probe_inline`]);
//! handing it to another thread would cost more than the probe. Anything that may touch
//! the disk (opening a file, reading or decompressing a block), and `Line` and
//! `ListTables`, runs on tokio's blocking pool, at most [`Limits::max_blocking_probes`]
//! tasks at once over the whole server.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};

use super::Limits;
use super::convert::{self, ServiceError};
use super::pb;
use crate::probe::Tablebase;
use crate::solve::{self, SolveError, SolveOptions, SolveProgress};
use crate::{Material, Position, RuleSet};

/// The service's shared state: the tables once open, and the probe budget.
#[derive(Debug)]
pub(crate) struct State {
    tables: OnceLock<Arc<Tablebase>>,
    probes: Arc<Semaphore>,
    stream_window: usize,
    draining: watch::Receiver<bool>,
    /// `Solve` searches running at once, and their bounds.
    solves: Arc<Semaphore>,
    max_solve_plies: u32,
    max_solve_time: std::time::Duration,
    solve_hash_mb: usize,
}

impl State {
    pub(crate) fn new(limits: &Limits, draining: watch::Receiver<bool>) -> State {
        State {
            tables: OnceLock::new(),
            probes: Arc::new(Semaphore::new(limits.max_blocking_probes.max(1))),
            stream_window: limits.stream_window.max(1),
            draining,
            solves: Arc::new(Semaphore::new(limits.max_solves.max(1))),
            max_solve_plies: limits.max_solve_plies,
            max_solve_time: limits.max_solve_time,
            solve_hash_mb: limits.solve_hash_mb,
        }
    }

    /// Makes the tables available to calls. Later calls keep the first tables.
    pub(crate) fn set_tables(&self, tables: Arc<Tablebase>) {
        let _ = self.tables.set(tables);
    }

    /// The tables. Calls that reach a handler while the server drains are still served:
    /// they were accepted before the shutdown (HTTP/2 GOAWAY refuses later ones).
    pub(crate) fn tables(&self) -> Result<Arc<Tablebase>, ServiceError> {
        self.tables.get().cloned().ok_or(ServiceError::NotReady)
    }

    /// What health checks answer: serving once the tables are open, until shutdown begins.
    pub(crate) fn serving(&self) -> bool {
        self.tables.get().is_some() && !*self.draining.borrow()
    }

    /// The options of a search asked for with these bounds (0 plies: the default),
    /// within the server's limits; `time_cap` bounds the time further.
    pub(crate) fn solve_options(
        &self,
        max_plies: u32,
        time_limit_seconds: Option<f64>,
        tree_depth: Option<u32>,
        time_cap: Option<std::time::Duration>,
    ) -> Result<SolveOptions, ServiceError> {
        let invalid = |m: String| ServiceError::Solve(SolveError::InvalidOptions(m));
        let max_plies = if max_plies == 0 {
            solve::DEFAULT_MAX_PLIES.min(self.max_solve_plies)
        } else {
            max_plies
        };
        if max_plies > self.max_solve_plies {
            return Err(invalid(format!(
                "a bound of {max_plies} plies is over this server's limit of {}",
                self.max_solve_plies
            )));
        }
        let mut time = self.max_solve_time;
        if let Some(cap) = time_cap {
            time = time.min(cap);
        }
        match time_limit_seconds {
            None => {}
            Some(t) if t.is_finite() && t > 0.0 => {
                time = time.min(std::time::Duration::from_secs_f64(t.min(1e7)));
            }
            Some(t) => {
                return Err(invalid(format!(
                    "the time limit must be a positive number of seconds, not {t}"
                )));
            }
        }
        let opts = SolveOptions {
            max_plies,
            hash_mb: self.solve_hash_mb,
            threads: 1,
            time_limit: Some(time),
            tree_depth: tree_depth.unwrap_or(solve::DEFAULT_TREE_DEPTH).min(8),
        };
        solve::check_options(&opts).map_err(ServiceError::Solve)?;
        Ok(opts)
    }

    /// Starts a search on a blocking thread of its own if fewer than `max_solves` run;
    /// RESOURCE_EXHAUSTED otherwise. `stop`, once set, ends it with what is proven.
    pub(crate) fn start_solve(
        &self,
        tables: Arc<Tablebase>,
        pos: Position,
        opts: SolveOptions,
        progress: Box<dyn SolveProgress + Send>,
        stop: Arc<AtomicBool>,
    ) -> Result<JoinHandle<Result<solve::Solution, ServiceError>>, ServiceError> {
        let permit = Arc::clone(&self.solves)
            .try_acquire_owned()
            .map_err(|_| ServiceError::Busy)?;
        Ok(tokio::task::spawn_blocking(move || {
            let _permit = permit;
            solve::solve(&tables, &pos, &opts, progress.as_ref(), &stop)
                .map_err(ServiceError::Solve)
        }))
    }

    /// Resolves once the server starts draining for shutdown.
    pub(crate) async fn drained(&self) {
        drained(&mut self.draining.clone()).await;
    }

    /// Runs `work` on the blocking pool once a probe permit is free (the one budget of
    /// blocking work shared by the gRPC and HTTP handlers).
    pub(crate) async fn blocking<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&Tablebase) -> Result<T, ServiceError> + Send + 'static,
    {
        let tables = self.tables()?;
        let permit = acquire(&self.probes).await?;
        join(spawn_probe(permit, tables, work)).await
    }
}

/// The gRPC service. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TablebaseService {
    state: Arc<State>,
}

impl TablebaseService {
    pub(crate) fn new(state: Arc<State>) -> TablebaseService {
        TablebaseService { state }
    }

    /// Runs `work` on the blocking pool once a probe permit is free. The permit goes with
    /// the work, so a call cancelled by its client still counts until its probe is done.
    async fn blocking<T, F>(&self, work: F) -> Result<T, ServiceError>
    where
        T: Send + 'static,
        F: FnOnce(&Tablebase) -> Result<T, ServiceError> + Send + 'static,
    {
        self.state.blocking(work).await
    }
}

async fn acquire(probes: &Arc<Semaphore>) -> Result<OwnedSemaphorePermit, ServiceError> {
    Arc::clone(probes)
        .acquire_owned()
        .await
        .map_err(|_| ServiceError::ShuttingDown)
}

fn spawn_probe<T, F>(
    permit: OwnedSemaphorePermit,
    tables: Arc<Tablebase>,
    work: F,
) -> JoinHandle<Result<T, ServiceError>>
where
    T: Send + 'static,
    F: FnOnce(&Tablebase) -> Result<T, ServiceError> + Send + 'static,
{
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work(&tables)
    })
}

async fn join<T>(handle: JoinHandle<Result<T, ServiceError>>) -> Result<T, ServiceError> {
    handle
        .await
        .map_err(|e| ServiceError::Internal(format!("probe worker failed: {e}")))?
}

/// Reads a request's FEN and checks its optional rule set against the server's.
pub(crate) fn position(
    tables: &Tablebase,
    fen: &str,
    rules: &str,
) -> Result<Position, ServiceError> {
    if !rules.trim().is_empty() {
        let requested: RuleSet = rules.parse().map_err(ServiceError::Rules)?;
        if requested != tables.rules() {
            return Err(ServiceError::RulesMismatch {
                requested,
                served: tables.rules(),
            });
        }
    }
    Position::from_fen(fen).map_err(|source| ServiceError::Fen {
        fen: fen.to_string(),
        source,
    })
}

fn probe(tables: &Tablebase, req: &pb::ProbeRequest) -> Result<pb::ProbeResponse, ServiceError> {
    let pos = position(tables, &req.fen, &req.rules)?;
    if req.value_only {
        let value = tables.value(&pos)?;
        return Ok(convert::value_response(&pos, tables.rules(), value));
    }
    let probe = tables.probe_moves(&pos)?;
    let dtz = if tables.has_dtz_for(&pos) {
        Some(tables.probe_dtz(&pos)?)
    } else {
        None
    };
    Ok(convert::probe_response(
        &pos,
        tables.rules(),
        &probe,
        dtz.as_ref(),
    ))
}

/// The answer to `req` if it can be given from memory ([`Tablebase::probe_cached`]):
/// reading the FEN and a warm probe take a few microseconds and never block, so they run
/// on the async runtime itself, sparing a round trip through the blocking pool (two
/// thread wake-ups, which cost more than the probe). `None` when the probe needs a file
/// opened or a block read: then it goes to the blocking pool ([`probe`]). A full probe of a
/// position whose table has a DTZ file goes there too: DTZ is read from the files only
/// (there is no cached DTZ lookup), unless the rules decide the position alone (a bare
/// side: every position after its moves too), which needs no file.
fn probe_inline(
    tables: &Tablebase,
    req: &pb::ProbeRequest,
) -> Option<Result<pb::ProbeResponse, ServiceError>> {
    let pos = match position(tables, &req.fen, &req.rules) {
        Ok(pos) => pos,
        Err(e) => return Some(Err(e)),
    };
    let answer = if req.value_only {
        tables
            .value_cached(&pos)
            .map(|v| v.map(|v| convert::value_response(&pos, tables.rules(), v)))
    } else {
        let decided = Material::from_board(pos.board()).is_decided_by_rules();
        if !decided && tables.has_dtz_for(&pos) {
            return None;
        }
        let dtz = if decided {
            match tables.probe_dtz(&pos) {
                Ok(d) => Some(d),
                Err(e) => return Some(Err(e.into())),
            }
        } else {
            None
        };
        tables
            .probe_moves_cached(&pos)
            .map(|r| r.map(|p| convert::probe_response(&pos, tables.rules(), &p, dtz.as_ref())))
    };
    answer.map_err(ServiceError::from).transpose()
}

/// Completes once the server drains (or is gone).
async fn drained(draining: &mut watch::Receiver<bool>) {
    // The borrow guard must not live in the caller's future (it is not `Send`).
    let _ = draining.wait_for(|d| *d).await.map(|_| ());
}

type ProbeManyStream = Pin<Box<dyn Stream<Item = Result<pb::ProbeManyResponse, Status>> + Send>>;

type Answer = Result<pb::ProbeManyResponse, Status>;

/// One answer of a `ProbeMany` stream.
fn item(
    index: u64,
    request_fen: String,
    result: Result<pb::ProbeResponse, ServiceError>,
) -> pb::ProbeManyResponse {
    let outcome = match result {
        Ok(r) => pb::probe_many_response::Outcome::Result(r),
        Err(e) => pb::probe_many_response::Outcome::Error(convert::item_error(&Status::from(e))),
    };
    pb::ProbeManyResponse {
        index,
        request_fen,
        outcome: Some(outcome),
    }
}

/// How the reading of a `ProbeMany` stream's requests ended.
enum End {
    /// The client closed its side: the answers end normally.
    Closed,
    /// The answers end with this status (a transport error, or the server draining).
    Status(Status),
}

/// The answers of one `ProbeMany` stream, in request order, as tonic asks for them (a
/// stream, not a task: no channel and no task wake-up per item).
///
/// Each time the answers sent so far run out, it reads every request the stream has
/// ready, up to `window` of them, and answers them at once: in memory on the runtime
/// while that is possible ([`probe_inline`]); from the first request that needs a table
/// read on, the rest of the batch goes, in order, to ONE blocking task. Backpressure: it
/// reads requests only as tonic takes answers, and tonic only as HTTP/2 flow control lets
/// it send, so a client that does not read its answers stops its own requests.
struct ProbeManyAnswers {
    tables: Arc<Tablebase>,
    inbound: Streaming<pb::ProbeRequest>,
    probes: Arc<Semaphore>,
    window: usize,
    next_index: u64,
    /// Answers ready to send.
    ready: VecDeque<Answer>,
    /// The answers of the batch on the blocking pool; they follow `ready`.
    blocking: Option<Pin<Box<dyn Future<Output = Vec<Answer>> + Send>>>,
    /// Completes once the server drains.
    draining: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Set once no more requests are read; sent after every answer under way.
    end: Option<End>,
    finished: bool,
}

impl ProbeManyAnswers {
    fn new(state: &State, tables: Arc<Tablebase>, inbound: Streaming<pb::ProbeRequest>) -> Self {
        let mut draining = state.draining.clone();
        ProbeManyAnswers {
            tables,
            inbound,
            probes: Arc::clone(&state.probes),
            window: state.stream_window,
            next_index: 0,
            ready: VecDeque::new(),
            blocking: None,
            draining: Box::pin(async move { drained(&mut draining).await }),
            end: None,
            finished: false,
        }
    }

    /// Reads the requests ready now (at most `window`) and answers them, or sends the tail
    /// of the batch from the first one that needs a table read to the blocking pool.
    fn read_batch(&mut self, cx: &mut Context<'_>) {
        let mut cold: Vec<(u64, pb::ProbeRequest)> = Vec::new();
        while self.ready.len() + cold.len() < self.window {
            let req = match Pin::new(&mut self.inbound).poll_next(cx) {
                Poll::Ready(Some(Ok(req))) => req,
                Poll::Ready(Some(Err(status))) => {
                    self.end = Some(End::Status(status));
                    break;
                }
                Poll::Ready(None) => {
                    self.end = Some(End::Closed);
                    break;
                }
                Poll::Pending => break,
            };
            let index = self.next_index;
            self.next_index += 1;
            if cold.is_empty() {
                if let Some(answer) = probe_inline(&self.tables, &req) {
                    self.ready.push_back(Ok(item(index, req.fen, answer)));
                    continue;
                }
            }
            cold.push((index, req));
        }
        if !cold.is_empty() {
            self.blocking = Some(Box::pin(probe_batch(
                Arc::clone(&self.probes),
                Arc::clone(&self.tables),
                cold,
            )));
        }
    }
}

/// Probes a batch of requests in order on ONE blocking task (with one probe permit).
async fn probe_batch(
    probes: Arc<Semaphore>,
    tables: Arc<Tablebase>,
    batch: Vec<(u64, pb::ProbeRequest)>,
) -> Vec<Answer> {
    let keys: Vec<(u64, String)> = batch.iter().map(|(i, r)| (*i, r.fen.clone())).collect();
    let failed = |e: ServiceError| {
        let status = Status::from(e);
        keys.iter()
            .map(|(i, fen)| {
                let error = pb::probe_many_response::Outcome::Error(convert::item_error(&status));
                Ok(pb::ProbeManyResponse {
                    index: *i,
                    request_fen: fen.clone(),
                    outcome: Some(error),
                })
            })
            .collect()
    };
    let permit = match acquire(&probes).await {
        Ok(permit) => permit,
        Err(e) => return failed(e),
    };
    let work = spawn_probe(permit, tables, move |tables| {
        Ok(batch
            .into_iter()
            .map(|(index, req)| Ok(item(index, req.fen.clone(), probe(tables, &req))))
            .collect())
    });
    match join(work).await {
        Ok(answers) => answers,
        Err(e) => failed(e),
    }
}

impl Stream for ProbeManyAnswers {
    type Item = Answer;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Answer>> {
        let this = &mut *self;
        loop {
            if let Some(answer) = this.ready.pop_front() {
                return Poll::Ready(Some(answer));
            }
            if this.finished {
                return Poll::Ready(None);
            }
            if let Some(work) = &mut this.blocking {
                let answers = std::task::ready!(work.as_mut().poll(cx));
                this.blocking = None;
                this.ready.extend(answers);
                continue;
            }
            if let Some(end) = this.end.take() {
                this.finished = true;
                if let End::Status(status) = end {
                    this.ready.push_back(Err(status));
                }
                continue;
            }
            if this.draining.as_mut().poll(cx).is_ready() {
                this.end = Some(End::Status(ServiceError::ShuttingDown.into()));
                continue;
            }
            this.read_batch(cx);
            if this.ready.is_empty() && this.blocking.is_none() && this.end.is_none() {
                // The inbound stream and the drain signal will wake us.
                return Poll::Pending;
            }
        }
    }
}

/// Tells a `Solve` call's client of each refuted bound; stops the search once the client
/// has gone.
struct SolveUpdates {
    tx: tokio::sync::mpsc::Sender<Result<pb::SolveUpdate, Status>>,
    stop: Arc<AtomicBool>,
    start: std::time::Instant,
}

impl SolveProgress for SolveUpdates {
    fn depth_done(&self, plies: u32, nodes: u64, _elapsed: std::time::Duration) {
        let update = pb::SolveUpdate {
            update: Some(pb::solve_update::Update::Progress(pb::SolveProgress {
                plies,
                nodes,
                seconds: self.start.elapsed().as_secs_f64(),
            })),
        };
        match self.tx.try_send(Ok(update)) {
            // a slow reader misses a progress message, not the result
            Ok(()) | Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {}
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }
}

#[tonic::async_trait]
impl pb::tablebase_server::Tablebase for TablebaseService {
    type SolveStream = Pin<Box<dyn Stream<Item = Result<pb::SolveUpdate, Status>> + Send>>;

    /// Runs the search on a blocking thread of its own (one of `max_solves`), sending
    /// progress and then the answer over a channel; a client that goes away, or the
    /// server's shutdown, stops it.
    async fn solve(
        &self,
        request: Request<pb::SolveRequest>,
    ) -> Result<Response<Self::SolveStream>, Status> {
        let req = request.into_inner();
        let tables = self.state.tables()?;
        let pos = position(&tables, &req.fen, &req.rules)?;
        let opts = self.state.solve_options(
            req.max_plies,
            req.time_limit_seconds,
            req.tree_depth,
            None,
        )?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let stop = Arc::new(AtomicBool::new(false));
        let progress = SolveUpdates {
            tx: tx.clone(),
            stop: Arc::clone(&stop),
            start: std::time::Instant::now(),
        };
        let search =
            self.state
                .start_solve(tables, pos, opts, Box::new(progress), Arc::clone(&stop))?;
        let state = Arc::clone(&self.state);
        tokio::spawn(async move {
            // stop the search when the client goes away or the server drains
            let watch = async {
                tokio::select! {
                    () = tx.closed() => {}
                    () = state.drained() => {}
                }
                stop.store(true, Ordering::Relaxed);
                std::future::pending::<()>().await;
            };
            let answer = tokio::select! {
                answer = join(search) => answer,
                () = watch => unreachable!("the watch never ends"),
            };
            let update = answer
                .map(|s| pb::SolveUpdate {
                    update: Some(pb::solve_update::Update::Result(convert::solve_answer(&s))),
                })
                .map_err(Status::from);
            let _ = tx.send(update).await;
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn probe(
        &self,
        request: Request<pb::ProbeRequest>,
    ) -> Result<Response<pb::ProbeResponse>, Status> {
        let req = request.into_inner();
        let tables = self.state.tables()?;
        if let Some(answer) = probe_inline(&tables, &req) {
            return Ok(Response::new(answer?));
        }
        let answer = self.blocking(move |tables| probe(tables, &req)).await?;
        Ok(Response::new(answer))
    }

    type ProbeManyStream = ProbeManyStream;

    /// See `ProbeManyAnswers` (how a stream of requests is answered).
    async fn probe_many(
        &self,
        request: Request<Streaming<pb::ProbeRequest>>,
    ) -> Result<Response<Self::ProbeManyStream>, Status> {
        let tables = self.state.tables()?;
        let answers = ProbeManyAnswers::new(&self.state, tables, request.into_inner());
        Ok(Response::new(Box::pin(answers)))
    }

    async fn line(
        &self,
        request: Request<pb::LineRequest>,
    ) -> Result<Response<pb::LineResponse>, Status> {
        let req = request.into_inner();
        let answer = self
            .blocking(move |tables| {
                let pos = position(tables, &req.fen, &req.rules)?;
                let start = tables.probe(&pos)?;
                let mut steps = tables.line(&pos)?;
                // the DTZ of the position after each step, where its table has a DTZ file
                for step in &mut steps {
                    let after = Position::from_fen(&step.fen).map_err(|e| {
                        ServiceError::Internal(format!("a line step's FEN {}: {e}", step.fen))
                    })?;
                    if tables.has_dtz_for(&after) {
                        step.dtz = Some(tables.dtz(&after)?);
                    }
                }
                Ok(convert::line_response(&start, &steps))
            })
            .await?;
        Ok(Response::new(answer))
    }

    async fn list_tables(
        &self,
        _request: Request<pb::ListTablesRequest>,
    ) -> Result<Response<pb::ListTablesResponse>, Status> {
        let tables = self
            .blocking(|tables| {
                Ok(tables
                    .tables()?
                    .iter()
                    .map(convert::table_info)
                    .collect::<Vec<_>>())
            })
            .await?;
        Ok(Response::new(pb::ListTablesResponse { tables }))
    }
}

//! The HTTP side of `shatranj-tb serve --http ADDR`: a JSON API in the lichess tablebase
//! shape and the explorer page, served beside the gRPC service from the same process, the
//! same open tables and the same async runtime (see [`serve_with_http`]).
//!
//! Routes (all `GET`):
//!
//! | route | answer |
//! |---|---|
//! | `/api/v1/probe?fen=FEN` | the position and every legal move, best first ([`json::ProbeAnswer`]) |
//! | `/api/v1/line?fen=FEN` | an optimal line to the end of the game ([`json::LineAnswer`]) |
//! | `/api/v1/tables` | the figures of every table, as `info --json` |
//! | `/api/v1/solve?fen=FEN&plies=N&time=SECS` | the problem solver's answer, as `solve --json` (bounded by the server's limits and the request timeout; 429 when as many searches as allowed run) |
//! | `/healthz` | `{"status": "SERVING"}` (200) once the tables are open, else `NOT_SERVING` (503) |
//! | `/` | the explorer page, its script and style sheet inlined, embedded in the binary |
//!
//! A FEN may separate its fields with spaces (`%20` or `+`) or underscores; an optional
//! `rules=` is checked against the server's rule set. Errors are JSON
//! (`{"error": message, "status": code}`): 400 for a bad request, FEN or illegal position
//! or a position with too many men, 404 for a missing table (the message names the command
//! that makes it) or an unknown route, 405 for another method, 500 for a damaged table file
//! or an internal error, 503 while the tables are not open yet, when a file cannot be
//! read, on shutdown, or when an answer takes longer than the request timeout.
//!
//! Where the work runs, as for gRPC: a probe answered from memory (open files, cached
//! blocks) runs on the async runtime; one that must read a table file, and every line and
//! table listing, runs on the blocking pool under the server's one budget of blocking
//! probes ([`crate::service::Limits::max_blocking_probes`]).

mod json;

use std::error::Error as StdError;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::Router;
use axum::extract::{RawQuery, State as Extract};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt as _;
use serde::Serialize;
use tokio::net::TcpListener;

use crate::probe::ProbeError;
use crate::probe::Tablebase;
use crate::service::handler::{State, position};
use crate::service::{self, Front, Limits, ServeError, ServiceError};
use crate::solve;

/// What the handlers share.
struct App {
    state: Arc<State>,
    timeout: Duration,
}

type Shared = Arc<App>;

/// [`service::serve_with`], and with `http` the HTTP JSON API and the explorer page on
/// that listener too (the routes above): the same tables, the same budget of blocking
/// probes, the same health (`/healthz` answers 503 until the tables are open and once
/// shutdown begins) and the same shutdown, on the same runtime.
pub async fn serve_with_http<T, E>(
    limits: &Limits,
    tables: T,
    listener: TcpListener,
    http: Option<TcpListener>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError>
where
    T: Future<Output = Result<Arc<Tablebase>, E>>,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    let front = http.map(|listener| -> Front {
        Box::new(move |state, timeout, stop| {
            tokio::spawn(serve(listener, state, timeout, async move {
                let _ = stop.await;
            }))
        })
    });
    service::serve_with_front(limits, tables, listener, front, shutdown).await
}

/// Serves the HTTP routes on `listener` until `shutdown` completes, then lets the
/// requests in flight finish.
async fn serve(
    listener: TcpListener,
    state: Arc<State>,
    timeout: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = listener.tap_io(|tcp| {
        // Small answers: send them at once rather than waiting for an acknowledgement.
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router(state, timeout))
        .with_graceful_shutdown(shutdown)
        .await
}

fn router(state: Arc<State>, timeout: Duration) -> Router {
    let app = Arc::new(App { state, timeout });
    Router::new()
        .route("/", get(page))
        .route("/favicon.svg", get(icon))
        .route("/healthz", get(healthz))
        .route("/api/v1/probe", get(probe))
        .route("/api/v1/line", get(line))
        .route("/api/v1/tables", get(tables))
        .route("/api/v1/solve", get(solve))
        // `/api/v1/solve?fen=...&plies=N` (mate-in-N problems, bounded by the server's
        // limits) is to be added here with the problem solver.
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(app)
}

// ---- the page -------------------------------------------------------------------------

/// The page, with its style sheet and script inlined (one request before the first paint;
/// the three files are kept apart in the sources), built once.
static PAGE: LazyLock<String> = LazyLock::new(|| {
    include_str!("assets/index.html")
        .replacen("/*EXPLORER_CSS*/", include_str!("assets/explorer.css"), 1)
        .replacen("/*EXPLORER_JS*/", include_str!("assets/explorer.js"), 1)
});
const ICON: &str = include_str!("assets/favicon.svg");

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

async fn page() -> Response {
    asset("text/html; charset=utf-8", PAGE.as_str())
}

async fn icon() -> Response {
    asset("image/svg+xml", ICON)
}

// ---- JSON answers ---------------------------------------------------------------------

/// A failed request: its HTTP status and message.
#[derive(Debug)]
struct Failure {
    status: StatusCode,
    message: String,
}

impl Failure {
    fn bad_request(message: impl Into<String>) -> Failure {
        Failure {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Failure {
        // the gRPC code says what kind of failure it is (one mapping, in convert.rs)
        let status = match e.code() {
            tonic::Code::InvalidArgument | tonic::Code::FailedPrecondition => {
                StatusCode::BAD_REQUEST
            }
            tonic::Code::NotFound => StatusCode::NOT_FOUND,
            tonic::Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            tonic::Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

impl From<ProbeError> for Failure {
    fn from(e: ProbeError) -> Failure {
        ServiceError::Probe(e).into()
    }
}

/// A JSON body with its status; API answers may be read from any origin (as lichess's).
fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, Failure> {
    serde_json::to_vec(value).map_err(|e| Failure {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: format!("internal error: cannot write the answer: {e}"),
    })
}

fn failure_response(f: &Failure) -> Response {
    let body = json::ErrorAnswer {
        error: &f.message,
        status: f.status.as_u16(),
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    json_response(f.status, bytes)
}

impl App {
    /// Runs `work` (which gives a JSON body) within the request timeout and answers.
    async fn answer(&self, work: impl Future<Output = Result<Vec<u8>, Failure>>) -> Response {
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(body)) => json_response(StatusCode::OK, body),
            Ok(Err(f)) => failure_response(&f),
            Err(_) => failure_response(&Failure {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: format!(
                    "no answer within {} s; retry later",
                    self.timeout.as_secs_f64()
                ),
            }),
        }
    }
}

/// The parameters of a query string, decoded.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(raw: Option<&str>) -> Result<Query, Failure> {
        let mut pairs = Vec::new();
        for part in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            pairs.push((decode(k)?, decode(v)?));
        }
        Ok(Query(pairs))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `fen` parameter, with underscores read as spaces (as lichess accepts).
    fn fen(&self) -> Result<String, Failure> {
        match self.get("fen") {
            Some(f) if !f.trim().is_empty() => Ok(f.replace('_', " ")),
            _ => Err(Failure::bad_request(
                "missing parameter 'fen' (e.g. ?fen=8/8/8/3k4/8/1KQ5/8/q7_w_-_-_0_1)",
            )),
        }
    }
}

/// Decodes one component of a query string: `+` is a space, `%XX` a byte; the result must
/// be UTF-8.
fn decode(s: &str) -> Result<String, Failure> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| {
                        Failure::bad_request(format!("bad percent-encoding in query: '{s}'"))
                    })?;
                out.push(hex);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| Failure::bad_request("the query is not UTF-8"))
}

async fn probe(Extract(app): Extract<Shared>, RawQuery(raw): RawQuery) -> Response {
    let work = async {
        let query = Query::parse(raw.as_deref())?;
        let fen = query.fen()?;
        let rules = query.get("rules").unwrap_or("").to_string();
        let tables = app.state.tables()?;
        let pos = position(&tables, &fen, &rules)?;
        // From memory on the runtime when possible (microseconds, no I/O): DTZ is read
        // from the files only, so not where the table has a DTZ file, unless the rules
        // decide the position alone (a bare side, after every move too: no file) ...
        let decided = crate::Material::from_board(pos.board()).is_decided_by_rules();
        if decided || !tables.has_dtz_for(&pos) {
            if let Some(p) = tables.probe_moves_cached(&pos)? {
                let dtz = json::dtz_view(&tables, &pos, &p)?;
                return to_json(&json::probe(&pos, tables.rules(), &p, dtz.as_ref()));
            }
        }
        // ... else on the blocking pool, under the shared budget.
        let body = app
            .state
            .blocking(move |tb| {
                let p = tb.probe_moves(&pos)?;
                let dtz = json::dtz_view(tb, &pos, &p)?;
                to_json(&json::probe(&pos, tb.rules(), &p, dtz.as_ref()))
                    .map_err(|f| ServiceError::Internal(f.message))
            })
            .await?;
        Ok(body)
    };
    app.answer(work).await
}

async fn line(Extract(app): Extract<Shared>, RawQuery(raw): RawQuery) -> Response {
    let work = async {
        let query = Query::parse(raw.as_deref())?;
        let fen = query.fen()?;
        let rules = query.get("rules").unwrap_or("").to_string();
        let body = app
            .state
            .blocking(move |tb| {
                let pos = position(tb, &fen, &rules)?;
                let value = tb.value(&pos)?;
                let end = pos.outcome(tb.rules()).map(|o| o.reason());
                let steps = tb.line(&pos)?;
                let dtz_of = |p: &crate::Position| {
                    if tb.has_dtz_for(p) {
                        tb.dtz(p).map(Some)
                    } else {
                        Ok(None)
                    }
                };
                let dtz = dtz_of(&pos)?;
                let mut step_dtz = Vec::with_capacity(steps.len());
                for step in &steps {
                    let after = crate::Position::from_fen(&step.fen)
                        .map_err(|e| ServiceError::Internal(format!("a line step's FEN: {e}")))?;
                    step_dtz.push(dtz_of(&after)?);
                }
                let answer = json::line(&pos, tb.rules(), (value, dtz), end, &steps, &step_dtz)
                    .map_err(ServiceError::Internal)?;
                to_json(&answer).map_err(|f| ServiceError::Internal(f.message))
            })
            .await?;
        Ok(body)
    };
    app.answer(work).await
}

async fn tables(Extract(app): Extract<Shared>) -> Response {
    let work = async {
        let body = app
            .state
            .blocking(|tb| {
                let infos = tb.tables()?;
                to_json(&json::tables(&infos)).map_err(|f| ServiceError::Internal(f.message))
            })
            .await?;
        Ok(body)
    };
    app.answer(work).await
}

/// Sets a search's stop flag when dropped: a request that times out or whose client goes
/// away ends its search.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

async fn solve(Extract(app): Extract<Shared>, RawQuery(raw): RawQuery) -> Response {
    let work = async {
        let query = Query::parse(raw.as_deref())?;
        let fen = query.fen()?;
        let rules = query.get("rules").unwrap_or("").to_string();
        let number = |key: &str| -> Result<Option<f64>, Failure> {
            query
                .get(key)
                .map(|v| {
                    v.parse::<f64>().map_err(|_| {
                        Failure::bad_request(format!("parameter '{key}' is not a number: '{v}'"))
                    })
                })
                .transpose()
        };
        let plies = match number("plies")? {
            None => 0,
            Some(p) if p >= 1.0 && p <= f64::from(solve::MAX_PLIES) && p.fract() == 0.0 => p as u32,
            Some(p) => {
                return Err(Failure::bad_request(format!(
                    "parameter 'plies' must be a whole number from 1 to {}, not {p}",
                    solve::MAX_PLIES
                )));
            }
        };
        let tree_depth = number("tree_depth")?.map(|d| d.clamp(0.0, 8.0) as u32);
        let tables = app.state.tables()?;
        let pos = position(&tables, &fen, &rules)?;
        // leave the answer time to travel within the request timeout
        let cap = app.timeout.mul_f64(0.9);
        let opts = app
            .state
            .solve_options(plies, number("time")?, tree_depth, Some(cap))?;
        let stop = Arc::new(AtomicBool::new(false));
        let _guard = StopOnDrop(Arc::clone(&stop));
        let search = app.state.start_solve(
            tables,
            pos,
            opts,
            Box::new(solve::NoProgress),
            Arc::clone(&stop),
        )?;
        let solution = search
            .await
            .map_err(|e| ServiceError::Internal(format!("search worker failed: {e}")))??;
        to_json(&solution.to_json())
    };
    app.answer(work).await
}

async fn healthz(Extract(app): Extract<Shared>) -> Response {
    let (status, word) = if app.state.serving() {
        (StatusCode::OK, "SERVING")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "NOT_SERVING")
    };
    json_response(status, format!("{{\"status\":\"{word}\"}}").into_bytes())
}

async fn not_found(uri: Uri) -> Response {
    failure_response(&Failure {
        status: StatusCode::NOT_FOUND,
        message: format!(
            "no such route: {} (see /api/v1/probe, /api/v1/line, /api/v1/tables, /api/v1/solve, /healthz, /)",
            uri.path()
        ),
    })
}

async fn method_not_allowed() -> Response {
    failure_response(&Failure {
        status: StatusCode::METHOD_NOT_ALLOWED,
        message: "only GET is served".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_spaces_underscores_and_percent_escapes() {
        let q = Query::parse(Some("fen=8/8/8/3k4/8/1KQ5/8/q7%20w+-_-_0_1&x=%41")).unwrap();
        assert_eq!(q.fen().unwrap(), "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1");
        assert_eq!(q.get("x"), Some("A"));
        assert!(Query::parse(Some("fen=%4")).is_err());
        assert!(Query::parse(Some("fen=%zz")).is_err());
        assert!(Query::parse(Some("fen=%ff")).is_err());
        assert_eq!(
            Query::parse(None).unwrap().fen().unwrap_err().status,
            StatusCode::BAD_REQUEST
        );
    }
}

//! # shatranj-tb
//!
//! Endgame tablebases for shatranj, the Persian and Arabic ancestor of chess: the rules,
//! a retrograde generator, compressed table files, a probe library, a command line and a
//! gRPC service.
//!
//! Piece letters follow Fairy-Stockfish: `K` shah, `Q` ferz, `B` alfil, `N` knight,
//! `R` rook, `P` pawn (`F` and `A`/`E` are accepted on input for ferz and alfil).
//!
//! ```
//! use shatranj_tb::{Position, RuleSet};
//! let pos = Position::from_fen("8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1")?;
//! assert_eq!(pos.legal_moves().len(), 9); // as Fairy-Stockfish counts
//! assert_eq!(pos.outcome(RuleSet::default()), None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(unsafe_code)]

// The vocabulary and the rules are used through the names re-exported below; the attack
// tables, the SAN writer and the figures' types are implementation details.
pub(crate) mod attacks;
mod bitboard;
mod board;
mod color;
pub mod fen;
pub mod ffi;
pub mod format;
pub mod generate;
#[cfg(feature = "service")]
pub mod http;
pub mod index;
pub mod material;
mod position;
mod prefetch;
pub mod probe;
pub mod retro;
pub mod role;
pub mod rules;
mod san;
#[cfg(feature = "service")]
pub mod service;
pub mod solve;
mod square;
mod stats;
mod value;

pub use bitboard::Bitboard;
pub use board::Board;
pub use color::{ByColor, Color};
pub use fen::{Fen, FenError, ParseFenError};
pub use material::Material;
pub use position::{Move, MoveList, PlayError, Position, PositionError, Setup};
pub use retro::UnMove;
pub use role::{Piece, Role};
pub use rules::{BareKing, EndReason, MoveRule, Outcome, RuleSet, Stalemate};
pub use square::Square;
pub use value::{Category, Dtz, Value, Wdl};

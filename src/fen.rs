//! FEN reading and writing.
//!
//! Letters follow Fairy-Stockfish: `K` shah, `Q` ferz, `B` alfil, `N` knight, `R` rook,
//! `P` pawn; upper case White, lower case Black. On input `F` (ferz) and `A` or `E`
//! (alfil) are accepted as well, in either case.
//!
//! Leniencies: only the board and the side to move are required; the castling and en
//! passant fields, if present, must be `-` (shatranj has neither); the halfmove clock and
//! move number, if present, must be numbers. `startpos` names the start position.

use std::fmt::{self, Write as _};

use crate::board::Board;
use crate::color::Color;
use crate::position::{Move, PlayError, Position, PositionError, Setup};
use crate::role::Piece;
use crate::square::Square;

/// The FEN of the start position.
pub const START_FEN: &str = "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1";

/// Why a FEN could not be read. Each message names the field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseFenError {
    Empty,
    /// The board field, with the reason.
    Board(String),
    MissingTurn,
    Turn(String),
    Castling(String),
    EnPassant(String),
    Halfmoves(String),
    Fullmoves(String),
    TooManyFields,
}

impl fmt::Display for ParseFenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseFenError::Empty => f.write_str("invalid FEN: empty"),
            ParseFenError::Board(why) => write!(f, "invalid FEN: board field: {why}"),
            ParseFenError::MissingTurn => f.write_str(
                "invalid FEN: side-to-move field missing (expected w or b after the board)",
            ),
            ParseFenError::Turn(s) => {
                write!(f, "invalid FEN: side-to-move field '{s}' (expected w or b)")
            }
            ParseFenError::Castling(s) => write!(
                f,
                "invalid FEN: castling field '{s}' (shatranj has no castling: expected -)"
            ),
            ParseFenError::EnPassant(s) => write!(
                f,
                "invalid FEN: en passant field '{s}' (shatranj pawns never step twice: expected -)"
            ),
            ParseFenError::Halfmoves(s) => {
                write!(f, "invalid FEN: halfmove clock '{s}' is not a number")
            }
            ParseFenError::Fullmoves(s) => {
                write!(f, "invalid FEN: move number '{s}' is not a positive number")
            }
            ParseFenError::TooManyFields => f.write_str("invalid FEN: more than six fields"),
        }
    }
}

impl std::error::Error for ParseFenError {}

/// A FEN that could not be turned into a legal position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenError {
    Parse(ParseFenError),
    Position(PositionError),
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::Parse(e) => e.fmt(f),
            FenError::Position(e) => e.fmt(f),
        }
    }
}

/// Transparent, like thiserror's `#[error(transparent)]`: Display already shows the inner
/// error, so `source` skips it (else an error chain printed with `{:#}` repeats it).
impl std::error::Error for FenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FenError::Parse(e) => e.source(),
            FenError::Position(e) => e.source(),
        }
    }
}

impl From<ParseFenError> for FenError {
    fn from(e: ParseFenError) -> FenError {
        FenError::Parse(e)
    }
}

impl From<PositionError> for FenError {
    fn from(e: PositionError) -> FenError {
        FenError::Position(e)
    }
}

/// A parsed FEN: an unvalidated setup. Display writes it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fen(pub Setup);

impl Fen {
    /// Reads a FEN (see the module docs for what is accepted).
    pub fn parse(s: &str) -> Result<Fen, ParseFenError> {
        let s = s.trim();
        if s == "startpos" {
            return Fen::parse(START_FEN);
        }
        let mut fields = s.split_ascii_whitespace();
        let board_field = fields.next().ok_or(ParseFenError::Empty)?;
        let board = parse_board(board_field)?;
        let turn = match fields.next() {
            None => return Err(ParseFenError::MissingTurn),
            Some("w" | "W") => Color::White,
            Some("b" | "B") => Color::Black,
            Some(other) => return Err(ParseFenError::Turn(other.to_string())),
        };
        let mut setup = Setup {
            board,
            turn,
            halfmoves: 0,
            fullmoves: 1,
        };
        if let Some(c) = fields.next() {
            if c != "-" {
                return Err(ParseFenError::Castling(c.to_string()));
            }
        }
        if let Some(ep) = fields.next() {
            if ep != "-" {
                return Err(ParseFenError::EnPassant(ep.to_string()));
            }
        }
        if let Some(h) = fields.next() {
            setup.halfmoves = h
                .parse()
                .map_err(|_| ParseFenError::Halfmoves(h.to_string()))?;
        }
        if let Some(n) = fields.next() {
            setup.fullmoves = n
                .parse()
                .ok()
                .filter(|&n: &u32| n > 0)
                .ok_or_else(|| ParseFenError::Fullmoves(n.to_string()))?;
        }
        if fields.next().is_some() {
            return Err(ParseFenError::TooManyFields);
        }
        Ok(Fen(setup))
    }

    /// The FEN of a position (move counters 0 and 1).
    #[must_use]
    pub fn from_position(pos: &Position) -> Fen {
        Fen(pos.to_setup())
    }

    /// Validates the setup.
    pub fn into_position(self) -> Result<Position, PositionError> {
        Position::from_setup(&self.0)
    }

    /// The FEN written with `F` for the ferz and `A` for the alfil.
    #[must_use]
    pub fn to_string_fa(&self) -> String {
        self.write(true)
    }

    fn write(&self, fa: bool) -> String {
        // The letters square by square from the bitboards (servers write one FEN a probe:
        // cheaper than asking each square for its piece).
        let board = &self.0.board;
        // the placement, rank by rank from the occupied squares (servers write one FEN a
        // probe): at most 8 characters a rank and 7 slashes
        let mut placement = [0u8; 71];
        let mut n = 0;
        for rank in (0..8u32).rev() {
            let mut occupied = (board.occupied().0 >> (rank * 8)) & 0xff;
            let mut file = 0;
            while occupied != 0 {
                let f = occupied.trailing_zeros();
                occupied &= occupied - 1;
                if f > file {
                    placement[n] = b'0' + (f - file) as u8;
                    n += 1;
                }
                let p = board
                    .piece_at(Square::from_coords(f, rank))
                    .expect("an occupied square");
                let c = if fa {
                    p.role.upper_char_fa()
                } else {
                    p.role.upper_char()
                } as u8;
                placement[n] = match p.color {
                    Color::White => c,
                    Color::Black => c.to_ascii_lowercase(),
                };
                n += 1;
                file = f + 1;
            }
            if file < 8 {
                placement[n] = b'0' + (8 - file) as u8;
                n += 1;
            }
            if rank > 0 {
                placement[n] = b'/';
                n += 1;
            }
        }
        let mut out = String::with_capacity(n + 12);
        out.push_str(std::str::from_utf8(&placement[..n]).expect("ASCII"));
        out.push(' ');
        out.push(self.0.turn.char());
        if (self.0.halfmoves, self.0.fullmoves) == (0, 1) {
            out.push_str(" - - 0 1");
        } else {
            // Writing into a String cannot fail.
            let _ = write!(out, " - - {} {}", self.0.halfmoves, self.0.fullmoves);
        }
        out
    }
}

impl fmt::Display for Fen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.write(false))
    }
}

impl Position {
    /// Reads and validates a FEN.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        Ok(Fen::parse(fen)?.into_position()?)
    }

    /// The FEN of this position (Fairy-Stockfish letters).
    #[must_use]
    pub fn fen(&self) -> String {
        Fen::from_position(self).write(false)
    }

    /// The start position of shatranj (shahs on the d-file, ferzes on the e-file).
    #[must_use]
    pub fn startpos() -> Position {
        Fen::parse("rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1")
            .expect("start FEN is valid")
            .into_position()
            .expect("start position is legal")
    }

    /// Plays a move given in UCI notation, if it is legal.
    pub fn play_uci(&self, uci: &str) -> Result<(Move, Position), PlayError> {
        let uci_lower = uci.trim().to_ascii_lowercase();
        // accept the F/A convention's promotion letter too
        let wanted = uci_lower.trim_end_matches('f').to_string();
        self.legal_moves()
            .iter()
            .find(|m| {
                let s = m.to_uci();
                s == uci_lower || (m.promotion && s == format!("{wanted}q"))
            })
            .map(|m| (*m, self.play_unchecked(m)))
            .ok_or_else(|| PlayError {
                uci: uci.to_string(),
                fen: Fen::from_position(self).to_string(),
            })
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", Fen::from_position(self))
    }
}

fn parse_board(field: &str) -> Result<Board, ParseFenError> {
    let err = |why: String| ParseFenError::Board(why);
    // One pass over the bytes: servers read one FEN a request.
    let count = 1 + field.bytes().filter(|&b| b == b'/').count();
    if count != 8 {
        return Err(err(format!("{count} ranks, expected 8 separated by /")));
    }
    let mut board = Board::empty();
    let (mut rank, mut file) = (7u32, 0u32);
    for (i, b) in field.bytes().enumerate() {
        match b {
            b'/' => {
                if file != 8 {
                    return Err(err(format!(
                        "rank {} has {file} squares, expected 8",
                        rank + 1
                    )));
                }
                rank -= 1;
                file = 0;
            }
            b'1'..=b'8' => {
                file += u32::from(b - b'0');
                if file > 8 {
                    return Err(err(format!("rank {} has more than 8 squares", rank + 1)));
                }
            }
            b'0' | b'9' => {
                return Err(err(format!(
                    "bad empty-square count '{}' on rank {}",
                    char::from(b),
                    rank + 1
                )));
            }
            _ => {
                // a letter; byte `i` starts a character, as every byte before it is ASCII
                let c = field[i..]
                    .chars()
                    .next()
                    .unwrap_or(char::REPLACEMENT_CHARACTER);
                let Some(piece) = Piece::from_char(c) else {
                    return Err(err(format!(
                        "unknown piece letter '{c}' (K, Q or F, B or A or E, N, R, P)"
                    )));
                };
                if file >= 8 {
                    return Err(err(format!("rank {} has more than 8 squares", rank + 1)));
                }
                // files only advance: each square is filled at most once
                board.put_on_empty(Square::from_coords(file, rank), piece);
                file += 1;
            }
        }
    }
    if file != 8 {
        return Err(err(format!(
            "rank {} has {file} squares, expected 8",
            rank + 1
        )));
    }
    Ok(board)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for fen in [
            START_FEN,
            "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1",
            "8/1P4k1/8/8/8/5q2/6P1/4K3 w - - 0 1",
        ] {
            assert_eq!(Fen::parse(fen).unwrap().to_string(), fen);
        }
    }

    #[test]
    fn aliases_and_short_form() {
        let a = Fen::parse("7k/7p/8/8/3F4/8/8/K4A2 w").unwrap();
        let b = Fen::parse("7k/7p/8/8/3Q4/8/8/K4E2 w - - 0 1").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string_fa(), "7k/7p/8/8/3F4/8/8/K4A2 w - - 0 1");
    }

    #[test]
    fn rejections_name_the_field() {
        let cases = [
            ("", "empty"),
            ("8/8/8/8/8/8/8 w", "board field"),
            ("8/8/8/8/8/8/8/9 w", "board field"),
            ("8/8/8/8/8/8/8/X7 w", "unknown piece letter"),
            ("8/8/8/8/8/8/8/K6k", "side-to-move"),
            ("8/8/8/8/8/8/8/K6k x", "side-to-move"),
            ("8/8/8/8/8/8/8/K6k w KQ -", "castling"),
            ("8/8/8/8/8/8/8/K6k w - e3", "en passant"),
            ("8/8/8/8/8/8/8/K6k w - - x", "halfmove"),
            ("8/8/8/8/8/8/8/K6k w - - 0 0", "move number"),
            ("8/8/8/8/8/8/8/K6k w - - 0 1 9", "more than six"),
        ];
        for (fen, needle) in cases {
            let e = Fen::parse(fen).unwrap_err().to_string();
            assert!(e.contains(needle), "{fen}: {e}");
        }
    }

    #[test]
    fn fen_error_is_transparent() {
        use std::error::Error;
        let e = Position::from_fen("4k3/8/8/8/8/8/8/K3R3 w").unwrap_err();
        assert!(e.source().is_none());
        assert_eq!(
            e.to_string(),
            "illegal position: the side not to move is in check"
        );
    }

    #[test]
    fn illegal_positions_are_named() {
        let cases = [
            ("8/8/8/8/8/8/8/K7 w", "no shah"),
            ("8/8/8/8/8/8/8/KK5k w", "more than one shah"),
            ("8/8/8/3Kk3/8/8/8/8 w", "adjacent"),
            ("4k3/8/8/8/8/8/8/K3R3 w", "not to move is in check"),
            ("P3k3/8/8/8/8/8/8/K7 w", "pawn on a8"),
            ("k7/8/RRRRRRRR/RRRRRRRR/8/8/8/K7 w", "too many pieces"),
        ];
        for (fen, needle) in cases {
            match Position::from_fen(fen) {
                Err(FenError::Position(e)) => {
                    assert!(e.to_string().contains(needle), "{fen}: {e}")
                }
                other => panic!("{fen}: expected a position error, got {other:?}"),
            }
        }
        // seven rooks beside the shah are many, but legal
        let crowded = Position::from_fen("k7/8/8/8/8/8/8/KRRRRRRR w").unwrap();
        assert_eq!(crowded.board().count(Color::White), 8);
    }
}

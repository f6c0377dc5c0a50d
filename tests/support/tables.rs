//! The shared test tables: every table up to 4 men for the default rules, a few 4-man
//! tables for each other rule set, and a few 5-man tables, generated once and shared by
//! the test binaries.
//!
//! They live in `target/test-tables.d/KEY/`, where KEY is a hash of the sources that
//! decide the bytes of a table (the library under `src/` apart from the CLI, the servers,
//! the solver and the C interface, and `Cargo.lock`, which pins zstd). A change to the
//! generator therefore gets a fresh folder, and the checks that judge the generator
//! (verify, the MANIFEST, the Python and gRPC suites) see tables it wrote, never ones an
//! older generator left in a warm `target/`. Older keys are removed when a new one is
//! made. Within one key, generation keeps tables that are present and intact, so later
//! test binaries reuse them; files are written to temporary names and renamed, so
//! concurrent test binaries cannot see half a table.
//!
//! The stable names `target/test-tables` (default rules, 4 men) and `target/test-tables-5`
//! are symbolic links to the current key's folders, for the suites outside Rust
//! (`scripts/test` passes them on).

#![allow(dead_code)] // each test binary uses part of this

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use shatranj_tb::generate::NoProgress;
use shatranj_tb::generate::files::generate_into;
use shatranj_tb::{Material, RuleSet};

/// Library sources that do not take part in generating or writing a table: changing
/// them keeps the test tables.
const NOT_TABLE_INPUTS: [&str; 6] = ["cli", "http", "service", "solve", "ffi.rs", "main.rs"];

/// `target/`.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .to_path_buf()
}

/// FNV-1a, 64 bits: stable across runs and toolchains.
fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
}

fn hash_tree(hash: &mut u64, root: &Path, dir: &Path) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let rel = path.strip_prefix(root).expect("under the root");
        if dir == root && NOT_TABLE_INPUTS.iter().any(|skip| rel == Path::new(skip)) {
            continue;
        }
        if path.is_dir() {
            hash_tree(hash, root, &path);
        } else {
            fnv1a(hash, rel.to_string_lossy().as_bytes());
            fnv1a(hash, &[0]);
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            fnv1a(hash, &(bytes.len() as u64).to_le_bytes());
            fnv1a(hash, &bytes);
        }
    }
}

/// The hash of the generator's inputs, as 16 hex digits.
pub fn generator_key() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut hash = 0xcbf2_9ce4_8422_2325;
        let src = manifest.join("src");
        hash_tree(&mut hash, &src, &src);
        let lock = std::fs::read(manifest.join("Cargo.lock")).unwrap_or_default();
        fnv1a(&mut hash, &lock);
        format!("{hash:016x}")
    })
}

/// `target/test-tables.d/KEY/`, created on first use; the folders of other keys are
/// removed then.
fn key_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = target_dir().join("test-tables.d");
        let dir = root.join(generator_key());
        if !dir.exists() {
            if let Ok(entries) = std::fs::read_dir(&root) {
                for entry in entries.flatten() {
                    if entry.file_name() != generator_key() {
                        // best effort: another key's folder, of no use to these sources
                        let _ = std::fs::remove_dir_all(entry.path());
                    }
                }
            }
        }
        std::fs::create_dir_all(&dir).expect("a test table directory");
        dir
    })
}

/// Points `target/NAME` at `dir` (a symbolic link, replaced atomically; a real
/// directory left there by an older layout is removed first).
fn link_stable_name(name: &str, dir: &Path) {
    #[cfg(unix)]
    {
        let link = target_dir().join(name);
        if let Ok(meta) = std::fs::symlink_metadata(&link) {
            if meta.is_dir() {
                std::fs::remove_dir_all(&link).expect("removing an old test table folder");
            }
        }
        let relative = dir.strip_prefix(target_dir()).expect("under target/");
        let tmp = target_dir().join(format!(".{name}.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(relative, &tmp).expect("a symbolic link in target/");
        std::fs::rename(&tmp, &link).expect("renaming a symbolic link into place");
    }
    #[cfg(not(unix))]
    let _ = (name, dir);
}

/// The 4-man tables generated for a rule set other than the default (with the tables
/// they depend on, which adds KQvKQ): a pawnless table whose captures bare a king
/// (KRvKN), one of the leapers alone (KNvKB), and a pawn table with its promotion
/// (KQvKP). The default set has all 15, verified whole; these cover each kind of table
/// under each other rule set at a fifth of the cost of all 15 in the test build.
pub const OTHER_RULES_MATERIALS: [&str; 3] = ["KRvKN", "KNvKB", "KQvKP"];

/// The directory of the 4-man tables of `rules` (all of them for the default rules,
/// [`OTHER_RULES_MATERIALS`] for the others), generated on first use.
pub fn tables_for(rules: RuleSet) -> &'static Path {
    static DIRS: [OnceLock<PathBuf>; 8] = [const { OnceLock::new() }; 8];
    DIRS[usize::from(rules.code())].get_or_init(|| {
        let dir = key_dir().join(rules.slug());
        let materials = if rules == RuleSet::default() {
            Material::all_with_tables(4)
        } else {
            OTHER_RULES_MATERIALS
                .map(|m| m.parse().expect("a material"))
                .to_vec()
        };
        generate_into(&dir, &materials, rules, &NoProgress, |_| {})
            .unwrap_or_else(|e| panic!("the 4-man tables of {rules} generate: {e}"));
        if rules == RuleSet::default() {
            link_stable_name("test-tables", &dir);
        }
        dir
    })
}

/// The directory of the default 4-man tables (default rules), generated on first use.
pub fn default_tables() -> &'static Path {
    tables_for(RuleSet::default())
}

/// A directory holding the default 4-man tables and the 5-man tables `materials`
/// (default rules), for tests that compare with a 5-man table: the 4-man files are
/// linked (or copied) from [`default_tables`], the 5-man ones generated on first use.
pub fn five_man_tables(materials: &[Material]) -> PathBuf {
    // one thread at a time: two linking the same file at once would race
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let four = default_tables();
    let dir = key_dir().join("five-man");
    std::fs::create_dir_all(&dir).expect("a test table directory");
    for entry in std::fs::read_dir(four).expect("the 4-man tables") {
        let entry = entry.expect("a directory entry");
        let target = dir.join(entry.file_name());
        if target.exists() || entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        match std::fs::hard_link(entry.path(), &target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // no hard links here: a copy, written beside and renamed into place
            Err(_) => {
                let tmp = dir.join(format!(".{}.copy", entry.file_name().to_string_lossy()));
                std::fs::copy(entry.path(), &tmp).expect("copying a 4-man table");
                std::fs::rename(&tmp, &target).expect("renaming a copied table");
            }
        }
    }
    generate_into(&dir, materials, RuleSet::default(), &NoProgress, |_| {})
        .expect("the 5-man tables generate");
    link_stable_name("test-tables-5", &dir);
    dir
}

/// The legal positions of `material` with `turn` to move, counted by placing its men on
/// every combination of squares and asking [`shatranj_tb::Position::from_board`]: a count
/// of its own, to compare with the `legal` figure the generator writes into a table.
pub fn count_legal_placements(material: Material, turn: shatranj_tb::Color) -> u64 {
    use rayon::prelude::*;
    use shatranj_tb::{Board, Color, Piece, Position, Role, Square};
    let mut men: Vec<Piece> = Vec::new();
    for color in [Color::White, Color::Black] {
        men.push(Piece {
            color,
            role: Role::Shah,
        });
        for role in Role::ALL {
            if role != Role::Shah {
                for _ in 0..material.side(color).count(role) {
                    men.push(Piece { color, role });
                }
            }
        }
    }
    // men of one kind go on increasing squares, so each placement is counted once
    fn place(board: &mut Board, men: &[Piece], at: usize, min: u32, turn: Color) -> u64 {
        if at == men.len() {
            return u64::from(Position::from_board(*board, turn).is_ok());
        }
        let mut total = 0;
        for sq in min..64 {
            let square = Square::new(sq);
            if board.piece_at(square).is_some() {
                continue;
            }
            board.set_piece_at(square, men[at]);
            let next_min = if men.get(at + 1) == Some(&men[at]) {
                sq + 1
            } else {
                0
            };
            total += place(board, men, at + 1, next_min, turn);
            board.remove_piece_at(square);
        }
        total
    }
    (0..64u32)
        .into_par_iter()
        .map(|sq| {
            let mut board = Board::empty();
            board.set_piece_at(Square::new(sq), men[0]);
            let next_min = if men.get(1) == Some(&men[0]) {
                sq + 1
            } else {
                0
            };
            place(&mut board, &men, 1, next_min, turn)
        })
        .sum()
}

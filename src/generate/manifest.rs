//! The `MANIFEST` of a table folder: name, size and CRC-32 of every table file in it.
//!
//! One line a file, sorted by name, after a fixed header, so that the same tables give
//! the same bytes however they were made (one `generate`, or one job a table on many
//! machines followed by `shatranj-tb manifest`).

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::probe::{DTM_EXT, DTZ_EXT, WDL_EXT};

/// The name of the manifest file in a table folder.
pub const MANIFEST: &str = "MANIFEST";

/// The header lines every manifest starts with.
pub const HEADER: &str = "\
# Every table file of this folder, one line a file: name, size in bytes, CRC-32 (hex).
# Generation is deterministic, so the same tables give the same lines. Written by
# `shatranj-tb generate` and `shatranj-tb manifest`.
";

/// The table files of `dir` (`*.tbw`, `*.tbd`; not the hidden temporaries of a
/// generation under way), sorted by name.
pub fn table_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let is_table = [WDL_EXT, DTM_EXT, DTZ_EXT]
            .iter()
            .any(|ext| name.strip_suffix(ext).is_some_and(|s| s.ends_with('.')));
        if is_table && !name.starts_with('.') && entry.file_type()?.is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// The size and CRC-32 of a file, read in pieces (a 5-man DTM file is hundreds of MB).
fn size_and_crc(path: &Path) -> io::Result<(u64, u32)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, hasher.finalize()))
}

/// The text of the manifest of `dir`.
pub fn manifest_text(dir: &Path) -> io::Result<String> {
    let mut text = String::from(HEADER);
    for path in table_files(dir)? {
        let (size, crc) = size_and_crc(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        writeln!(text, "{name} {size} {crc:08x}").expect("writing to a String");
    }
    Ok(text)
}

/// Writes `dir/MANIFEST` (to a temporary name, synced, then renamed into place) and
/// returns its text.
pub fn write_manifest(dir: &Path) -> io::Result<String> {
    let text = manifest_text(dir)?;
    let path = dir.join(MANIFEST);
    let temp = dir.join(format!(".{MANIFEST}.tmp.{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(io::Error::new(
            e.kind(),
            format!("writing {}: {e}", path.display()),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_table_files_sorted_with_size_and_crc() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("KRvKQ.counter-loss.tbw"), b"abc").unwrap();
        std::fs::write(dir.path().join("KBvKB.counter-loss.tbd"), b"").unwrap();
        std::fs::write(dir.path().join(".KBvKB.counter-loss.tbw.tmp.1.0"), b"x").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        std::fs::write(dir.path().join("tbw"), b"x").unwrap();
        let text = write_manifest(dir.path()).unwrap();
        let want = format!(
            "{HEADER}KBvKB.counter-loss.tbd 0 00000000\nKRvKQ.counter-loss.tbw 3 352441c2\n"
        );
        assert_eq!(text, want);
        let on_disk = std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        assert_eq!(on_disk, want);
        // the manifest itself and no temporary are left besides the files
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 6, "{names:?}");
    }
}

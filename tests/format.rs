//! Table file format: round trips, damage, threads, the temp + rename contract.
//!
//! `cargo test --test format -- --ignored --nocapture measure` prints the
//! size/speed measurements behind the defaults in `src/format/write.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use shatranj_tb::format::{
    FormatError, HEADER_LEN, Metric, TableFile, TableMeta, UNUSED, WriteOptions, write_table,
    write_table_with,
};

// ---------------------------------------------------------------- synthetic data

/// Geometric run length with the given mean (>= 1).
fn run_len(rng: &mut StdRng, mean: f64) -> usize {
    let u: f64 = rng.r#gen::<f64>().max(1e-12);
    1 + (u.ln() / (1.0 - 1.0 / mean).ln()) as usize
}

/// WDL-like: three values in long runs (about 60% draws = 1, 25% wins = 2, 10% losses =
/// 0) and 5% of slots UNUSED (illegal positions), runs of mean length 24.
fn wdl_like(n: usize, seed: u64) -> Vec<u16> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n + 1000);
    while v.len() < n {
        let r: f64 = rng.r#gen();
        let value = match r {
            r if r < 0.60 => 1,
            r if r < 0.85 => 2,
            r if r < 0.95 => 0,
            _ => UNUSED,
        };
        let len = run_len(&mut rng, 24.0);
        v.extend(std::iter::repeat_n(value, len));
    }
    v.truncate(n);
    v
}

/// DTM-like: values in `0..=max` skewed toward small ones (exponential, mean `max / 15`),
/// locally correlated (half the runs step by -2..=2 from the previous value), runs of mean
/// length 6, 8% UNUSED.
fn dtm_like(n: usize, seed: u64, max: u16) -> Vec<u16> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n + 1000);
    let mut cur: i32 = 0;
    let mean = f64::from(max) / 15.0;
    while v.len() < n {
        let r: f64 = rng.r#gen();
        let value = if r < 0.08 {
            UNUSED
        } else {
            if r < 0.54 {
                cur = (cur + rng.gen_range(-2..=2)).clamp(0, i32::from(max));
            } else {
                let u: f64 = rng.r#gen::<f64>().max(1e-12);
                cur = ((-u.ln() * mean) as i32).min(i32::from(max));
            }
            cur as u16
        };
        let len = run_len(&mut rng, 6.0);
        v.extend(std::iter::repeat_n(value, len));
    }
    v.truncate(n);
    v
}

fn meta(metric: Metric, material: &str) -> TableMeta {
    TableMeta {
        metric,
        rules_code: 2,
        material: material.into(),
        index_scheme: 0xabcd_0001,
        extra: br#"{"positions":123,"longest":57}"#.to_vec(),
    }
}

/// Opens, verifies and reads every value.
fn read_all(path: &Path) -> Result<Vec<u16>, FormatError> {
    let t = TableFile::open(path)?;
    t.verify_blocks()?;
    (0..t.len()).map(|i| t.get(i)).collect()
}

/// Every used value reads back; UNUSED slots read back as some value of the table.
fn assert_matches(values: &[u16], got: &[u16]) {
    assert_eq!(values.len(), got.len());
    let used: std::collections::HashSet<u16> =
        values.iter().copied().filter(|&v| v != UNUSED).collect();
    for (i, (&want, &have)) in values.iter().zip(got).enumerate() {
        if want == UNUSED {
            assert!(
                used.contains(&have) || (used.is_empty() && have == UNUSED),
                "index {i}: UNUSED slot read back {have}, not a value of the table"
            );
        } else {
            assert_eq!(want, have, "index {i}");
        }
    }
}

fn round_trip(name: &str, meta: &TableMeta, values: &[u16], options: &WriteOptions) -> TableFile {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let stats = write_table_with(&path, meta, values, options).unwrap();
    assert_eq!(stats.values, values.len() as u64);
    assert_eq!(stats.file_bytes, fs::metadata(&path).unwrap().len());
    let got = read_all(&path).unwrap();
    assert_matches(values, &got);
    let t = TableFile::open(&path).unwrap();
    assert_eq!(t.read_all().unwrap(), got, "read whole, as read one by one");
    assert_eq!(t.meta(), meta);
    assert_eq!(t.len(), values.len() as u64);
    assert_eq!(t.path(), path);
    assert_eq!(t.file_len(), stats.file_bytes);
    assert_eq!(t.block_count(), stats.blocks);
    assert!(matches!(
        t.get(values.len() as u64),
        Err(FormatError::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        t.get(u64::MAX),
        Err(FormatError::IndexOutOfRange { .. })
    ));
    // The directory is removed on return; on unix the mapping outlives the name.
    t
}

// ---------------------------------------------------------------- round trips

#[test]
fn empty_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("KvK.wdl");
    let stats = write_table(&path, &meta(Metric::Wdl, "KvK"), &[]).unwrap();
    assert_eq!((stats.values, stats.blocks), (0, 0));
    let t = TableFile::open(&path).unwrap();
    assert_eq!(t.len(), 0);
    assert!(t.is_empty());
    t.verify_blocks().unwrap();
    let err = t.get(0).unwrap_err();
    assert!(matches!(
        err,
        FormatError::IndexOutOfRange {
            index: 0,
            len: 0,
            ..
        }
    ));
    assert!(err.to_string().contains("KvK.wdl"), "{err}");
}

#[test]
fn one_value() {
    for v in [0, 1, 300, UNUSED - 1, UNUSED] {
        let t = round_trip(
            "one",
            &meta(Metric::Dtm, "KQvK"),
            &[v],
            &WriteOptions::default(),
        );
        assert_eq!(t.get(0).unwrap(), v);
    }
}

#[test]
fn sizes_not_multiple_of_block_size() {
    let options = WriteOptions {
        block_bytes: 64, // 256 values per block at 2 bits
        ..WriteOptions::default()
    };
    for n in [1, 255, 256, 257, 511, 1000, 4097] {
        let values: Vec<u16> = (0..n).map(|i| [7u16, 8, 9][(i * 7 / 5) % 3]).collect();
        let t = round_trip("n", &meta(Metric::Wdl, "KRvK"), &values, &options);
        let block_values = 512 / u64::from(t.symbol_bits());
        assert_eq!(t.block_values(), block_values);
        assert_eq!(
            u64::from(t.block_count()),
            (n as u64).div_ceil(block_values)
        );
        assert_eq!(t.symbol_bits(), if n == 1 { 1 } else { 2 });
    }
    // Default block size, just past one and two blocks.
    for n in [131_072 + 1, 2 * 131_072 + 99] {
        let values = wdl_like(n, n as u64);
        let t = round_trip(
            "n",
            &meta(Metric::Wdl, "KRvK"),
            &values,
            &WriteOptions::default(),
        );
        assert_eq!(t.block_values(), 131_072);
        assert_eq!(u64::from(t.block_count()), (n as u64).div_ceil(131_072));
    }
}

#[test]
fn every_symbol_width() {
    // 2, 3..4, 5..16, 17..256 and more than 256 distinct values.
    for (distinct, bits) in [
        (1u16, 1u8),
        (2, 1),
        (3, 2),
        (4, 2),
        (5, 4),
        (16, 4),
        (17, 8),
        (256, 8),
        (257, 16),
        (5000, 16),
    ] {
        let mut rng = StdRng::seed_from_u64(u64::from(distinct));
        let values: Vec<u16> = (0..20_000)
            .map(|i| {
                if i < distinct {
                    i * 3
                } else {
                    rng.gen_range(0..distinct) * 3
                }
            })
            .collect();
        let t = round_trip(
            "w",
            &meta(Metric::Dtm, "KRvKN"),
            &values,
            &WriteOptions::default(),
        );
        assert_eq!(t.symbol_bits(), bits, "{distinct} distinct values");
        assert_eq!(t.symbols().len(), usize::from(distinct));
    }
    // Packing can be turned off and still reads back.
    let values = wdl_like(50_000, 1);
    let options = WriteOptions {
        min_symbol_bits: 8,
        ..WriteOptions::default()
    };
    let t = round_trip("w8", &meta(Metric::Wdl, "KRvK"), &values, &options);
    assert_eq!(t.symbol_bits(), 8);
}

#[test]
fn unused_slots() {
    let mut values = wdl_like(300_000, 5);
    values[0] = UNUSED;
    values[299_999] = UNUSED;
    let t = round_trip(
        "u",
        &meta(Metric::Wdl, "KBvK"),
        &values,
        &WriteOptions::default(),
    );
    // Only the three used values are symbols.
    let mut symbols = t.symbols().to_vec();
    symbols.sort_unstable();
    assert_eq!(symbols, [0, 1, 2]);

    let all_unused = vec![UNUSED; 1000];
    let t = round_trip(
        "all",
        &meta(Metric::Wdl, "KBvK"),
        &all_unused,
        &WriteOptions::default(),
    );
    assert_eq!(t.get(999).unwrap(), UNUSED);
}

#[test]
fn wdl_and_dtm_like_tables() {
    let wdl = wdl_like(1_800_000, 11);
    let t = round_trip(
        "KRvKQ.wdl",
        &meta(Metric::Wdl, "KRvKQ"),
        &wdl,
        &WriteOptions::default(),
    );
    assert_eq!(t.symbol_bits(), 2);
    eprintln!("WDL-like 1.8 M values: {} bytes", t.file_len());
    assert!(t.file_len() < 200_000, "{}", t.file_len());

    let dtm = dtm_like(1_800_000, 12, 1000);
    let t = round_trip(
        "KRvKQ.dtm",
        &meta(Metric::Dtm, "KRvKQ"),
        &dtm,
        &WriteOptions::default(),
    );
    assert_eq!(t.symbol_bits(), 16);
    eprintln!("DTM-like 1.8 M values: {} bytes", t.file_len());

    let dtm = dtm_like(1_000_000, 13, 200);
    let t = round_trip(
        "KRvKF.dtm",
        &meta(Metric::Dtm, "KRvKF"),
        &dtm,
        &WriteOptions::default(),
    );
    assert_eq!(t.symbol_bits(), 8);
}

#[test]
fn meta_and_extra_round_trip() {
    let values = wdl_like(10_000, 3);
    let mut m = meta(Metric::Dtm, "KRPvKFAA00012345");
    m.rules_code = 255;
    m.index_scheme = u32::MAX;
    m.extra = (0..1 << 20).map(|i| (i * 31 % 251) as u8).collect();
    round_trip("m", &m, &values, &WriteOptions::default());
    m.extra.clear();
    m.material.clear();
    round_trip("m", &m, &values, &WriteOptions::default());
}

#[test]
fn bad_input_is_rejected_before_any_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    let mut cases = Vec::new();
    let mut m = meta(Metric::Wdl, "KRPvKFAA000123456"); // 17 bytes
    cases.push(m.clone());
    m.material = "KRvK\0".into();
    cases.push(m.clone());
    m.material = "KRvKé".into();
    cases.push(m.clone());
    m.material = "KRvK".into();
    m.extra = vec![0; (1 << 20) + 1];
    cases.push(m);
    for m in cases {
        let err = write_table(&path, &m, &[1, 2, 3]).unwrap_err();
        assert!(matches!(err, FormatError::InvalidInput { .. }), "{err}");
        assert_eq!(err.path(), path);
    }
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn output_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let values = dtm_like(700_000, 21, 400);
    let m = meta(Metric::Dtm, "KNvKP");
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    write_table(&a, &m, &values).unwrap();
    // On one thread, a different split of work: still the same bytes.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| write_table(&b, &m, &values))
        .unwrap();
    assert!(fs::read(&a).unwrap() == fs::read(&b).unwrap());
    // Overwriting replaces the file.
    write_table(&a, &m, &values[..1000]).unwrap();
    assert_eq!(TableFile::open(&a).unwrap().len(), 1000);
}

// ---------------------------------------------------------------- damage

/// A small table with 12 blocks of 256 values.
fn small_table(dir: &Path) -> (PathBuf, Vec<u16>, Vec<u8>) {
    let path = dir.join("KRvKQ.wdl");
    let values = wdl_like(3000, 77);
    let options = WriteOptions {
        block_bytes: 64,
        ..WriteOptions::default()
    };
    write_table_with(&path, &meta(Metric::Wdl, "KRvKQ"), &values, &options).unwrap();
    let bytes = fs::read(&path).unwrap();
    (path, values, bytes)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn assert_names_file(err: &FormatError, path: &Path) {
    assert_eq!(err.path(), path);
    assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
}

/// Reads every value of a damaged file: each read is an error naming the file or the
/// right value, and at least one error occurs somewhere (open, verify or get).
fn assert_damage_detected(path: &Path, values: &[u16], what: &str) {
    let t = match TableFile::open(path) {
        Err(e) => {
            assert_names_file(&e, path);
            return;
        }
        Ok(t) => t,
    };
    let mut errors = 0;
    for (i, &want) in values.iter().enumerate() {
        match t.get(i as u64) {
            Ok(v) => assert!(want == UNUSED || v == want, "{what}: wrong value at {i}"),
            Err(e) => {
                assert_names_file(&e, path);
                errors += 1;
            }
        }
    }
    let verify = t.verify_blocks();
    if let Err(e) = &verify {
        assert_names_file(e, path);
    }
    match t.read_all() {
        Err(e) => assert_names_file(&e, path),
        Ok(_) => panic!("{what}: read whole without an error"),
    }
    assert!(errors > 0 && verify.is_err(), "{what}: damage not detected");
}

#[test]
fn truncation_at_every_header_offset_and_across_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, values, bytes) = small_table(dir.path());
    let blocks_offset = u64_at(&bytes, 88) as usize;
    let cut = dir.path().join("cut");
    let cuts = (0..blocks_offset + 64).chain((blocks_offset..bytes.len()).step_by(7));
    for len in cuts.chain([bytes.len() - 1]) {
        fs::write(&cut, &bytes[..len]).unwrap();
        let err = TableFile::open(&cut).unwrap_err();
        assert_names_file(&err, &cut);
        if len >= 8 {
            assert!(
                matches!(err, FormatError::Truncated { .. }),
                "cut at {len}: {err}"
            );
        }
    }
    // Trailing garbage is damage too.
    let mut longer = bytes.clone();
    longer.push(0);
    fs::write(&cut, &longer).unwrap();
    assert!(TableFile::open(&cut).unwrap_err().is_damage());
    assert_eq!(read_all(&path).unwrap().len(), values.len());
}

#[test]
fn every_bit_flip_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let (_, values, bytes) = small_table(dir.path());
    let blocks_offset = u64_at(&bytes, 88) as usize;
    let flipped = dir.path().join("flipped");
    for at in 0..bytes.len() {
        // Every bit of the header region, one rotating bit per block byte.
        let bits: Vec<u8> = if at < blocks_offset {
            (0..8).collect()
        } else {
            vec![(at % 8) as u8]
        };
        for bit in bits {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            fs::write(&flipped, &damaged).unwrap();
            if at < blocks_offset {
                // Header, symbols, extra and offset table: open refuses.
                let err = TableFile::open(&flipped).unwrap_err();
                assert_names_file(&err, &flipped);
            } else {
                let what = format!("flip of bit {bit} at {at}");
                assert_damage_detected(&flipped, &values, &what);
                let err = TableFile::open(&flipped)
                    .unwrap()
                    .verify_blocks()
                    .unwrap_err();
                assert!(
                    matches!(err, FormatError::ChecksumMismatch { .. }),
                    "{what}: {err}"
                );
                assert!(err.to_string().contains("block"), "{err}");
            }
        }
    }
}

#[test]
fn wrong_magic_and_future_version() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, bytes) = small_table(dir.path());
    let p = dir.path().join("bad");

    let mut b = bytes.clone();
    b[..8].copy_from_slice(b"SYZYGY\0\0");
    fs::write(&p, &b).unwrap();
    let err = TableFile::open(&p).unwrap_err();
    assert!(matches!(err, FormatError::BadMagic { .. }), "{err}");
    assert!(err.to_string().contains("bad magic"), "{err}");

    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&3u32.to_le_bytes());
    fs::write(&p, &b).unwrap();
    let err = TableFile::open(&p).unwrap_err();
    assert!(
        matches!(
            err,
            FormatError::UnsupportedVersion {
                found: 3,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("version 3"), "{err}");

    // a file of the previous version (whose WDL values were exact) is refused too
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&1u32.to_le_bytes());
    fs::write(&p, &b).unwrap();
    let err = TableFile::open(&p).unwrap_err();
    assert!(
        matches!(
            err,
            FormatError::UnsupportedVersion {
                found: 1,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );

    fs::write(&p, b"").unwrap();
    assert!(matches!(
        TableFile::open(&p).unwrap_err(),
        FormatError::Truncated { file_len: 0, .. }
    ));
    let err = TableFile::open(&dir.path().join("missing")).unwrap_err();
    assert!(matches!(err, FormatError::Io { .. }), "{err}");
    // the operating system's reason is in the message, once, and not repeated as a source
    // (a chain printer would print it twice)
    assert!(std::error::Error::source(&err).is_none());
    assert_eq!(err.to_string().matches("No such file").count(), 1, "{err}");
}

/// Rewrites the header checksum so that only the semantic checks can object.
fn forge(bytes: &mut [u8]) {
    let end = u64_at(bytes, 88) as usize;
    bytes[124..128].fill(0);
    let crc = crc32fast::hash(&bytes[..end]);
    bytes[124..128].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn forged_headers_with_valid_checksums_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (_, values, bytes) = small_table(dir.path());
    let p = dir.path().join("forged");
    type Edit = fn(&mut [u8]);
    let edits: [(&str, Edit); 11] = [
        ("header length", |b| b[12] = 64),
        ("metric", |b| b[16] = 9),
        ("bits 3", |b| b[18] = 3),
        ("bits 1", |b| b[18] = 1), // 3 symbols do not fit in 1 bit
        ("reserved", |b| b[19] = 1),
        ("material", |b| b[20] = 0x07),
        ("value count huge", |b| {
            b[40..48].copy_from_slice(&u64::MAX.to_le_bytes())
        }),
        ("block values 255", |b| {
            b[48..52].copy_from_slice(&255u32.to_le_bytes())
        }),
        ("block values 2^31", |b| {
            b[48..52].copy_from_slice(&(1u32 << 31).to_le_bytes())
        }),
        ("symbol count 0", |b| {
            b[56..60].copy_from_slice(&0u32.to_le_bytes())
        }),
        ("reserved tail", |b| b[110] = 1),
    ];
    for (what, edit) in edits {
        let mut b = bytes.clone();
        edit(&mut b);
        forge(&mut b);
        fs::write(&p, &b).unwrap();
        let err = TableFile::open(&p).unwrap_err();
        assert!(err.is_damage(), "{what}: {err}");
        assert_names_file(&err, &p);
    }
    // One more value fits the block count: caught when the last block is read, as it
    // decompresses to fewer bytes than the header implies.
    let mut b = bytes.clone();
    b[40..48].copy_from_slice(&(values.len() as u64 + 1).to_le_bytes());
    forge(&mut b);
    fs::write(&p, &b).unwrap();
    let t = TableFile::open(&p).unwrap();
    let err = t.get(values.len() as u64).unwrap_err();
    assert!(matches!(err, FormatError::Corrupt { .. }), "{err}");
    assert!(t.verify_blocks().is_err());
    // A forged symbol table is not detectable by design (checksum recomputed), but a
    // forged block offset is.
    let mut b = bytes.clone();
    let offsets = u64_at(&b, 80) as usize;
    b[offsets + 16] ^= 1; // second block's offset
    forge(&mut b);
    fs::write(&p, &b).unwrap();
    assert!(matches!(
        TableFile::open(&p).unwrap_err(),
        FormatError::Corrupt { .. }
    ));
    // A forged block checksum is caught when the block is read.
    let mut b = bytes.clone();
    b[offsets + 12] ^= 1; // first block's checksum
    forge(&mut b);
    fs::write(&p, &b).unwrap();
    assert_damage_detected(&p, &values, "forged block checksum");
}

#[test]
fn random_bytes_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, bytes) = small_table(dir.path());
    let p = dir.path().join("random");
    let mut rng = StdRng::seed_from_u64(99);
    for round in 0..2000 {
        let len = rng.gen_range(0..bytes.len() + 64);
        let mut b: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
        if round % 2 == 1 {
            // Keep a plausible header, scramble the rest (sometimes re-forged).
            let keep = len.min(rng.gen_range(8..HEADER_LEN + 64));
            b[..keep].copy_from_slice(&bytes[..keep]);
            if round % 4 == 3 && len >= HEADER_LEN {
                b[96..104].copy_from_slice(&(len as u64).to_le_bytes());
                if u64_at(&b, 88) as usize <= len {
                    forge(&mut b);
                }
            }
        }
        fs::write(&p, &b).unwrap();
        if let Ok(t) = TableFile::open(&p) {
            // Possible only for a forged header; reads must still be safe.
            let _ = t.verify_blocks();
            for i in 0..t.len().min(5000) {
                let _ = t.get(i);
            }
        }
    }
}

// ---------------------------------------------------------------- threads and cache

#[test]
fn many_threads_random_indices() {
    let values = dtm_like(2_000_000, 31, 500);
    let t = round_trip(
        "threads",
        &meta(Metric::Dtm, "KRvKN"),
        &values,
        &WriteOptions::default(),
    );
    // A small cache forces evictions while threads race.
    t.set_cache_capacity(256 << 10);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    pool.install(|| {
        (0..16u64).into_par_iter().for_each(|seed| {
            let mut rng = StdRng::seed_from_u64(seed);
            for _ in 0..20_000 {
                let i = rng.gen_range(0..values.len());
                let got = t.get(i as u64).unwrap();
                if values[i] != UNUSED {
                    assert_eq!(got, values[i], "index {i}");
                }
            }
        });
    });
    // Bounded by the capacity itself, at every moment (the peak), and full: 2 M values
    // of 16 bits are far more than 256 KiB.
    let stats = t.cache_budget().stats();
    assert!(stats.peak_bytes <= 256 << 10, "{stats:?}");
    assert!(t.cached_bytes() > (256 << 10) - (64 << 10), "{stats:?}");
    assert_eq!(t.cached_bytes(), stats.resident_bytes);
    t.set_cache_capacity(0);
    assert_eq!(t.cached_bytes(), 0);
    assert_eq!(t.cache_capacity(), 0);
    // Still correct after shrinking.
    for i in (0..values.len()).step_by(4999) {
        let got = t.get(i as u64).unwrap();
        assert!(values[i] == UNUSED || got == values[i], "index {i}");
    }
}

#[test]
fn get_many_reads_like_get() {
    let values = dtm_like(600_000, 41, 300);
    let t = round_trip(
        "many",
        &meta(Metric::Dtm, "KRvKB"),
        &values,
        &WriteOptions::default(),
    );
    let mut rng = StdRng::seed_from_u64(5);
    for round in 0..200 {
        // clustered indices, as a position's successors are: a few blocks each time,
        // sometimes more than 256
        let n = if round % 50 == 0 {
            300
        } else {
            rng.gen_range(1..40)
        };
        let centre = rng.gen_range(0..values.len() as u64);
        let indices: Vec<u64> = (0..n)
            .map(|_| (centre + rng.gen_range(0..200_000)) % values.len() as u64)
            .collect();
        let mut out = vec![0u16; n];
        // from memory only: complete exactly when every block is cached
        let cached = indices.iter().all(|&i| t.get_cached(i).unwrap().is_some());
        assert_eq!(t.get_many(&indices, &mut out, false).unwrap(), cached);
        assert!(t.get_many(&indices, &mut out, true).unwrap());
        for (&i, &got) in indices.iter().zip(&out) {
            assert_eq!(got, t.get(i).unwrap(), "index {i}");
        }
        assert!(t.get_many(&indices, &mut out, false).unwrap());
    }
    let mut one = [0u16];
    assert!(matches!(
        t.get_many(&[values.len() as u64], &mut one, true),
        Err(FormatError::IndexOutOfRange { .. })
    ));
}

// ---------------------------------------------------------------- temp + rename

fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn failed_write_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let values = wdl_like(100_000, 1);
    let m = meta(Metric::Wdl, "KRvK");

    // The rename fails: `path` is a directory. No temp file remains; the directory stays.
    let path = dir.path().join("KRvK.wdl");
    fs::create_dir(&path).unwrap();
    fs::write(path.join("inside"), b"x").unwrap();
    let err = write_table(&path, &m, &values).unwrap_err();
    assert!(matches!(err, FormatError::Io { .. }), "{err}");
    assert_names_file(&err, &path);
    assert_eq!(dir_names(dir.path()), ["KRvK.wdl"]);
    assert!(path.is_dir());

    // The directory does not exist: nothing is created.
    let nowhere = dir.path().join("no/such/dir/KRvK.wdl");
    let err = write_table(&nowhere, &m, &values).unwrap_err();
    assert!(matches!(err, FormatError::Io { .. }), "{err}");
    assert_eq!(dir_names(dir.path()), ["KRvK.wdl"]);

    // A good write leaves exactly the file.
    let good = dir.path().join("KRvK.dtm");
    write_table(&good, &m, &values).unwrap();
    assert_eq!(dir_names(dir.path()), ["KRvK.dtm", "KRvK.wdl"]);
}

// ---------------------------------------------------------------- measurements

#[test]
#[ignore = "measurement: run with --ignored --nocapture"]
fn measure() {
    // MEASURE_DATA / MEASURE_LEVELS narrow the run, e.g. MEASURE_DATA=dtm MEASURE_LEVELS=9,12.
    let data_filter = std::env::var("MEASURE_DATA").unwrap_or_default();
    let levels: Vec<i32> = std::env::var("MEASURE_LEVELS")
        .ok()
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .unwrap_or_else(|| vec![3, 9, 19]);
    let dir = tempfile::tempdir().unwrap();
    let datasets: Vec<(&str, Vec<u16>)> = vec![
        ("wdl 1.8M", wdl_like(1_800_000, 1)),
        ("wdl 20M", wdl_like(20_000_000, 2)),
        ("dtm<=250 20M", dtm_like(20_000_000, 3, 250)),
        ("dtm<=600 5M", dtm_like(5_000_000, 4, 600)),
    ];
    let mut configs = Vec::new();
    for &level in &levels {
        configs.push((32 << 10, level, 1));
    }
    if std::env::var("MEASURE_LEVELS").is_err() {
        for block in [8 << 10, 16 << 10, 64 << 10, 128 << 10] {
            configs.push((block, 19, 1));
        }
        configs.push((32 << 10, 19, 8)); // no bit packing
    }
    for (name, values) in &datasets {
        if !name.contains(data_filter.as_str()) {
            continue;
        }
        for &(block_bytes, level, min_bits) in &configs {
            if min_bits == 8 && !name.starts_with("wdl") {
                continue;
            }
            let options = WriteOptions {
                block_bytes,
                zstd_level: level,
                min_symbol_bits: min_bits,
                sparse: None,
            };
            let path = dir.path().join("m");
            let s = write_table_with(&path, &meta(Metric::Wdl, "KRvK"), values, &options).unwrap();
            let t = TableFile::open(&path).unwrap();
            // Cold: one get per block, cache too small to keep anything useful.
            t.set_cache_capacity(0);
            let start = Instant::now();
            let mut rng = StdRng::seed_from_u64(5);
            let cold_n = 2000;
            for _ in 0..cold_n {
                let b = rng.gen_range(0..u64::from(t.block_count()));
                t.set_cache_capacity(0);
                std::hint::black_box(t.get(b * t.block_values()).unwrap());
            }
            let cold = start.elapsed().as_secs_f64() / f64::from(cold_n) * 1e6;
            // Warm: everything cached.
            t.set_cache_capacity(1 << 30);
            t.verify_blocks().unwrap();
            for i in (0..t.len()).step_by(t.block_values() as usize) {
                t.get(i).unwrap();
            }
            let warm_n = 2_000_000;
            let idx: Vec<u64> = (0..warm_n).map(|_| rng.gen_range(0..t.len())).collect();
            let start = Instant::now();
            let mut sum = 0u64;
            for &i in &idx {
                sum += u64::from(t.get(i).unwrap());
            }
            std::hint::black_box(sum);
            let warm = f64::from(warm_n) / start.elapsed().as_secs_f64() / 1e6;
            eprintln!(
                "{name:>13} block {:>4} KiB level {level:>2} bits {:>2}: {:>10} bytes ({:.3} bits/value), write {:>6.2} s ({:>5.1} Mvalues/s), cold get {cold:>6.1} us, warm {warm:.1} M gets/s",
                block_bytes >> 10,
                s.symbol_bits,
                s.file_bytes,
                s.file_bytes as f64 * 8.0 / s.values as f64,
                s.elapsed.as_secs_f64(),
                s.values as f64 / s.elapsed.as_secs_f64() / 1e6,
            );
        }
    }
}

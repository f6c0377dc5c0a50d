//! `generate --plan` (the jobs of a run), `generate --no-deps` (one job) and the
//! MANIFEST that `generate` and `manifest` write.

#[path = "support/cli.rs"]
mod support_cli;

use std::collections::HashMap;
use std::process::Output;

use serde_json::Value as Json;
use shatranj_tb::Material;
use shatranj_tb::generate::plan::{reads, slice_slots};
use support_cli::run;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn plan(men: &str) -> Json {
    let out = run(&["generate", "--plan", "--men", men, "--tables", "t"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Every table of the set once, each after every table it reads, with what it reads
/// and writes.
fn check_plan(men: u32) {
    let j = plan(&men.to_string());
    assert_eq!(j["rules"], "bare-king=counter,stalemate=loss");
    let jobs = j["jobs"].as_array().unwrap();
    let mut place: HashMap<String, usize> = HashMap::new();
    for (i, job) in jobs.iter().enumerate() {
        let name = job["material"].as_str().unwrap().to_string();
        let m: Material = name.parse().unwrap();
        assert_eq!(m.normalized(), m, "{name} in stored form");
        assert!(place.insert(name.clone(), i).is_none(), "{name} twice");
        let listed: Vec<&str> = job["reads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let want: Vec<String> = reads(m).iter().map(ToString::to_string).collect();
        assert_eq!(listed, want, "{name} reads");
        for r in &listed {
            let k = place
                .get(*r)
                .unwrap_or_else(|| panic!("{r} not before {name}"));
            assert!(*k < i);
        }
        assert_eq!(
            job["files"],
            serde_json::json!([
                format!("t/{name}.counter-loss.tbw"),
                format!("t/{name}.counter-loss.tbd"),
                format!("t/{name}.counter-loss.tbz")
            ])
        );
        // at least two bytes a slot of what is made at once: the table, or its largest
        // slice
        let slots = job["slots"].as_u64().unwrap();
        let held = slice_slots(m);
        assert!(held == slots || held * 4 == slots, "{name}");
        assert!(job["memory_bytes"].as_u64().unwrap() > 2 * held, "{name}");
        assert!(job["cpu_seconds"].as_f64().unwrap() > 0.0, "{name}");
        assert!(job["disk_bytes"].as_u64().unwrap() > 0, "{name}");
    }
    let all = Material::all_with_tables(men);
    assert_eq!(jobs.len(), all.len());
    for m in &all {
        assert!(place.contains_key(&m.to_string()), "{m} missing");
    }
    assert_eq!(j["total"]["tables"], all.len());
}

#[test]
fn json_plan_of_4_men_lists_each_table_once_after_what_it_reads() {
    check_plan(4);
    // KPvKP reads the table its promotions lead to, KQvKP
    let j = plan("4");
    let kpkp = j["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["material"] == "KPvKP")
        .unwrap();
    assert_eq!(kpkp["reads"], serde_json::json!(["KQvKP"]));
}

#[test]
fn json_plan_of_5_men_lists_each_table_once_after_what_it_reads() {
    check_plan(5);
    assert_eq!(plan("5")["total"]["tables"], 90);
}

#[test]
fn a_plan_of_7_men_is_printed_but_7_men_are_not_generated() {
    let j = plan("6");
    let jobs = j["jobs"].as_array().unwrap();
    assert!(jobs.len() > 300, "{}", jobs.len());
    assert!(jobs.iter().any(|x| x["material"] == "KRPvKRP"));
    let j = plan("7");
    assert!(j["jobs"].as_array().unwrap().len() > 1000);
    let dir = tempfile::tempdir().unwrap();
    let out = run(&[
        "generate",
        "--men",
        "7",
        "--tables",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("at most 6"), "{}", stderr(&out));
}

#[test]
fn snakemake_plan_has_one_rule_a_table_and_the_manifest() {
    let out = run(&[
        "generate",
        "--plan",
        "KPvKP",
        "--format",
        "snakemake",
        "--tables",
        "t",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("TABLES = config.get(\"tables\", \"t\")"),
        "{text}"
    );
    assert!(text.contains("rule manifest:"), "{text}");
    let rule = text
        .split("rule table_KPvKP:")
        .nth(1)
        .expect("a rule for KPvKP");
    assert!(
        rule.contains("input:\n        ancient(TABLES + \"/KQvKP.counter-loss.tbw\"),\n        ancient(TABLES + \"/KQvKP.counter-loss.tbd\"),"),
        "{rule}"
    );
    assert!(rule.contains("threads: 1"), "{rule}");
    assert!(
        rule.contains("mem_mb=lambda wildcards, attempt: "),
        "{rule}"
    );
    assert!(rule.contains("generate KPvKP --no-deps"), "{rule}");
    // KPvKP, then KQvKP (its promotions), then KQvKQ (those of KQvKP)
    assert!(text.contains("rule table_KQvKP:") && text.contains("rule table_KQvKQ:"));
    assert_eq!(text.matches("\nrule table_").count(), 3, "{text}");
}

#[test]
fn a_job_needs_its_sub_tables_and_writes_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = run(&["generate", "KPvKP", "--no-deps", "--tables", d]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("KPvKP reads KQvKP"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let out = run(&["generate", "--no-deps", "--tables", d]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // a temporary of an interrupted attempt at this table is removed, another's is not
    let own = dir.path().join(".KRvKQ.counter-loss.tbd.tmp.999999999.0");
    let other = dir.path().join(".KRvKR.counter-loss.tbd.tmp.999999999.0");
    std::fs::write(&own, b"half").unwrap();
    std::fs::write(&other, b"half").unwrap();
    let out = run(&["generate", "KRvKQ", "--no-deps", "--tables", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!own.exists() && other.exists());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".KRvKR.counter-loss.tbd.tmp.999999999.0",
            "KRvKQ.counter-loss.tbd",
            "KRvKQ.counter-loss.tbw",
            "KRvKQ.counter-loss.tbz"
        ]
    );
    // kept when present
    let out = run(&["generate", "KRvKQ", "--no-deps", "--tables", d]);
    assert!(stderr(&out).contains("kept"), "{}", stderr(&out));
    // the manifest command lists it, as generate would
    let out = run(&["manifest", "--tables", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = std::fs::read_to_string(dir.path().join("MANIFEST")).unwrap();
    let lines: Vec<&str> = manifest.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 3, "{manifest}");
    assert!(
        lines[2].starts_with("KRvKQ.counter-loss.tbz "),
        "{manifest}"
    );
    assert!(
        lines[0].starts_with("KRvKQ.counter-loss.tbd 966715 4f7ff053"),
        "{manifest}"
    );
    let out = run(&["manifest", "--tables", &format!("{d}/none")]);
    assert_eq!(out.status.code(), Some(1));
}

/// The files in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Runs `generate MATERIAL --no-deps` under the move rule in `dir`: it must fail, name
/// `reads` and a DTZ file, and write nothing.
fn job_refused_for_a_missing_dtz_file(dir: &std::path::Path, material: &str, reads: &str) {
    let before = names_in(dir);
    let d = dir.to_str().unwrap();
    let out = run(&[
        "generate",
        material,
        "--no-deps",
        "--tables",
        d,
        "--rules",
        "bare-king=counter,stalemate=loss,move-rule=70",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{material} reads {reads}")) && err.contains("DTZ"),
        "{err}"
    );
    assert_eq!(names_in(dir), before, "nothing written: {err}");
}

#[test]
fn a_job_under_the_move_rule_needs_every_table_below_it_with_its_dtz_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // KQvKP reads KQvKQ, made here without the move rule: its WDL and DTM files serve
    // both rule sets, its DTZ file only the one it was made under
    let out = run(&["generate", "KQvKQ", "--tables", d]);
    assert!(out.status.success(), "{}", stderr(&out));
    job_refused_for_a_missing_dtz_file(dir.path(), "KQvKP", "KQvKQ");
    // KPvKP reads KQvKP, which reads KQvKQ: a table further down without its DTZ file
    // is refused as well (checking the written table probes it), before any work
    let seventy = "bare-king=counter,stalemate=loss,move-rule=70";
    let out = run(&["generate", "KQvKP", "--tables", d, "--rules", seventy]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::remove_file(dir.path().join("KQvKQ.counter-loss-70.tbz")).unwrap();
    job_refused_for_a_missing_dtz_file(dir.path(), "KPvKP", "KQvKQ");
}

//! Crash safety under load: four processes at a time hammer `knack tool call
//! skill_manage` on 50 skills while a fifth lists and views; afterwards every
//! SKILL.md validates, every history reads, and no staging file is left.
//!
//! Ignored in CI (it runs for a minute): `cargo test -p knack --test cli -- --ignored load --nocapture`.
//! `KNACK_LOAD_SECS` shortens or lengthens the run.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::Env;

const SKILLS: usize = 50;
const WRITERS: usize = 4;

/// Outcome counts keyed by "op: outcome".
type Tally = Arc<Mutex<BTreeMap<String, usize>>>;

fn bump(tally: &Tally, key: String) {
    *tally.lock().unwrap().entry(key).or_default() += 1;
}

fn skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Use when load testing {name}\n---\n# {name}\n\n## Log\n"
    )
}

/// A tiny deterministic generator per worker; no dependency needed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

/// The leading words of an error, enough to group failures by cause.
fn cause(error: &str) -> String {
    let error = error.strip_prefix("knack: ").unwrap_or(error);
    let error = error.split(['\'', '"', ':', '/']).next().unwrap_or(error);
    error.chars().take(60).collect()
}

fn writer(env: Arc<Env>, id: usize, stop: Arc<AtomicBool>, tally: Tally) {
    let mut rng = Lcg(id as u64 + 1);
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let name = format!("load-{:02}", rng.next(SKILLS));
        let (op, args) = match rng.next(10) {
            0..=1 => (
                "create",
                json!({"action": "create", "name": name, "content": skill_md(&name)}),
            ),
            2..=5 => (
                "patch",
                json!({"action": "patch", "name": name, "old_string": "## Log\n",
                       "new_string": format!("## Log\n- writer {id} op {n}\n")}),
            ),
            6..=8 => (
                "write_file",
                json!({"action": "write_file", "name": name,
                       "file_path": format!("references/w{id}.md"),
                       "file_content": format!("writer {id} op {n}\n")}),
            ),
            _ => ("delete", json!({"action": "delete", "name": name})),
        };
        let out = env
            .knack()
            .args(["tool", "call", "skill_manage", &args.to_string()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("panicked") {
            bump(&tally, format!("{op}: PANIC {stderr}"));
            continue;
        }
        let reply: Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(_) => {
                bump(
                    &tally,
                    format!("{op}: stdout not JSON (exit {:?})", out.status.code()),
                );
                continue;
            }
        };
        let key = if reply["success"] == json!(true) {
            format!("{op}: ok")
        } else {
            format!(
                "{op}: refused: {}",
                cause(reply["error"].as_str().unwrap_or("?"))
            )
        };
        bump(&tally, key);
    }
}

fn reader(env: Arc<Env>, stop: Arc<AtomicBool>, tally: Tally) {
    let mut rng = Lcg(99);
    while !stop.load(Ordering::Relaxed) {
        let out = env
            .knack()
            .args(["skills", "list", "--json"])
            .output()
            .unwrap();
        let parsed = serde_json::from_slice::<Value>(&out.stdout);
        let key = match (&parsed, out.status.code()) {
            (Ok(_), Some(0)) => "list: ok".to_owned(),
            _ => format!(
                "list: FAILED exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            ),
        };
        bump(&tally, key);
        let name = format!("load-{:02}", rng.next(SKILLS));
        let out = env
            .knack()
            .args(["skills", "view", &name])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let key = match out.status.code() {
            _ if stderr.contains("panicked") => format!("view: PANIC {stderr}"),
            Some(0) if String::from_utf8_lossy(&out.stdout).contains(&format!("# {name}")) => {
                "view: ok".to_owned()
            }
            Some(0) => "view: TORN (exit 0 without the heading)".to_owned(),
            code => format!("view: exit {code:?}: {}", cause(stderr.trim())),
        };
        bump(&tally, key);
    }
}

/// Files a crashed or racing write could leave behind.
fn leftovers(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with(".tmp")
            || name.contains(".knack-tmp-")
            || name.starts_with(".pending-")
            || name.contains(".knack-restore-")
            || name.contains(".knack-old-")
        {
            out.push(path.display().to_string());
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            leftovers(&path, out);
        }
    }
}

#[test]
#[ignore = "load test: runs for a minute"]
fn load_four_writers_and_a_reader_leave_a_consistent_tree() {
    let secs: u64 = std::env::var("KNACK_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let env = Arc::new(Env::new());
    let stop = Arc::new(AtomicBool::new(false));
    let tally: Tally = Arc::default();
    let mut threads = Vec::new();
    for id in 0..WRITERS {
        let (env, stop, tally) = (env.clone(), stop.clone(), tally.clone());
        threads.push(std::thread::spawn(move || writer(env, id, stop, tally)));
    }
    {
        let (env, stop, tally) = (env.clone(), stop.clone(), tally.clone());
        threads.push(std::thread::spawn(move || reader(env, stop, tally)));
    }
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let elapsed = started.elapsed();
    let tally = tally.lock().unwrap().clone();
    let total: usize = tally.values().sum();
    println!("LOAD {total} operations in {elapsed:.1?}");
    for (key, count) in &tally {
        println!("LOAD {count:>6}  {key}");
    }

    let skills_dir = env.home_path("skills");
    let mut skill_files = Vec::new();
    for i in 0..SKILLS {
        let name = format!("load-{i:02}");
        let md = skills_dir.join(&name).join("SKILL.md");
        if md.is_file() {
            skill_files.push(md);
        }
        // History must read for every name that was ever written, deleted or not.
        let out = env
            .knack()
            .args(["skills", "history", &name, "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        if out.status.success() {
            let versions: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("history of {name} is not JSON: {e}"));
            let versions = versions.as_array().unwrap();
            for (i, v) in versions.iter().enumerate() {
                assert_eq!(v["version"], json!(i + 1), "{name}: {v}");
            }
        } else {
            assert!(stderr.contains(&name), "{name}: {stderr}");
        }
    }
    println!("LOAD {} skills exist at the end", skill_files.len());
    if !skill_files.is_empty() {
        let out = env
            .knack()
            .args(["skills", "validate", "--json"])
            .arg(&skills_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut left = Vec::new();
    leftovers(env.home.path(), &mut left);
    assert!(left.is_empty(), "left behind: {left:#?}");
    let bad: Vec<&String> = tally
        .keys()
        .filter(|k| {
            k.contains("PANIC")
                || k.contains("not JSON")
                || k.contains("FAILED")
                || k.contains("TORN")
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(tally.get("patch: ok").copied().unwrap_or(0) > 0);
}

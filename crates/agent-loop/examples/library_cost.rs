//! What the library's usage records cost: recording one use (or view) in
//! `state.db`, which every counted tool call pays, and `knack skills stats`
//! over 10,000 skills. `cargo xtask bench library` runs it.
//!
//! Prints `BENCH name=<median> ms min=… max=… n=…` lines: `record_use` and
//! `record_view` (target ≤ 1 ms each), `stats_records` (reading the records
//! and building the 10,000 rows with their JSON; target ≤ 100 ms) and
//! `stats_command` (the same with the skill set loaded from its warm
//! discovery snapshot first, as the command does).

use std::collections::{BTreeSet, HashSet};
use std::hint::black_box;
use std::time::{Instant, SystemTime};

use agent_loop::SessionStore;
use agent_loop::skill_usage::{self, StatsInput, UsageEvent};
use knack_config::KnackHome;
use skill_core::{Actor, DiscoveryOptions, Scope, SkillRoot};
use test_support::print_bench;

const SKILLS: usize = 10_000;
const CATEGORIES: usize = 100;
const RECORD_WARMUP: usize = 50;
const RECORD_SAMPLES: usize = 2_000;
const STATS_WARMUP: usize = 3;
const STATS_SAMPLES: usize = 20;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let home = KnackHome::at(tmp.path());
    let root = home.skills_dir();
    for i in 0..SKILLS {
        let dir = root.join(format!("c{:02}/skill-{i:05}", i % CATEGORIES));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:05}\ndescription: Use when task {i} comes up\n---\n# Skill {i}\n\n1. Do it.\n"
            ),
        )?;
    }
    // As `skills.scan_max_dirs: 100000` would: the default 5,000 folders
    // would cut the walk short of 10,000 skills.
    let options = DiscoveryOptions {
        max_dirs: 100_000,
        ..DiscoveryOptions::with_roots(vec![SkillRoot {
            path: root,
            scope: Scope::User,
        }])
    };
    let cache = home.cache_dir();
    let set = skill_core::snapshot::load_or_discover(&options, &cache);
    if set.skills.len() != SKILLS {
        return Err(format!("discovered {} skills, not {SKILLS}", set.skills.len()).into());
    }
    let store = SessionStore::open(&home)?;
    // Half the skills have records (created by the agent, used, patched);
    // the other half make the stats look at their folders, as skills
    // written by hand do.
    for (i, skill) in set.skills.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        let id = skill.qualified_id();
        skill_usage::record(&store, &id, &skill.name, UsageEvent::Created(Actor::Agent));
        skill_usage::record(&store, &id, &skill.name, UsageEvent::Use);
        if i % 10 == 0 {
            skill_usage::record(&store, &id, &skill.name, UsageEvent::Patch(Actor::Review));
        }
    }

    for (name, event) in [
        ("record_use", UsageEvent::Use),
        ("record_view", UsageEvent::View),
    ] {
        let mut samples = Vec::with_capacity(RECORD_SAMPLES);
        for round in 0..RECORD_WARMUP + RECORD_SAMPLES {
            let skill = &set.skills[(round * 7919) % SKILLS];
            let id = skill.qualified_id();
            let started = Instant::now();
            skill_usage::record(&store, &id, &skill.name, event);
            let took = started.elapsed();
            if round >= RECORD_WARMUP {
                samples.push(took);
            }
        }
        print_bench(name, samples);
    }
    let uses = skill_usage::load(&store)?
        .values()
        .map(|r| r.uses)
        .sum::<u64>();
    if uses < (SKILLS / 2) as u64 {
        return Err(format!("only {uses} uses were recorded").into());
    }

    let pinned = BTreeSet::new();
    let stats = |set: &skill_core::SkillSet| -> Result<usize, Box<dyn std::error::Error>> {
        let mut records = skill_usage::load(&store)?;
        let current: Vec<(String, String)> = set
            .skills
            .iter()
            .map(|s| (s.qualified_id(), s.name.clone()))
            .collect();
        skill_usage::follow_renames(&store, &mut records, &current, &HashSet::new());
        let rows = skill_usage::library_stats(&StatsInput {
            skills: &set.skills,
            archived: &[],
            pinned: &pinned,
            usage: &records,
            now: SystemTime::now(),
            stale_after_days: 60,
        });
        Ok(serde_json::to_string(&rows)?.len())
    };
    let (mut records_only, mut command) = (Vec::new(), Vec::new());
    for round in 0..STATS_WARMUP + STATS_SAMPLES {
        let started = Instant::now();
        let bytes = black_box(stats(&set)?);
        let took = started.elapsed();
        let started = Instant::now();
        let loaded = skill_core::snapshot::load_or_discover(&options, &cache);
        black_box(stats(&loaded)?);
        let whole = started.elapsed();
        if round == 0 {
            println!("stats JSON for {SKILLS} skills: {bytes} bytes");
        }
        if round >= STATS_WARMUP {
            records_only.push(took);
            command.push(whole);
        }
    }
    print_bench("stats_records", records_only);
    print_bench("stats_command", command);
    Ok(())
}

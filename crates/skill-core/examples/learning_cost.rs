//! What the learning loop's guards cost at 10,000 generated skills: the
//! near-duplicate check of a create against the library's search index
//! (median), how often it catches a renamed copy and how often it flags a new
//! skill, and what an empty skills inbox costs. Prints `BENCH` lines that
//! `cargo xtask bench learning` reads.

use std::time::{Duration, Instant};

use knack_config::KnackHome;
use skill_core::duplicate::{Draft, near_duplicates};
use skill_core::manage::inbox;
use skill_core::search::SkillSearch;
use skill_core::{DiscoveryOptions, Scope, SkillRoot};
use test_support::{Layout, print_bench, synthetic_skills, write_library};

const CHECKS: usize = 500;
const INBOX_READS: usize = 2_000;

fn main() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let home = KnackHome::at(dir.path().join("home"));
    let skills = synthetic_skills(10_000, 31);
    write_library(&home.skills_dir(), &skills, Layout::Nested(100))?;
    let options = DiscoveryOptions::with_roots(vec![SkillRoot {
        path: home.skills_dir(),
        scope: Scope::User,
    }]);
    let (set, _) = skill_core::discover(&options);
    assert_eq!(set.skills.len(), skills.len(), "every skill is discovered");
    let search = SkillSearch::from_skill_set(&set);

    // A renamed copy of an existing skill: the check must name it.
    let mut times: Vec<Duration> = Vec::with_capacity(CHECKS * 2);
    let mut caught = 0usize;
    for skill in skills.iter().step_by(skills.len() / CHECKS) {
        let name = format!("{}-copy", skill.name);
        let draft = Draft {
            name: &name,
            description: &skill.description,
            body: &skill.body,
        };
        let started = Instant::now();
        let near = near_duplicates(&search, &set, &draft);
        times.push(started.elapsed());
        caught += usize::from(
            near.iter()
                .find(|n| n.is_duplicate())
                .is_some_and(|n| n.name == skill.name),
        );
    }
    // Skills from another generator seed: new work, which should pass.
    let fresh = synthetic_skills(CHECKS, 977);
    let mut flagged = 0usize;
    for skill in &fresh {
        let name = format!("fresh-{}", skill.name);
        let draft = Draft {
            name: &name,
            description: &skill.description,
            body: &skill.body,
        };
        let started = Instant::now();
        let near = near_duplicates(&search, &set, &draft);
        times.push(started.elapsed());
        flagged += usize::from(near.iter().any(|n| n.is_duplicate()));
    }
    print_bench("duplicate_check_10000", times);
    println!(
        "BENCH duplicate_caught_10000={:.1} % n={CHECKS}",
        caught as f64 * 100.0 / CHECKS as f64
    );
    println!(
        "BENCH duplicate_flagged_fresh_10000={:.1} % n={CHECKS}",
        flagged as f64 * 100.0 / CHECKS as f64
    );

    // An inbox that was never used: what a session start or a status line
    // would pay to look at it.
    let mut reads: Vec<Duration> = Vec::with_capacity(INBOX_READS);
    for _ in 0..INBOX_READS {
        let started = Instant::now();
        let n = inbox::count(&home);
        reads.push(started.elapsed());
        assert_eq!(n, 0);
    }
    print_bench("inbox_empty_count", reads);
    Ok(())
}

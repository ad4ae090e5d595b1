//! What `knack skills check` costs for 80 skills installed from one local git
//! repository (two of them changed upstream), and `update` of those two.
//! Prints `BENCH` lines that `cargo xtask bench hub` reads.

use std::time::{Duration, Instant};

use knack_config::{Config, KnackHome};
use skill_core::{DiscoveryOptions, Scope, SkillRoot};
use skill_hub::{CheckStatus, Hub, InstallOptions, UpdateOutcome};
use test_support::{git, git_repo, print_bench};

const SKILLS: usize = 80;
const RUNS: usize = 5;

fn skill_md(name: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Use when task {name} comes up\n---\n# {name}\n\n{body}\n"
    )
}

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let files: Vec<(String, String)> = (0..SKILLS)
        .map(|i| {
            let name = format!("skill-{i:02}");
            (format!("skills/{name}/SKILL.md"), skill_md(&name, "Steps."))
        })
        .collect();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = git_repo(&borrowed);
    let home_dir = tempfile::tempdir()?;
    let home = KnackHome::at(home_dir.path());
    let discovery = DiscoveryOptions::with_roots(vec![SkillRoot {
        path: home.skills_dir(),
        scope: Scope::User,
    }]);
    let config = Config::default();
    let hub = Hub::new(
        home,
        &config,
        discovery,
        home_dir.path().to_path_buf(),
        true,
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let id = format!("git+file://{}", repo.path().display());
    let members = runtime.block_on(hub.stage_collection(&id, &InstallOptions::default()))?;
    for m in members {
        hub.install(m.staged?, |_| Ok(()))?;
    }
    for i in [7usize, 41] {
        let path = repo.path().join(&files[i].0);
        std::fs::write(&path, skill_md(&format!("skill-{i:02}"), "Steps, revised."))?;
    }
    git(repo.path(), &["commit", "-qam", "two skills change"]);

    let mut checks: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let statuses = runtime.block_on(hub.check(None))?;
        checks.push(started.elapsed());
        let changed = statuses
            .iter()
            .filter(|s| s.status == CheckStatus::UpdateAvailable)
            .count();
        assert_eq!(statuses.len(), SKILLS);
        assert_eq!(changed, 2, "{statuses:?}");
    }
    print_bench("hub_check_80", checks);

    let started = Instant::now();
    let outcomes = runtime.block_on(hub.update(None, false))?;
    print_bench("hub_update_80_two_changed", vec![started.elapsed()]);
    let updated = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, UpdateOutcome::Updated { .. }))
        .count();
    assert_eq!(updated, 2, "{outcomes:?}");
    Ok(())
}

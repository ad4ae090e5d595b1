//! Search across official skills and taps: dedup by name, higher trust first,
//! slow sources reported without losing the others.

use test_support::{StaticRoute, StaticServer};

use super::fixture::*;

#[test]
fn taps_join_search_deduplicated_and_ordered_by_trust() {
    // A community tap that also offers an official skill's name.
    let community = git_repo(&[
        (
            "k/SKILL.md",
            &skill_md("kubernetes-rollout", "Use when rolling out (fork)", "x"),
        ),
        (
            "r/SKILL.md",
            &skill_md("rollout-notes", "Use when writing rollout notes", "x"),
        ),
    ]);
    let trusted = git_repo(&[(
        "t/SKILL.md",
        &skill_md("rollout-guard", "Use when guarding rollouts", "x"),
    )]);
    let trusted_id = format!("git+{}", file_url(trusted.path()));
    let home = Home::new().trusting(&trusted_id);
    let taps = home.hub().taps();
    assert!(
        taps.add(&format!("git+{}", file_url(community.path())))
            .unwrap()
    );
    assert!(taps.add(&trusted_id).unwrap());

    let outcome = block_on(home.hub().search("rollout", None)).unwrap();
    assert!(outcome.problems.is_empty(), "{:?}", outcome.problems);
    let got: Vec<(&str, &str)> = outcome
        .results
        .iter()
        .map(|m| (m.name.as_str(), m.trust.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("kubernetes-rollout", "builtin"),
            ("rollout-guard", "trusted"),
            ("rollout-notes", "community"),
        ]
    );
    assert_eq!(
        outcome.results[0].identifier,
        "official/infrastructure/kubernetes-rollout"
    );
    assert_eq!(
        outcome.results[2].identifier,
        format!("git+{}#r", file_url(community.path()))
    );

    let only_taps = block_on(home.hub().search("rollout", Some("taps"))).unwrap();
    assert_eq!(only_taps.results[0].name, "rollout-guard");
    assert!(
        only_taps
            .results
            .iter()
            .any(|m| m.name == "kubernetes-rollout" && m.trust.as_str() == "community")
    );
}

#[test]
fn a_hanging_tap_is_reported_and_the_rest_still_answers() {
    let server = StaticServer::start_blocking().unwrap();
    server.route(
        "/.well-known/agent-skills/index.json",
        StaticRoute::hanging(),
    );
    let home = Home::new();
    home.hub()
        .taps()
        .add(&format!("well-known:{}", server.base_url()))
        .unwrap();
    // The tap never answers, so getting the results at all means its fetch
    // timed out; the ceiling (far above any machine's load, far below
    // forever) catches a timeout applied late or repeatedly.
    let started = std::time::Instant::now();
    let outcome = block_on(home.hub().search("", None)).unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(outcome.sources, 2);
    assert_eq!(outcome.problems.len(), 1);
    assert!(outcome.problems[0].source.starts_with("well-known:"));
    assert!(
        outcome.results.len() >= 8,
        "the official skills still come back"
    );
    let err = block_on(
        home.hub()
            .search("", Some(&format!("well-known:{}", server.base_url()))),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("no source could be searched"), "{err}");
}

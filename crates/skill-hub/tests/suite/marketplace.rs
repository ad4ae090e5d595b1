//! A Claude Code plugin marketplace as a hub source: plugins listed with
//! their descriptions, a remote plugin followed to its own git repository,
//! and plugin skills kept apart by their plugin's namespace.

use knack_config::KnackHome;
use skill_core::{DiscoveryOptions, Resolution, Scope, SkillRoot};
use skill_hub::{CheckStatus, Error, InstallOptions, UpdateOutcome};

use super::fixture::*;

/// The remote plugin's repository and the marketplace's, which lists two
/// local plugins sharing a skill name and the remote one.
pub fn marketplace_repos() -> (tempfile::TempDir, tempfile::TempDir) {
    let remote = git_repo(&[
        (
            "skills/deploy/SKILL.md",
            &skill_md("deploy", "Use when a release goes out", "Roll it."),
        ),
        ("README.md", "remote plugin\n"),
    ]);
    let manifest = format!(
        r#"{{
  "name": "team-market",
  "owner": {{"name": "Team"}},
  "plugins": [
    {{"name": "alpha", "description": "Alpha's code tools", "source": "./plugins/alpha"}},
    {{"name": "beta", "description": "Beta's code tools", "source": "./plugins/beta"}},
    {{"name": "shipping", "description": "Release helpers kept elsewhere",
      "source": {{"source": "url", "url": "{}"}}}},
    {{"name": "packaged", "description": "Only on npm", "source": {{"source": "npm", "package": "x"}}}}
  ]
}}"#,
        file_url(remote.path())
    );
    let market = git_repo(&[
        (".claude-plugin/marketplace.json", &manifest),
        (
            "plugins/alpha/skills/lint/SKILL.md",
            &skill_md("lint", "Use when alpha code needs linting", "Alpha lint."),
        ),
        (
            "plugins/alpha/skills/fmt/SKILL.md",
            &skill_md("fmt", "Use when alpha code needs formatting", "Alpha fmt."),
        ),
        (
            "plugins/beta/skills/lint/SKILL.md",
            &skill_md("lint", "Use when beta code needs linting", "Beta lint."),
        ),
        (
            "plugins/beta/.claude-plugin/plugin.json",
            "{\"name\": \"beta\"}",
        ),
    ]);
    (remote, market)
}

fn discovery(home: &Home) -> DiscoveryOptions {
    let skills = KnackHome::at(home.dir.path()).skills_dir();
    DiscoveryOptions::with_roots(vec![
        SkillRoot {
            path: skills.clone(),
            scope: Scope::User,
        },
        SkillRoot {
            path: skills.join(skill_core::INSTALLED_PLUGINS_DIR),
            scope: Scope::Plugin(skill_core::PLUGIN_NAMESPACE.to_owned()),
        },
    ])
}

#[test]
fn a_marketplace_lists_plugins_installs_under_plugin_namespaces_and_follows_remote_plugins() {
    let (remote, market) = marketplace_repos();
    let home = Home::new();
    let hub = home.hub();
    let id = format!("marketplace:git+{}", file_url(market.path()));

    // The whole marketplace: its plugins with their descriptions.
    let err = block_on(hub.stage_for_install(&id, &InstallOptions::default()))
        .err()
        .unwrap();
    let Error::Collection { members, .. } = &err else {
        panic!("{err}")
    };
    let plugins: Vec<(&str, &str)> = members
        .iter()
        .map(|m| (m.name.as_str(), m.description.as_str()))
        .collect();
    assert_eq!(
        plugins,
        [
            ("alpha", "Alpha's code tools"),
            ("beta", "Beta's code tools"),
            ("shipping", "Release helpers kept elsewhere"),
            ("packaged", "Only on npm"),
        ]
    );
    assert_eq!(
        members[0].identifier.as_deref(),
        Some(format!("{id}::alpha").as_str())
    );
    assert!(err.to_string().contains("holds 4 plugins"), "{err}");

    // Every skill of every plugin, the remote one fetched from its own repository.
    let staged = block_on(hub.stage_collection(&id, &InstallOptions::default())).unwrap();
    let names: Vec<&str> = staged.iter().map(|m| m.member.name.as_str()).collect();
    assert_eq!(
        names,
        ["alpha:fmt", "alpha:lint", "beta:lint", "shipping:deploy"]
    );
    for m in staged {
        let s = m.staged.unwrap();
        assert!(s.plugin.is_some());
        hub.install(s, |_| Ok(())).unwrap();
    }
    let lock = hub.lock().unwrap();
    let keys: Vec<&String> = lock.installed.keys().collect();
    assert_eq!(
        keys,
        ["alpha:fmt", "alpha:lint", "beta:lint", "shipping:deploy"]
    );
    assert_eq!(
        lock.installed["beta:lint"].install_path,
        ".plugins/beta/lint"
    );
    assert_eq!(
        lock.installed["shipping:deploy"].identifier,
        format!("{id}::shipping/deploy")
    );
    assert!(
        home.path("skills/.plugins/shipping/deploy/SKILL.md")
            .is_file()
    );

    // Discovery: qualified ids in the plugin namespace; the shared bare name
    // is ambiguous, `<plugin>:<skill>` is not.
    let (set, _) = skill_core::discover(&discovery(&home));
    let mut qids: Vec<String> = set.visible().iter().map(|s| s.qualified_id()).collect();
    qids.sort();
    assert_eq!(
        qids,
        [
            "plugin:alpha/fmt",
            "plugin:alpha/lint",
            "plugin:beta/lint",
            "plugin:shipping/deploy"
        ]
    );
    assert!(matches!(set.resolve("lint"), Resolution::Ambiguous(l) if l.len() == 2));
    assert!(
        matches!(set.resolve("beta:lint"), Resolution::Found(s) if s.qualified_id() == "plugin:beta/lint")
    );

    // Installing one again is refused by its own qualified name only.
    let again =
        block_on(hub.stage_for_install(&format!("{id}::alpha/lint"), &InstallOptions::default()))
            .unwrap();
    let err = hub.install(again, |_| Ok(())).unwrap_err().to_string();
    assert!(err.contains("'alpha:lint' is already installed"), "{err}");

    // check and update follow the remote plugin.
    std::fs::write(
        remote.path().join("skills/deploy/SKILL.md"),
        skill_md(
            "deploy",
            "Use when a release goes out",
            "Roll it, then verify.",
        ),
    )
    .unwrap();
    commit_all(remote.path(), "change deploy");
    let statuses = block_on(hub.check(None)).unwrap();
    for s in &statuses {
        let expected = if s.name == "shipping:deploy" {
            CheckStatus::UpdateAvailable
        } else {
            CheckStatus::UpToDate
        };
        assert_eq!(s.status, expected, "{}", s.name);
    }
    let outcomes = block_on(hub.update(Some("shipping:deploy"), false)).unwrap();
    assert!(
        matches!(outcomes[0].1, UpdateOutcome::Updated { .. }),
        "{outcomes:?}"
    );
    let text =
        std::fs::read_to_string(home.path("skills/.plugins/shipping/deploy/SKILL.md")).unwrap();
    assert!(text.contains("then verify"), "{text}");

    // Uninstall by the plugin name; the other plugin's `lint` stays.
    hub.uninstall("beta:lint").unwrap();
    assert!(!home.path("skills/.plugins/beta").exists());
    assert!(home.path("skills/.plugins/alpha/lint/SKILL.md").is_file());
    assert!(walk_files(&home.path(".hub/quarantine")).is_empty());
}

#[test]
fn one_plugin_is_a_collection_and_a_missing_one_is_named() {
    let (_remote, market) = marketplace_repos();
    let home = Home::new();
    let hub = home.hub();
    let id = format!("marketplace:git+{}", file_url(market.path()));
    let err = block_on(hub.stage_for_install(&format!("{id}::alpha"), &InstallOptions::default()))
        .err()
        .unwrap();
    let Error::Collection { members, .. } = &err else {
        panic!("{err}")
    };
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["alpha:fmt", "alpha:lint"]);
    let err = block_on(hub.stage_for_install(&format!("{id}::gamma"), &InstallOptions::default()))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("no plugin named 'gamma'"), "{err}");
    let err =
        block_on(hub.stage_for_install(&format!("{id}::packaged"), &InstallOptions::default()))
            .err()
            .unwrap()
            .to_string();
    assert!(err.contains("npm"), "{err}");
    // A repository without a marketplace file says so.
    let plain = git_repo(&[("skills/x/SKILL.md", &skill_md("x", "Use when x", "X."))]);
    let err = block_on(hub.stage_for_install(
        &format!("marketplace:git+{}", file_url(plain.path())),
        &InstallOptions::default(),
    ))
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains(".claude-plugin/marketplace.json"), "{err}");
    // Search lists each skill under its plugin's name.
    let found = block_on(hub.search("lint", Some(&id))).unwrap();
    let names: Vec<&str> = found.results.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["alpha:lint", "beta:lint"]);
}

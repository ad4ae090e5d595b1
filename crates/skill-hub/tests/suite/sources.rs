//! Every source end to end through the hub: install, lock, provenance, check,
//! an upstream change, check again, update, uninstall.

use skill_hub::{CheckStatus, UpdateOutcome};
use test_support::{StaticRoute, StaticServer};

use super::fixture::*;

/// Runs the whole life of one installed skill; `change` edits the upstream copy.
fn lifecycle(home: &Home, id: &str, name: &str, source: &str, change: impl FnOnce()) {
    let installed = home
        .install(id, false)
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    assert_eq!(installed.name, name);
    assert!(installed.path.join("SKILL.md").is_file());
    let provenance = skill_core::manage::provenance(&installed.path);
    assert_eq!(provenance.created_by, "hub");

    let hub = home.hub();
    let lock = hub.lock().unwrap();
    let entry = &lock.installed[name];
    assert_eq!(entry.source, source);
    assert_eq!(entry.scan_verdict, "safe");
    assert!(entry.files.contains(&"SKILL.md".to_string()));
    assert!(!entry.files.iter().any(|f| f.starts_with(".knack-")));
    assert_eq!(
        entry.content_hash,
        skill_hub::tree_hash(&installed.path).unwrap()
    );
    assert_eq!(
        home.path("skills").join(&entry.install_path),
        installed.path
    );

    let status = |h: &skill_hub::Hub| block_on(h.check(Some(name))).unwrap()[0].status.clone();
    assert_eq!(status(&hub), CheckStatus::UpToDate, "{id}");
    change();
    assert_eq!(status(&hub), CheckStatus::UpdateAvailable, "{id}");
    let outcome = block_on(hub.update(Some(name), false)).unwrap();
    assert!(
        matches!(outcome[0].1, UpdateOutcome::Updated { .. }),
        "{id}: {outcome:?}"
    );
    assert_eq!(status(&hub), CheckStatus::UpToDate, "{id}");
    let after = hub.lock().unwrap().installed[name].clone();
    assert_ne!(after.content_hash, entry.content_hash);
    assert_eq!(after.installed_at, entry.installed_at);
    assert_eq!(
        after.install_path, entry.install_path,
        "update keeps the category"
    );
    let body = std::fs::read_to_string(installed.path.join("SKILL.md")).unwrap();
    assert!(
        body.contains("version two"),
        "{id}: update did not land: {body}"
    );
    assert_eq!(
        skill_core::manage::provenance(&installed.path).created_by,
        "hub"
    );
    // Both hub writes are versioned like any other write.
    let knack_home = knack_config::KnackHome::at(home.path(""));
    let versions = skill_core::history::list(&knack_home, name).unwrap();
    let seen: Vec<(&str, &str)> = versions
        .iter()
        .map(|v| (v.action.as_str(), v.actor.as_str()))
        .collect();
    assert_eq!(seen, [("install", "hub"), ("update", "hub")], "{id}");
    assert!(versions.iter().all(|v| v.hash.is_some()), "{id}");

    hub.uninstall(name).unwrap();
    home.assert_clean();
    let log = home.audit_log();
    let actions: Vec<&str> = log.lines().map(|l| l.split(' ').nth(1).unwrap()).collect();
    assert_eq!(actions, vec!["INSTALL", "UPDATE", "UNINSTALL"], "{log}");
    assert!(
        log.lines()
            .next()
            .unwrap()
            .contains(&format!(" {name} {source}:"))
    );
}

#[test]
fn official_skills_install_as_builtin() {
    let home = Home::new();
    let installed = home
        .install("official/infrastructure/kubernetes-rollout", false)
        .unwrap();
    assert!(
        installed
            .path
            .ends_with("skills/infrastructure/kubernetes-rollout")
    );
    assert_eq!(installed.entry.trust_level, "builtin");
    let hub = home.hub();
    let checked = block_on(hub.check(None)).unwrap();
    assert_eq!(checked[0].status, CheckStatus::UpToDate);
    hub.uninstall("kubernetes-rollout").unwrap();
    home.assert_clean();
    // A bare name resolves through search to the official identifier.
    let by_name = home.install("kubernetes-rollout", false).unwrap();
    assert_eq!(
        by_name.entry.identifier,
        "official/infrastructure/kubernetes-rollout"
    );
}

#[test]
fn local_folder() {
    let home = Home::new();
    let upstream = tempfile::tempdir().unwrap();
    write(
        upstream.path(),
        "lint/SKILL.md",
        &skill_md("lint", "Use when linting", "version one"),
    );
    write(upstream.path(), "lint/references/rules.md", "rules\n");
    let dir = upstream.path().join("lint");
    lifecycle(&home, &dir.display().to_string(), "lint", "local", || {
        write(
            upstream.path(),
            "lint/SKILL.md",
            &skill_md("lint", "Use when linting", "version two"),
        );
    });
}

#[test]
fn local_tarball_via_file_url() {
    let home = Home::new();
    let upstream = tempfile::tempdir().unwrap();
    let pack = |body: &str| {
        let md = skill_md("packed", "Use when packing", body);
        std::fs::write(
            upstream.path().join("packed.tar.gz"),
            tar_gz(&[("packed/SKILL.md", md.as_bytes())]),
        )
        .unwrap();
    };
    pack("version one");
    let id = file_url(&upstream.path().join("packed.tar.gz"));
    lifecycle(&home, &id, "packed", "local", || pack("version two"));
}

#[test]
fn git_repository_with_subdir_and_tag() {
    let repo = git_repo(&[
        (
            "skills/alpha/SKILL.md",
            &skill_md("alpha", "Use when alpha", "version one"),
        ),
        (
            "skills/beta/SKILL.md",
            &skill_md("beta", "Use when beta", "beta"),
        ),
    ]);
    git(repo.path(), &["tag", "v1"]);
    let home = Home::new();
    let id = format!("git+{}@v1#skills/alpha", file_url(repo.path()));
    lifecycle(&home, &id, "alpha", "git", || {
        write(
            repo.path(),
            "skills/alpha/SKILL.md",
            &skill_md("alpha", "Use when alpha", "version two"),
        );
        commit_all(repo.path(), "two");
        git(repo.path(), &["tag", "-f", "v1"]);
    });
}

#[test]
fn git_collection_needs_a_choice_and_unknown_refs_fail() {
    let repo = git_repo(&[
        ("a/SKILL.md", &skill_md("a", "Use when a", "a")),
        ("b/SKILL.md", &skill_md("b", "Use when b", "b")),
    ]);
    let home = Home::new();
    let base = format!("git+{}", file_url(repo.path()));
    let err = home.install(&base, false).unwrap_err();
    assert!(
        err.contains("holds 2 skills") && err.contains(&format!("{base}#a")),
        "{err}"
    );
    let err = home.install(&format!("{base}@nope#a"), false).unwrap_err();
    assert!(err.contains("cannot clone"), "{err}");
    home.assert_clean();
}

#[test]
fn a_collection_kept_under_dot_folders_is_listed_and_installable() {
    let repo = git_repo(&[
        (
            "skills/.curated/gh-fix-ci/SKILL.md",
            &skill_md("gh-fix-ci", "Use when CI fails", "curated"),
        ),
        (
            "skills/.system/skill-installer/SKILL.md",
            &skill_md("skill-installer", "Use when installing skills", "system"),
        ),
        (
            ".github/ISSUE_TEMPLATE/SKILL.md",
            &skill_md("template", "Use when filing", "t"),
        ),
    ]);
    let home = Home::new();
    let base = format!("git+{}", file_url(repo.path()));
    let err = home.install(&base, false).unwrap_err();
    assert!(
        err.contains("holds 3 skills")
            && err.contains(&format!("{base}#skills/.curated/gh-fix-ci")),
        "{err}"
    );
    let installed = home
        .install(&format!("{base}#skills/.system/skill-installer"), false)
        .unwrap();
    assert_eq!(installed.name, "skill-installer");
}

fn publish_index(server: &StaticServer, skills: &[(&str, &str)]) {
    let entries: Vec<serde_json::Value> = skills
        .iter()
        .map(|(name, body)| {
            let path = format!("/files/{name}/SKILL.md");
            server.put(&path, body.as_bytes().to_vec());
            serde_json::json!({
                "name": name, "description": format!("Use when {name}"),
                "type": "skill-md", "url": path, "digest": sha256(body.as_bytes()),
            })
        })
        .collect();
    server.put(
        "/.well-known/agent-skills/index.json",
        serde_json::to_vec(&serde_json::json!({"skills": entries})).unwrap(),
    );
}

#[test]
fn well_known_index() {
    let server = StaticServer::start_blocking().unwrap();
    publish_index(
        &server,
        &[(
            "pdf-tools",
            &skill_md("pdf-tools", "Use when pdf", "version one"),
        )],
    );
    let home = Home::new();
    let id = format!("well-known:{}#pdf-tools", server.base_url());
    lifecycle(&home, &id, "pdf-tools", "well-known", || {
        publish_index(
            &server,
            &[(
                "pdf-tools",
                &skill_md("pdf-tools", "Use when pdf", "version two"),
            )],
        );
    });
}

#[test]
fn well_known_falls_back_to_the_older_index() {
    let server = StaticServer::start_blocking().unwrap();
    server.put(
        "/.well-known/skills/index.json",
        r#"{"skills": [{"name": "old-style", "description": "Use when old", "files": ["SKILL.md", "references/a.md"]}]}"#,
    );
    server.put(
        "/.well-known/skills/old-style/SKILL.md",
        skill_md("old-style", "Use when old", "x"),
    );
    server.put("/.well-known/skills/old-style/references/a.md", "ref\n");
    let home = Home::new();
    let installed = home
        .install(
            &format!("well-known:{}#old-style", server.base_url()),
            false,
        )
        .unwrap();
    assert!(installed.path.join("references/a.md").is_file());
}

#[test]
fn direct_skill_md_url() {
    let server = StaticServer::start_blocking().unwrap();
    server.put(
        "/x/SKILL.md",
        skill_md("direct", "Use when direct", "version one"),
    );
    let home = Home::new();
    lifecycle(&home, &server.url("/x/SKILL.md"), "direct", "url", || {
        server.put(
            "/x/SKILL.md",
            skill_md("direct", "Use when direct", "version two"),
        );
    });
}

#[test]
fn direct_tarball_url() {
    let server = StaticServer::start_blocking().unwrap();
    let pack = |body: &str| {
        let md = skill_md("tarred", "Use when tarred", body);
        tar_gz(&[
            ("tarred/SKILL.md", md.as_bytes()),
            ("tarred/scripts/run.sh", b"echo ok\n"),
        ])
    };
    server.put("/dl/tarred.tar.gz", pack("version one"));
    let home = Home::new();
    lifecycle(
        &home,
        &server.url("/dl/tarred.tar.gz"),
        "tarred",
        "url",
        || {
            server.put("/dl/tarred.tar.gz", pack("version two"));
        },
    );
}

fn github_repo(server: &StaticServer, body: &str) {
    server.put(
        "/api/repos/acme/skills/contents/skills",
        r#"[{"name": "alpha", "path": "skills/alpha", "type": "dir"},
            {"name": "notes", "path": "skills/notes", "type": "dir"},
            {"name": "README.md", "path": "skills/README.md", "type": "file"}]"#,
    );
    let md = skill_md("alpha", "Use when alpha from GitHub", body);
    server.put(
        "/api/repos/acme/skills/contents/skills/alpha/SKILL.md",
        md.clone(),
    );
    server.put(
        "/api/repos/acme/skills/tarball",
        tar_gz(&[
            ("acme-skills-abc123/skills/alpha/SKILL.md", md.as_bytes()),
            ("acme-skills-abc123/README.md", b"repo\n"),
        ]),
    );
}

#[test]
fn github_api() {
    let server = StaticServer::start_blocking().unwrap();
    github_repo(&server, "version one");
    let home = Home::new().with_github(&server.url("/api"));
    std::fs::write(home.path(".env"), "GITHUB_TOKEN=tok-from-dotenv\n").unwrap();
    let listed = block_on(home.hub().search("", Some("github:acme/skills/skills"))).unwrap();
    let names: Vec<&str> = listed.results.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["alpha"],
        "the folder without SKILL.md is not a skill"
    );
    assert_eq!(
        listed.results[0].identifier,
        "github:acme/skills/skills/alpha"
    );
    lifecycle(
        &home,
        "github:acme/skills/skills/alpha",
        "alpha",
        "github",
        || {
            github_repo(&server, "version two");
        },
    );
    if std::env::var_os("GITHUB_TOKEN").is_none() {
        let auth = server
            .requests()
            .iter()
            .filter_map(|r| r.headers.get("authorization").cloned())
            .next();
        assert_eq!(auth.as_deref(), Some("Bearer tok-from-dotenv"));
    }
}

#[test]
fn github_rate_limit_is_explained() {
    let server = StaticServer::start_blocking().unwrap();
    server.route(
        "/api/repos/acme/skills/tarball",
        StaticRoute::status(403)
            .header("x-ratelimit-remaining", "0")
            .header("x-ratelimit-reset", "1893456000"),
    );
    let home = Home::new().with_github(&server.url("/api"));
    let err = home.install("github:acme/skills", false).unwrap_err();
    assert_eq!(
        err,
        "GitHub rate limit reached; set GITHUB_TOKEN or wait until 2030-01-01T00:00:00Z"
    );
    home.assert_clean();
}

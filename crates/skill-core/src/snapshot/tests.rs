//! Tests of the disk snapshot: validity, racy stamps, one-by-one refresh.
use std::time::Duration;

use super::stamps::*;
use super::*;
use crate::roots::SkillRoot;
use crate::skill::Scope;

fn backdate_tree(root: &Path, age: Duration) {
    let when = SystemTime::now() - age;
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
        if p.exists() {
            fs::File::open(&p).unwrap().set_modified(when).unwrap();
        }
    }
}

fn tree() -> (tempfile::TempDir, DiscoveryOptions) {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    let d = skills.join("ops/deploy");
    fs::create_dir_all(&d).unwrap();
    fs::write(
        d.join("SKILL.md"),
        "---\nname: deploy\ndescription: Ship it\n---\nbody\n",
    )
    .unwrap();
    backdate_tree(&skills, Duration::from_secs(3600));
    let opts = DiscoveryOptions::with_roots(vec![SkillRoot {
        path: skills,
        scope: Scope::User,
    }]);
    (dir, opts)
}

#[test]
fn second_load_comes_from_the_snapshot_and_equals_discovery() {
    let (dir, opts) = tree();
    let cache = dir.path().join("cache");
    let (first, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Written);
    let (second, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Loaded);
    // Discovery keeps the frontmatter as the snapshot does (name and
    // description on the skill itself), so the two sets are equal outright.
    assert_eq!(first, second);
    assert_eq!(second, discover(&opts).0);
    assert!(
        second
            .skills
            .iter()
            .all(|s| !s.name.is_empty() && !s.description.is_empty())
    );
}

#[test]
fn nested_same_size_edit_with_a_newer_mtime_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    let deep = skills.join("a/b/c/tool");
    fs::create_dir_all(&deep).unwrap();
    let md = deep.join("SKILL.md");
    fs::write(&md, "---\nname: tool\ndescription: Old words\n---\nbody\n").unwrap();
    fs::write(
        skills.join("a/b/DESCRIPTION.md"),
        "---\ndescription: Category one\n---\n",
    )
    .unwrap();
    backdate_tree(&skills, Duration::from_secs(3600));
    let opts = DiscoveryOptions::with_roots(vec![SkillRoot {
        path: skills.clone(),
        scope: Scope::User,
    }]);
    let cache = dir.path().join("cache");
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Written);
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);

    // Same size, and no folder changes: only the file's own stamp moves.
    fs::write(&md, "---\nname: tool\ndescription: New words\n---\nbody\n").unwrap();
    let later = SystemTime::now() - Duration::from_secs(1800);
    fs::File::open(&md).unwrap().set_modified(later).unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_ne!(outcome, SnapshotOutcome::Loaded);
    assert_eq!(set.skills[0].description, "New words");

    let desc = skills.join("a/b/DESCRIPTION.md");
    fs::write(&desc, "---\ndescription: Category two\n---\n").unwrap();
    fs::File::open(&desc).unwrap().set_modified(later).unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_ne!(outcome, SnapshotOutcome::Loaded);
    assert_eq!(set.category_description("a/b"), Some("Category two"));
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);
}

#[test]
fn other_options_do_not_use_the_snapshot() {
    let (dir, opts) = tree();
    let cache = dir.path().join("cache");
    load_or_discover(&opts, &cache);
    let mut other = opts;
    other.disabled = vec!["deploy".into()];
    let (set, outcome) = load_with_outcome(&other, &cache);
    assert_ne!(outcome, SnapshotOutcome::Loaded);
    assert!(set.visible().is_empty());
}

#[test]
fn a_fresh_tree_is_written_and_a_same_tick_edit_is_still_seen() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("skills/x");
    fs::create_dir_all(&d).unwrap();
    let md = d.join("SKILL.md");
    fs::write(&md, "---\ndescription: first\n---\n").unwrap();
    let opts = user_root(&dir.path().join("skills"));
    let cache = dir.path().join("cache");
    // Files this young are proven by their digest, so the snapshot is written at once.
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Written);
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);
    // Same size and the very same mtime: only the content tells.
    let before = fs::metadata(&md).unwrap().modified().unwrap();
    fs::write(&md, "---\ndescription: other\n---\n").unwrap();
    fs::File::open(&md).unwrap().set_modified(before).unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Refreshed);
    assert_eq!(set.skills[0].description, "other");
    assert_eq!(discover(&opts).0, set);
}

fn found<'a>(set: &'a SkillSet, name: &str) -> &'a Skill {
    match set.resolve(name) {
        crate::skill_set::Resolution::Found(skill) => skill,
        other => panic!("{name} did not resolve to one skill: {other:?}"),
    }
}

fn user_root(path: &Path) -> DiscoveryOptions {
    DiscoveryOptions::with_roots(vec![SkillRoot {
        path: path.to_path_buf(),
        scope: Scope::User,
    }])
}

fn old_tree(
    skills: &[(impl AsRef<str>, impl AsRef<str>)],
) -> (tempfile::TempDir, DiscoveryOptions, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    for (rel, text) in skills {
        let d = root.join(rel.as_ref());
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("SKILL.md"), text.as_ref()).unwrap();
    }
    backdate_tree(&root, Duration::from_secs(3600));
    let opts = user_root(&root);
    let cache = dir.path().join("cache");
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Written);
    (dir, opts, cache)
}

const TWO: [(&str, &str); 2] = [
    (
        "ops/deploy",
        "---\nname: deploy\ndescription: Ship it\n---\nbody\n",
    ),
    (
        "ops/rollback",
        "---\nname: rollback\ndescription: Undo it\n---\nbody\n",
    ),
];

#[test]
fn an_in_place_edit_is_applied_alone_and_matches_a_full_discovery() {
    let (dir, opts, cache) = old_tree(&TWO);
    let md = dir.path().join("skills/ops/deploy/SKILL.md");
    fs::write(
        &md,
        "---\nname: deploy\ndescription: Ship it now, with a longer line\n---\nbody\n",
    )
    .unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Refreshed);
    assert_eq!(set, discover(&opts).0);
    assert_eq!(set.skills[0].description, "Ship it now, with a longer line");
    // One change is applied again on each load rather than rewritten.
    assert_eq!(
        load_with_outcome(&opts, &cache),
        (set, SnapshotOutcome::Refreshed)
    );
}

#[test]
fn many_in_place_edits_are_written_back() {
    let skills: Vec<(String, String)> = (0..=REWRITE_AFTER)
        .map(|i| {
            (
                format!("ops/s{i}"),
                format!("---\nname: s{i}\ndescription: Old\n---\n"),
            )
        })
        .collect();
    let (dir, opts, cache) = old_tree(&skills);
    for (rel, _) in &skills {
        let name = rel.trim_start_matches("ops/");
        fs::write(
            dir.path().join("skills").join(rel).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: New\n---\n"),
        )
        .unwrap();
    }
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Refreshed);
    assert!(set.skills.iter().all(|s| s.description == "New"));
    assert_eq!(set, discover(&opts).0);
    assert_eq!(
        load_with_outcome(&opts, &cache),
        (set, SnapshotOutcome::Loaded)
    );
}

#[test]
fn a_temp_file_that_came_and_went_only_moves_the_folder_stamp() {
    let (dir, opts, cache) = old_tree(&TWO);
    let skill_dir = dir.path().join("skills/ops/deploy");
    // What an atomic write leaves behind: the folder's mtime moved, its shape did not.
    fs::write(skill_dir.join(".tmp-write"), "x").unwrap();
    fs::remove_file(skill_dir.join(".tmp-write")).unwrap();
    fs::write(skill_dir.join("notes.txt"), "x").unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Refreshed);
    assert_eq!(set, discover(&opts).0);
}

type Change = fn(&Path);

/// Changes that only a full discovery may apply, made under a root of `TWO`.
fn structural_changes() -> [(&'static str, Change); 5] {
    [
        ("renamed skill", |root| {
            fs::write(
                root.join("ops/deploy/SKILL.md"),
                "---\nname: rollback\ndescription: Ship it\n---\nbody\n",
            )
            .unwrap();
        }),
        ("new skill folder", |root| {
            fs::create_dir_all(root.join("ops/new")).unwrap();
            fs::write(
                root.join("ops/new/SKILL.md"),
                "---\ndescription: New\n---\n",
            )
            .unwrap();
        }),
        ("removed skill", |root| {
            fs::remove_dir_all(root.join("ops/rollback")).unwrap();
        }),
        ("gated by platform", |root| {
            fs::write(
                root.join("ops/deploy/SKILL.md"),
                "---\nname: deploy\ndescription: Ship it\nplatforms: [plan9]\n---\n",
            )
            .unwrap();
        }),
        ("broken frontmatter", |root| {
            fs::write(root.join("ops/deploy/SKILL.md"), "---\nname: deploy\n").unwrap();
        }),
    ]
}

#[test]
fn structural_changes_run_a_full_discovery() {
    for (what, change) in structural_changes() {
        let (dir, opts, cache) = old_tree(&TWO);
        change(&dir.path().join("skills"));
        let (set, outcome) = load_with_outcome(&opts, &cache);
        assert_eq!(outcome, SnapshotOutcome::Written, "{what}");
        assert_eq!(set, discover(&opts).0, "{what}");
    }
}

#[test]
fn a_link_pointed_elsewhere_or_mended_is_noticed() {
    let (dir, opts, cache) = old_tree(&TWO);
    let root = dir.path().join("skills");
    // Link targets stay inside the root (a hidden folder the walk does not
    // enter on its own): links leaving the root are not followed at all.
    let elsewhere = root.join(".elsewhere");
    for name in ["a", "b"] {
        let d = elsewhere.join(name).join("tool");
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("SKILL.md"),
            format!("---\ndescription: from {name}\n---\n"),
        )
        .unwrap();
    }
    std::os::unix::fs::symlink(elsewhere.join("a"), root.join("linked")).unwrap();
    std::os::unix::fs::symlink(root.join(".missing"), root.join("broken")).unwrap();
    backdate_tree(&root, Duration::from_secs(3000));
    let (set, _) = load_with_outcome(&opts, &cache);
    assert_eq!(found(&set, "tool").description, "from a");
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);

    // Pointed elsewhere with the parent folder's stamp put back as it was.
    let parent_mtime = fs::metadata(&root).unwrap().modified().unwrap();
    fs::remove_file(root.join("linked")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("b"), root.join("linked")).unwrap();
    fs::File::open(&root)
        .unwrap()
        .set_modified(parent_mtime)
        .unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_ne!(outcome, SnapshotOutcome::Loaded);
    assert_eq!(found(&set, "tool").description, "from b");

    // The broken link's target appears: the link's own stamp moves.
    let target = root.join(".missing/fixed");
    fs::create_dir_all(&target).unwrap();
    fs::write(target.join("SKILL.md"), "---\ndescription: mended\n---\n").unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_ne!(outcome, SnapshotOutcome::Loaded);
    assert_eq!(found(&set, "fixed").description, "mended");
}

#[test]
fn corrupt_snapshot_falls_back_to_discovery() {
    let (dir, opts) = tree();
    let cache = dir.path().join("cache");
    fs::create_dir_all(&cache).unwrap();
    fs::write(cache.join(SNAPSHOT_FILE), "not a snapshot").unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Written);
    assert_eq!(set.visible().len(), 1);
}

#[test]
fn every_frontmatter_field_survives_the_snapshot() {
    let text = "---\nname: full\ndescription: Every field set\nversion: 1.10\nauthor: ops\n\
license: MIT\ncompatibility: linux only\nplatforms: [linux, macos]\ntags: [a, b]\n\
related_skills: [other]\ncategory: tools\nrequired_environment_variables:\n  - name: TOKEN\n    \
prompt: Your token\n    help: See the wiki\n    optional: true\nrequires_toolsets: [web]\n\
fallback_for_tools: [browser]\ncreated_by: agent\nmetadata:\n  knack:\n    tags: [c]\n---\nbody\n";
    let (_dir, opts, cache) = old_tree(&[("tools/full", text)]);
    let (loaded, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Loaded);
    let discovered = discover(&opts).0;
    assert_eq!(loaded, discovered);
    let fm = &loaded.skills[0].frontmatter;
    assert_eq!(fm.version.as_deref(), Some("1.10"));
    assert_eq!(fm.tags, ["c"]);
    assert_eq!(fm.required_environment_variables[0].name, "TOKEN");
    assert!(fm.required_environment_variables[0].optional);
    assert_eq!(fm.conditions.fallback_for_tools, ["browser"]);
    assert_eq!(fm.created_by.as_deref(), Some("agent"));
}

#[test]
fn stored_stamps_give_back_the_same_paths() {
    let roots = [
        SkillRoot {
            path: PathBuf::from("/srv/skills/"),
            scope: Scope::User,
        },
        SkillRoot {
            path: PathBuf::from("relative/root"),
            scope: Scope::External,
        },
    ];
    for path in [
        "/srv/skills",
        "/srv/skills/",
        "/srv/skills/ops/deploy/SKILL.md",
        "/srv/skills//odd//path",
        "/srv/skillsets/not-below",
        "relative/root/a",
        "relative/root",
        "/elsewhere/b",
    ] {
        let stamp = Stamp {
            path: PathBuf::from(path),
            kind: StampKind::Folder,
            state: None,
            shape: 7,
            digest: Some(9),
        };
        let stored = StoredStamp::of(&stamp, &roots).unwrap();
        let bytes = postcard::to_stdvec(&stored).unwrap();
        let back: StoredStamp<'_> = postcard::from_bytes(&bytes).unwrap();
        let back = back.into_stamp(&roots).unwrap();
        // The very same bytes, not only an equal path.
        assert_eq!(back.path.as_os_str(), stamp.path.as_os_str(), "{path}");
        assert_eq!(back, stamp, "{path}");
    }
}

#[test]
fn a_snapshot_id_names_an_unchanged_set_only() {
    let (dir, opts, cache) = old_tree(&TWO);
    let id = written_id(&opts, &cache).unwrap();
    assert!(still_valid(&opts, &cache, id));
    let seen = with_skill_set_identified(&opts, &cache, |set, seen| {
        assert_eq!(set.skills.len(), 2);
        seen
    });
    assert_eq!(seen, Some(id));

    // An in-place edit: the file on disk is the same, but it no longer holds.
    let md = dir.path().join("skills/ops/deploy/SKILL.md");
    fs::write(&md, "---\nname: deploy\ndescription: Ship it again\n---\n").unwrap();
    assert!(!still_valid(&opts, &cache, id));
    assert_eq!(
        with_skill_set_identified(&opts, &cache, |_, seen| seen),
        None
    );

    // A new folder rewrites the snapshot: a new id, valid again.
    fs::create_dir_all(dir.path().join("skills/ops/new")).unwrap();
    fs::write(
        dir.path().join("skills/ops/new/SKILL.md"),
        "---\ndescription: New\n---\n",
    )
    .unwrap();
    load_or_discover(&opts, &cache);
    let newer = written_id(&opts, &cache).unwrap();
    assert_ne!(newer, id);
    assert!(!still_valid(&opts, &cache, id));
    assert!(still_valid(&opts, &cache, newer));

    // Other options never match this file.
    let mut other = opts;
    other.disabled = vec!["deploy".into()];
    assert_eq!(written_id(&other, &cache), None);
}

#[test]
fn short_commands_write_the_snapshot_beside_their_work() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    for (rel, text) in TWO {
        fs::create_dir_all(root.join(rel)).unwrap();
        fs::write(root.join(rel).join("SKILL.md"), text).unwrap();
    }
    backdate_tree(&root, Duration::from_secs(3600));
    let opts = user_root(&root);
    let cache = dir.path().join("cache");
    // No snapshot yet: the set is discovered, handed over, and written meanwhile.
    let names = with_skill_set(&opts, &cache, |set| {
        set.skills
            .iter()
            .map(|s| s.name.clone())
            .collect::<Vec<_>>()
    });
    assert_eq!(names, ["deploy", "rollback"]);
    let (loaded, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Loaded);
    assert_eq!(loaded, discover(&opts).0);

    // One in-place edit: a short command writes the refreshed set back at
    // once (a `skill_manage` load would keep applying it instead).
    fs::write(
        root.join("ops/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship it today\n---\nbody\n",
    )
    .unwrap();
    let seen = with_skill_set(&opts, &cache, |set| set.skills[0].description.clone());
    assert_eq!(seen, "Ship it today");
    let (loaded, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Loaded);
    assert_eq!(loaded.skills[0].description, "Ship it today");
}

#[test]
fn a_damaged_snapshot_has_no_id_and_is_never_valid() {
    let (_dir, opts, cache) = old_tree(&TWO);
    let id = written_id(&opts, &cache).unwrap();
    let file = cache.join(SNAPSHOT_FILE);
    let bytes = fs::read(&file).unwrap();
    // Cut short: the header still names the same file length no more.
    fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    assert!(!still_valid(&opts, &cache, id));
    fs::write(&file, b"junk").unwrap();
    assert_eq!(written_id(&opts, &cache), None);
    assert!(!still_valid(&opts, &cache, id));
    // And a load falls back to discovery, then writes a good one again.
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Written);
    assert!(still_valid(
        &opts,
        &cache,
        written_id(&opts, &cache).unwrap()
    ));
}

/// The lookup's answer and the whole set's, side by side, for `query`.
fn answers(opts: &DiscoveryOptions, cache: &Path, query: &str) -> (Option<SkillSet>, SkillSet) {
    let part = skills_answering(opts, cache, query);
    (part, discover(opts).0)
}

#[test]
fn a_lookup_answers_every_kind_of_query_as_the_whole_set_does() {
    let (_dir, opts, cache) = old_tree(&[
        (
            "ops/deploy",
            "---\nname: deploy\ndescription: Ops way\n---\n",
        ),
        (
            "web/deploy",
            "---\nname: deploy\ndescription: Web way\n---\n",
        ),
        (
            "ops/rollback",
            "---\nname: rollback\ndescription: Undo it\n---\n",
        ),
        (
            "ops/ancient",
            "---\nname: ancient\ndescription: Old box\nplatforms: [plan9]\n---\n",
        ),
        (
            "solo",
            "---\nname: renamed-solo\ndescription: At the root\n---\n",
        ),
    ]);
    let queries = [
        "deploy",
        "ops/deploy",
        "user:web/deploy",
        "rollback",
        " rollback ",
        "ancient",
        "solo",
        "renamed-solo",
        "missing",
        "ops",
        "project:ops/deploy",
    ];
    for query in queries {
        let (part, whole) = answers(&opts, &cache, query);
        let part = part.unwrap_or_else(|| panic!("{query:?}: the snapshot did not answer"));
        assert_eq!(part.resolve(query), whole.resolve(query), "{query:?}");
    }
    // Only the matching skills are read.
    let (part, _) = answers(&opts, &cache, "deploy");
    assert_eq!(part.unwrap().skills.len(), 2);
    let (part, _) = answers(&opts, &cache, "missing");
    assert!(part.unwrap().skills.is_empty());
}

#[test]
fn a_lookup_applies_edits_that_keep_names_and_yields_on_the_rest() {
    let (dir, opts, cache) = old_tree(&TWO);
    let root = dir.path().join("skills");
    // An in-place edit with the same name: answered, with the new text.
    fs::write(
        root.join("ops/deploy/SKILL.md"),
        "---\nname: deploy\ndescription: Ship it today\n---\nbody\n",
    )
    .unwrap();
    // A temp file that came and went: the folder's shape held.
    fs::write(root.join("ops/rollback/.tmp"), "x").unwrap();
    fs::remove_file(root.join("ops/rollback/.tmp")).unwrap();
    let (part, whole) = answers(&opts, &cache, "deploy");
    let part = part.expect("the snapshot answers after edits it can apply");
    assert_eq!(part.resolve("deploy"), whole.resolve("deploy"));
    assert_eq!(found(&part, "deploy").description, "Ship it today");

    // A hand edit that makes a second `deploy`: only a full load may answer.
    fs::write(
        root.join("ops/rollback/SKILL.md"),
        "---\nname: deploy\ndescription: Now a twin\n---\n",
    )
    .unwrap();
    assert!(skills_answering(&opts, &cache, "deploy").is_none());
    assert!(matches!(
        load_or_discover(&opts, &cache).resolve("deploy"),
        crate::skill_set::Resolution::Ambiguous(list) if list.len() == 2
    ));
}

#[test]
fn a_lookup_yields_on_new_folders_category_texts_and_foreign_snapshots() {
    for (what, change) in structural_changes() {
        let (dir, opts, cache) = old_tree(&TWO);
        change(&dir.path().join("skills"));
        assert!(
            skills_answering(&opts, &cache, "deploy").is_none(),
            "{what}"
        );
    }
    let (dir, opts, cache) = old_tree(&TWO);
    fs::write(
        dir.path().join("skills/ops/DESCRIPTION.md"),
        "---\ndescription: Operations\n---\n",
    )
    .unwrap();
    assert!(skills_answering(&opts, &cache, "deploy").is_none());
    // No snapshot, or one written for other roots: nothing to answer from.
    let other = user_root(&dir.path().join("elsewhere"));
    assert!(skills_answering(&other, &cache, "deploy").is_none());
    fs::remove_file(cache.join(SNAPSHOT_FILE)).unwrap();
    assert!(skills_answering(&opts, &cache, "deploy").is_none());
}

#[test]
fn record_offsets_point_at_each_skill_in_both_halves() {
    let skills: Vec<(String, String)> = (0..7)
        .map(|i| {
            (
                format!("c{}/s{i}", i % 3),
                format!("---\nname: s{i}\ndescription: Skill number {i}\ntags: [t{i}]\n---\n"),
            )
        })
        .collect();
    let (_dir, opts, cache) = old_tree(&skills);
    let whole = load_or_discover(&opts, &cache);
    for i in 0..7 {
        let name = format!("s{i}");
        let part = skills_answering(&opts, &cache, &name).unwrap();
        assert_eq!(part.skills, vec![found(&whole, &name).clone()], "{name}");
    }
}

#[test]
fn stamps_are_split_at_the_folder_their_neighbours_share() {
    use StampKind::{CategoryFile, Folder, SkillFile};
    assert_eq!(split_parent("", Folder), ("", ""));
    assert_eq!(split_parent("ops", Folder), ("", "ops"));
    assert_eq!(split_parent("ops/deploy", Folder), ("ops", "deploy"));
    assert_eq!(split_parent("a/b/c", Folder), ("a/b", "c"));
    assert_eq!(
        split_parent("deploy/SKILL.md", SkillFile),
        ("", "deploy/SKILL.md")
    );
    assert_eq!(
        split_parent("ops/deploy/SKILL.md", SkillFile),
        ("ops", "deploy/SKILL.md")
    );
    assert_eq!(
        split_parent("a/b/DESCRIPTION.md", CategoryFile),
        ("a", "b/DESCRIPTION.md")
    );
}

#[test]
fn a_removed_category_is_noticed_through_its_shared_folder() {
    // Enough skills in each category that runs of stamps share a folder.
    let skills: Vec<(String, String)> = (0..300)
        .map(|i| {
            (
                format!("c{}/s{i}", i / 100),
                format!("---\nname: s{i}\ndescription: Skill {i}\n---\n"),
            )
        })
        .collect();
    let (dir, opts, cache) = old_tree(&skills);
    assert_eq!(load_with_outcome(&opts, &cache).1, SnapshotOutcome::Loaded);
    // An edit deep in a run, then a whole category gone.
    fs::write(
        dir.path().join("skills/c1/s150/SKILL.md"),
        "---\nname: s150\ndescription: Edited\n---\n",
    )
    .unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Refreshed);
    assert_eq!(found(&set, "s150").description, "Edited");
    fs::remove_dir_all(dir.path().join("skills/c2")).unwrap();
    let (set, outcome) = load_with_outcome(&opts, &cache);
    assert_eq!(outcome, SnapshotOutcome::Written);
    assert_eq!(set.skills.len(), 200);
    assert_eq!(set, discover(&opts).0);
}

/// A SKILL.md that sets every kind of frontmatter field, for the pinned encoding below.
const PINNED_SAMPLE: &str = "---
name: deploy
description: Ships the app. Use when releasing.
version: 1.2.0
author: Ops
license: MIT
compatibility: linux
platforms: [linux, macos]
tags: [ops, release]
related_skills: [rollback]
category: ops
required_environment_variables:
  - name: DEPLOY_TOKEN
    prompt: The deploy token
requires_toolsets: [terminal]
fallback_for_toolsets: [web]
requires_tools: [terminal]
fallback_for_tools: [web_fetch]
created_by: agent
metadata:
  owner: ops
disable-model-invocation: true
user-invocable: false
allowed-tools: [terminal]
requires: [mcp__github__create_issue]
dependencies: [kubectl]
prerequisites:
  commands: [git]
---
Body.
";

/// What the SHA-256 of the sample's stored record was when `SNAPSHOT_VERSION`
/// last changed.
const PINNED_ENCODING: (u32, &str) = (
    10,
    "ba70734a7517439f32c0798fb5920acbe64736eab079647d4b59a10560abb439",
);

/// The snapshot's version must change with the stored shape, or a build reads
/// an older build's file as if it were its own. A new or changed frontmatter
/// field changes the encoding of this sample (postcard writes every field, a
/// `None` as one byte), so a forgotten bump fails here.
#[test]
fn the_stored_record_encoding_is_pinned_to_the_snapshot_version() {
    let parsed = crate::frontmatter::parse_skill_md(PINNED_SAMPLE).unwrap();
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let record = StoredSkillRef {
        name: "deploy",
        description: "Ships the app. Use when releasing.",
        id: "ops/deploy",
        root_index: 1,
        frontmatter: &parsed.frontmatter,
        warnings: &["a warning".to_owned()],
    };
    let bytes = postcard::to_stdvec(&record).unwrap();
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        (SNAPSHOT_VERSION, digest.as_str()),
        PINNED_ENCODING,
        "the stored shape of a skill changed: bump SNAPSHOT_VERSION in snapshot.rs and pin the new digest here"
    );
}

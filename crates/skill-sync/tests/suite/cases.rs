//! The five cases of SPEC §10, plus unrecorded folders and bundle removals.

use pretty_assertions::assert_eq;
use skill_sync::ManifestState;

use super::fixture::{Fixture, ids};

#[test]
fn new_skills_are_copied_recorded_and_marked_bundled() {
    let fx = Fixture::new();
    let report = fx.sync();
    assert_eq!(report.manifest, ManifestState::Missing);
    assert_eq!(report.added, ids(&["data/gamma", "ops/alpha", "ops/beta"]));
    assert_eq!(report.descriptions, ids(&["data", "ops"]));
    assert_eq!(fx.read_user("ops/alpha/references/notes.md"), "note\n");
    assert_eq!(
        fx.read_user("ops/DESCRIPTION.md"),
        "Keeping services alive.\n"
    );
    let provenance: serde_json::Value =
        serde_json::from_str(&fx.read_user("ops/alpha/.knack-provenance.json")).unwrap();
    assert_eq!(provenance["created_by"], "bundled");

    let manifest = fx.manifest();
    assert_eq!(manifest.entries.len(), 3);
    assert_eq!(manifest.entries["ops/alpha"], fx.hash_of("ops/alpha"));
    assert_eq!(manifest.set_hash.as_deref(), Some(fx.bundle().set_hash()));
    // The seeded copy, sidecar included, hashes like the bundle.
    let copy = skill_sync::disk::hash_dir(&fx.skills().join("ops/alpha")).unwrap();
    assert_eq!(copy, fx.hash_of("ops/alpha"));
}

#[test]
fn seeding_and_updating_leave_no_staging_folders() {
    let fx = Fixture::new();
    fx.sync();
    let staging = fx.skills().join(skill_sync::disk::STAGING_DIR);
    assert!(
        !staging.exists(),
        "seeding left {:?}",
        walkdir_names(&staging)
    );
    fx.write_src(
        "ops/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Use when v2\n---\n# Alpha v2\n",
    );
    fx.sync_if_needed();
    assert!(
        !staging.exists(),
        "an update left {:?}",
        walkdir_names(&staging)
    );
}

/// Every path under `dir`, for a failure message.
fn walkdir_names(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            todo.push(entry.path());
            out.push(entry.path());
        }
    }
    out
}

#[test]
fn an_unchanged_bundle_changes_nothing_and_takes_the_fast_path() {
    let fx = Fixture::new();
    fx.sync();
    let manifest_before = std::fs::read(fx.skills().join(".bundled_manifest")).unwrap();
    let again = fx.sync();
    assert_eq!(
        again.unchanged,
        ids(&["data/gamma", "ops/alpha", "ops/beta"])
    );
    assert!(!again.changed_anything());
    let fast = fx.sync_if_needed();
    assert!(fast.fast_path);
    assert!(fast.unchanged.is_empty(), "the fast path reads no skill");
    let manifest_after = std::fs::read(fx.skills().join(".bundled_manifest")).unwrap();
    assert_eq!(manifest_before, manifest_after);
}

#[test]
fn a_bundled_update_reaches_an_untouched_copy() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_src(
        "ops/alpha/SKILL.md",
        "---\nname: alpha\ndescription: Use when v2\n---\n# Alpha v2\n",
    );
    fx.write_src("ops/alpha/templates/new.md", "template\n");
    let report = fx.sync_if_needed();
    assert!(!report.fast_path);
    assert_eq!(report.updated, ids(&["ops/alpha"]));
    assert_eq!(report.unchanged, ids(&["data/gamma", "ops/beta"]));
    assert!(fx.read_user("ops/alpha/SKILL.md").contains("Alpha v2"));
    assert_eq!(fx.read_user("ops/alpha/templates/new.md"), "template\n");
    assert!(fx.user_exists("ops/alpha/.knack-provenance.json"));
    assert_eq!(fx.manifest().entries["ops/alpha"], fx.hash_of("ops/alpha"));
    assert!(fx.sync_if_needed().fast_path);
}

#[test]
fn a_copy_edited_by_the_user_is_kept_even_when_the_bundle_changes() {
    let fx = Fixture::new();
    fx.sync();
    let seeded_hash = fx.hash_of("ops/alpha");
    fx.write_user("ops/alpha/SKILL.md", "my own version\n");
    let report = fx.sync();
    assert_eq!(report.customized, ids(&["ops/alpha"]));

    fx.write_src("ops/alpha/SKILL.md", "bundled v2\n");
    let report = fx.sync();
    assert_eq!(report.customized, ids(&["ops/alpha"]));
    assert!(report.updated.is_empty());
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "my own version\n");
    // The recorded hash stays the one that was seeded.
    assert_eq!(fx.manifest().entries["ops/alpha"], seeded_hash);
}

#[test]
fn a_user_edit_that_matches_the_new_bundle_is_recorded_not_reported() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_src("ops/beta/SKILL.md", "same text\n");
    fx.write_user("ops/beta/SKILL.md", "same text\n");
    let report = fx.sync();
    assert!(report.customized.is_empty());
    assert!(report.unchanged.contains(&"ops/beta".to_owned()));
    assert_eq!(fx.manifest().entries["ops/beta"], fx.hash_of("ops/beta"));
}

#[test]
fn a_deleted_skill_stays_deleted_across_three_syncs() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();

    let first = fx.sync();
    assert_eq!(first.deleted, ids(&["ops/beta"]));
    // A new bundle version, even one that changes the deleted skill itself.
    fx.write_src("ops/beta/SKILL.md", "beta v2\n");
    let second = fx.sync_if_needed();
    assert!(!second.fast_path);
    assert_eq!(second.deleted, ids(&["ops/beta"]));
    let third = fx.sync_if_needed();
    assert!(third.fast_path);
    assert!(!fx.user_exists("ops/beta"));
    assert!(fx.manifest().entries.contains_key("ops/beta"));
}

#[test]
fn a_users_own_folder_at_a_new_bundled_path_is_kept_as_a_conflict() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_user("ops/delta/SKILL.md", "the user's own delta\n");
    fx.write_src("ops/delta/SKILL.md", "bundled delta\n");
    fx.write_src("ops/epsilon/SKILL.md", "bundled epsilon\n");
    let report = fx.sync();
    assert_eq!(report.conflicts, ids(&["ops/delta"]));
    assert_eq!(report.added, ids(&["ops/epsilon"]));
    assert_eq!(fx.read_user("ops/delta/SKILL.md"), "the user's own delta\n");
    assert!(!fx.manifest().entries.contains_key("ops/delta"));
    assert!(report.problems().iter().any(|p| p.contains("ops/delta")));
    // Still kept, and still not recorded, on the next sync.
    assert_eq!(fx.sync().conflicts, ids(&["ops/delta"]));
}

#[test]
fn an_identical_unrecorded_copy_is_adopted() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_src("ops/delta/SKILL.md", "delta\n");
    fx.write_user("ops/delta/SKILL.md", "delta\n");
    let report = fx.sync();
    assert_eq!(report.adopted, ids(&["ops/delta"]));
    assert_eq!(fx.manifest().entries["ops/delta"], fx.hash_of("ops/delta"));
}

#[test]
fn a_symlink_at_a_bundled_path_is_never_followed_or_replaced() {
    let fx = Fixture::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(fx.skills().join("ops")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), fx.skills().join("ops/alpha")).unwrap();
    let report = fx.sync();
    assert_eq!(report.conflicts, ids(&["ops/alpha"]));
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn skills_dropped_from_the_bundle_leave_the_manifest_only_when_gone() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::remove_dir_all(fx.src.path().join("ops/alpha")).unwrap();
    std::fs::remove_dir_all(fx.src.path().join("ops/beta")).unwrap();
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    let report = fx.sync();
    assert_eq!(report.cleaned, ids(&["ops/beta"]));
    let manifest = fx.manifest();
    assert!(
        manifest.entries.contains_key("ops/alpha"),
        "a copy still exists"
    );
    assert!(fx.user_exists("ops/alpha/SKILL.md"));
}

#[test]
fn a_missing_category_description_is_seeded_but_never_overwritten() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_user("ops/DESCRIPTION.md", "my words\n");
    std::fs::remove_file(fx.skills().join("data/DESCRIPTION.md")).unwrap();
    let report = fx.sync();
    assert_eq!(report.descriptions, ids(&["data"]));
    assert_eq!(fx.read_user("ops/DESCRIPTION.md"), "my words\n");
}

#[test]
fn opting_out_seeds_nothing() {
    let home = tempfile::tempdir().unwrap();
    let home = knack_config::KnackHome::at(home.path());
    let mut config = knack_config::Config::default();
    config.skills.bundled_opt_out = true;
    let outcome = skill_sync::seed_on_start(&home, &config).unwrap();
    assert!(outcome.is_none());
    assert!(!home.skills_dir().exists());
}

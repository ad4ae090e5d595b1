//! `list-modified`, `diff` and `reset [--restore]`.

use pretty_assertions::assert_eq;
use skill_sync::{Error, FileStatus, ResetOutcome};

use super::fixture::{Fixture, ids};

#[test]
fn list_modified_names_edited_copies_and_held_back_updates() {
    let fx = Fixture::new();
    fx.sync();
    assert!(
        skill_sync::list_modified(&fx.skills(), &fx.bundle())
            .unwrap()
            .is_empty()
    );
    fx.write_user("ops/alpha/SKILL.md", "edited\n");
    fx.write_user("data/gamma/references/extra.md", "mine\n");
    fx.write_src("data/gamma/SKILL.md", "gamma v2\n");
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    let modified = skill_sync::list_modified(&fx.skills(), &fx.bundle()).unwrap();
    let got: Vec<(&str, bool)> = modified
        .iter()
        .map(|m| (m.id.as_str(), m.bundled_changed))
        .collect();
    assert_eq!(got, [("data/gamma", true), ("ops/alpha", false)]);
}

#[test]
fn diff_shows_each_changed_file() {
    let fx = Fixture::new();
    fx.sync();
    let original = fx.read_user("ops/alpha/SKILL.md");
    fx.write_user(
        "ops/alpha/SKILL.md",
        &original.replace("step two", "step 2, my way"),
    );
    fx.write_user("ops/alpha/templates/mine.md", "added by me\n");
    std::fs::remove_file(fx.skills().join("ops/alpha/references/notes.md")).unwrap();

    let diff = skill_sync::diff(&fx.skills(), &fx.bundle(), "alpha").unwrap();
    assert_eq!(diff.id, "ops/alpha");
    let statuses: Vec<(&str, FileStatus)> = diff
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("SKILL.md", FileStatus::Modified),
            ("references/notes.md", FileStatus::Removed),
            ("templates/mine.md", FileStatus::Added),
        ]
    );
    let text = diff.files[0].diff.as_deref().unwrap();
    assert!(text.contains("--- bundled/ops/alpha/SKILL.md"), "{text}");
    assert!(text.contains("-step two\n"), "{text}");
    assert!(text.contains("+step 2, my way\n"), "{text}");
    assert!(
        diff.files[2]
            .diff
            .as_deref()
            .unwrap()
            .contains("+added by me")
    );
}

#[test]
fn diff_of_a_pristine_copy_is_empty_and_of_unknown_names_an_error() {
    let fx = Fixture::new();
    fx.sync();
    assert!(
        skill_sync::diff(&fx.skills(), &fx.bundle(), "ops/beta")
            .unwrap()
            .files
            .is_empty()
    );
    assert!(matches!(
        skill_sync::diff(&fx.skills(), &fx.bundle(), "nope"),
        Err(Error::NotBundled(_))
    ));
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    assert!(matches!(
        skill_sync::diff(&fx.skills(), &fx.bundle(), "beta"),
        Err(Error::NoCopy(_))
    ));
}

#[test]
fn reset_untracks_a_customized_copy_and_keeps_it() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_user("ops/alpha/SKILL.md", "edited\n");
    let outcome = skill_sync::reset(&fx.skills(), &fx.bundle(), "alpha", false).unwrap();
    assert_eq!(
        outcome,
        ResetOutcome::Untracked {
            id: "ops/alpha".into()
        }
    );
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "edited\n");
    assert!(!fx.manifest().entries.contains_key("ops/alpha"));
    assert!(
        skill_sync::list_modified(&fx.skills(), &fx.bundle())
            .unwrap()
            .is_empty()
    );
    // Later bundled versions leave the untracked copy alone.
    fx.write_src("ops/alpha/SKILL.md", "alpha v2\n");
    let report = fx.sync();
    assert_eq!(report.conflicts, ids(&["ops/alpha"]));
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "edited\n");
    // A second reset has nothing to forget.
    assert!(matches!(
        skill_sync::reset(&fx.skills(), &fx.bundle(), "alpha", false),
        Err(Error::NotTracked(_))
    ));
}

#[test]
fn reset_of_a_pristine_copy_rebaselines_it() {
    let fx = Fixture::new();
    fx.sync();
    let outcome = skill_sync::reset(&fx.skills(), &fx.bundle(), "ops/beta", false).unwrap();
    assert_eq!(
        outcome,
        ResetOutcome::Rebaselined {
            id: "ops/beta".into()
        }
    );
    assert_eq!(fx.manifest().entries["ops/beta"], fx.hash_of("ops/beta"));
}

#[test]
fn reset_of_a_deleted_skill_lets_the_next_start_seed_it_again() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    let outcome = skill_sync::reset(&fx.skills(), &fx.bundle(), "beta", false).unwrap();
    assert_eq!(
        outcome,
        ResetOutcome::Forgotten {
            id: "ops/beta".into()
        }
    );
    let report = fx.sync_if_needed();
    assert_eq!(report.added, ids(&["ops/beta"]));
}

#[test]
fn restore_replaces_the_copy_backs_up_the_edit_and_resumes_updates() {
    let fx = Fixture::new();
    fx.sync();
    fx.write_user("ops/alpha/SKILL.md", "edited\n");
    let outcome = skill_sync::reset(&fx.skills(), &fx.bundle(), "alpha", true).unwrap();
    let ResetOutcome::Restored { id, backup } = outcome else {
        panic!("expected restored, got {outcome:?}");
    };
    assert_eq!(id, "ops/alpha");
    let backup = backup.expect("the edited copy is kept");
    assert!(backup.starts_with(fx.skills().join(".restore-backups")));
    assert_eq!(
        std::fs::read_to_string(backup.join("SKILL.md")).unwrap(),
        "edited\n"
    );
    assert!(fx.read_user("ops/alpha/SKILL.md").contains("# Alpha"));
    assert!(
        skill_sync::list_modified(&fx.skills(), &fx.bundle())
            .unwrap()
            .is_empty()
    );
    assert!(fx.sync_if_needed().fast_path);

    fx.write_src("ops/alpha/SKILL.md", "alpha v2\n");
    assert_eq!(fx.sync().updated, ids(&["ops/alpha"]));
    assert_eq!(fx.read_user("ops/alpha/SKILL.md"), "alpha v2\n");
}

#[test]
fn restore_brings_back_a_deleted_skill_without_a_backup() {
    let fx = Fixture::new();
    fx.sync();
    std::fs::remove_dir_all(fx.skills().join("ops/beta")).unwrap();
    let outcome = skill_sync::reset(&fx.skills(), &fx.bundle(), "beta", true).unwrap();
    assert_eq!(
        outcome,
        ResetOutcome::Restored {
            id: "ops/beta".into(),
            backup: None
        }
    );
    assert!(fx.user_exists("ops/beta/SKILL.md"));
    assert!(!fx.user_exists(".restore-backups"));
}

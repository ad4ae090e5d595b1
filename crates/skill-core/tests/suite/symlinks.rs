//! Symbolic-link attacks on discovery, `skill_view`, `skill_manage`, history
//! and rollback: nothing outside the skills root is read, shown or written.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use knack_config::KnackHome;
use serde_json::{Value, json};
use skill_core::{
    Actor, DiscoveryOptions, EntryStatus, ManageAction, ManageContext, PreprocessOptions, Scope,
    SkillManageArgs, SkillRoot, ViewContext, WriteOrigin, history, skill_manage, skill_view,
};

use super::fixture::{Tree, discover_roots, names, root};

const SECRET: &str = "---\nname: secret\ndescription: Use when leaking\n---\nTOP SECRET\n";

fn md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Use when testing {name}\n---\n# {name}\n\nhold the line\n"
    )
}

fn view(set: &skill_core::SkillSet, name: &str) -> Value {
    let env = knack_config::EnvFile::default();
    let ctx = ViewContext {
        preprocess: PreprocessOptions::from_config(
            &knack_config::KnackHome::at("/nonexistent-knack-home"),
            &knack_config::Config::default(),
        ),
        session_id: None,
        env: &env,
    };
    skill_view(set, name, None, &ctx)
}

/// Every file (and link) under `dir` with its bytes, sorted.
fn contents(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_symlink() {
                let target = fs::read_link(&p).unwrap();
                out.push((p, target.into_os_string().into_encoded_bytes()));
            } else {
                let bytes = fs::read(&p).unwrap_or_default();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_skill_md_linked_out_of_the_root_is_never_read_and_doctor_says_why() {
    let t = Tree::new();
    let outside = Tree::new();
    outside.file("secret.md", SECRET);
    t.symlink(&outside.path("secret.md"), "leak/SKILL.md")
        .skill("fine", "fine", "Use when fine")
        .file(".store/shared.md", &md("shared"));
    // A link that stays inside the root is an ordinary SKILL.md.
    t.symlink(&t.path(".store/shared.md"), "shared/SKILL.md");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert_eq!(names(&set), vec!["user:fine", "user:shared"]);
    assert!(
        set.skills
            .iter()
            .all(|s| s.description != "Use when leaking")
    );
    let report = skill_core::doctor_report(&set);
    let leak = report
        .iter()
        .find(|e| e.path.ends_with("leak/SKILL.md"))
        .expect("doctor reports the link");
    assert_eq!(leak.status, EntryStatus::Skipped);
    assert!(
        leak.reason.contains("leads outside its skills root") && leak.reason.contains("never read"),
        "{}",
        leak.reason
    );
    let out = view(&set, "leak");
    assert_eq!(out["success"], json!(false));
    assert!(!out.to_string().contains("TOP SECRET"));
    assert_eq!(view(&set, "shared")["success"], json!(true));
}

#[test]
fn a_skill_md_swapped_for_a_link_after_discovery_is_not_shown() {
    let t = Tree::new();
    let outside = Tree::new();
    outside.file("secret.md", SECRET);
    t.skill("victim", "victim", "Use when attacked");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    fs::remove_file(t.path("victim/SKILL.md")).unwrap();
    symlink(outside.path("secret.md"), t.path("victim/SKILL.md")).unwrap();
    let out = view(&set, "victim");
    assert_eq!(out["success"], json!(false), "{out}");
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("leads outside its skills root")
    );
    assert!(!out.to_string().contains("TOP SECRET"));
}

#[test]
fn folders_linked_out_of_the_root_are_not_walked() {
    let t = Tree::new();
    let outside = Tree::new();
    outside.skill("cat/evil", "evil", "Use when outside");
    t.symlink(&outside.path("cat"), "cat")
        .skill("ok", "ok", "Use when ok");
    let set = discover_roots(vec![root(t.path(""), Scope::User)]);
    assert_eq!(names(&set), vec!["user:ok"]);
    assert!(
        set.notices
            .iter()
            .any(|n| n.contains("leads outside its root") && n.contains("not followed")),
        "{:?}",
        set.notices
    );
}

struct Arena {
    tmp: tempfile::TempDir,
    home: KnackHome,
    ctx: ManageContext,
    outside: PathBuf,
}

impl Arena {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = KnackHome::at(tmp.path().join("home"));
        let outside = tmp.path().join("outside");
        fs::create_dir_all(outside.join("references")).unwrap();
        fs::write(outside.join("SKILL.md"), md("victim")).unwrap();
        fs::write(outside.join("references/keep.md"), "keep\n").unwrap();
        fs::create_dir_all(home.skills_dir()).unwrap();
        let ctx = ManageContext {
            home: home.clone(),
            options: DiscoveryOptions::with_roots(vec![SkillRoot {
                path: home.skills_dir(),
                scope: Scope::User,
            }]),
            guard_writes: false,
            library: None,
            agent_writes: knack_config::AgentWrites::Direct,
            session_id: None,
        };
        Self {
            tmp,
            home,
            ctx,
            outside,
        }
    }

    fn skills(&self, rel: &str) -> PathBuf {
        self.home.skills_dir().join(rel)
    }

    fn run(&self, args: &SkillManageArgs) -> Value {
        skill_manage(&self.ctx, args, &WriteOrigin::new(Actor::User))
    }

    fn create(&self, name: &str) {
        let mut c = SkillManageArgs::new(ManageAction::Create, name);
        c.content = Some(md(name));
        let out = self.run(&c);
        assert_eq!(out["success"], json!(true), "{out}");
    }

    fn write_file(&self, name: &str, rel: &str, text: &str) -> Value {
        let mut w = SkillManageArgs::new(ManageAction::WriteFile, name);
        w.file_path = Some(rel.into());
        w.file_content = Some(text.into());
        self.run(&w)
    }

    fn patch(&self, name: &str, file: Option<&str>, old: &str, new: &str) -> Value {
        let mut p = SkillManageArgs::new(ManageAction::Patch, name);
        p.file_path = file.map(str::to_owned);
        p.old_string = Some(old.into());
        p.new_string = Some(new.into());
        self.run(&p)
    }

    /// Nothing but the skills, the history and the lock files beneath the
    /// root: no temp file, restore copy or pending version left behind.
    fn assert_no_leftovers(&self) {
        for (path, _) in contents(&self.home.skills_dir()) {
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                !name.contains(".knack-tmp-") && !name.contains("knack-restore"),
                "left behind: {}",
                path.display()
            );
            assert!(
                !path.to_string_lossy().contains("/.pending-"),
                "left behind: {}",
                path.display()
            );
        }
    }
}

fn refused(v: &Value, needle: &str) {
    assert_eq!(v["success"], json!(false), "accepted: {v:#}");
    let err = v["error"].as_str().unwrap_or_default();
    assert!(err.contains(needle), "error {err:?} lacks {needle:?}");
}

#[test]
fn writes_never_follow_a_linked_skill_folder_or_category() {
    let a = Arena::new();
    // Skill folders linked to real folders inside the root: found (reads may
    // follow links that stay inside), but never written through.
    fs::create_dir_all(a.skills(".store/real/references")).unwrap();
    fs::write(a.skills(".store/real/SKILL.md"), md("real")).unwrap();
    fs::write(a.skills(".store/real/references/r.md"), "r\n").unwrap();
    symlink(a.skills(".store/real"), a.skills("real")).unwrap();
    fs::create_dir_all(a.skills(".store/cat/inner")).unwrap();
    fs::write(a.skills(".store/cat/inner/SKILL.md"), md("inner")).unwrap();
    symlink(a.skills(".store/cat"), a.skills("cat")).unwrap();
    let before = contents(&a.skills(".store"));
    for name in ["real", "inner"] {
        let rule = "never through links";
        refused(&a.write_file(name, "references/new.md", "x\n"), rule);
        refused(&a.patch(name, None, "hold", "drop"), rule);
        refused(&a.patch(name, Some("references/r.md"), "r", "s"), rule);
        let mut e = SkillManageArgs::new(ManageAction::Edit, name);
        e.content = Some(md(name).replace("hold", "drop"));
        refused(&a.run(&e), rule);
        let mut r = SkillManageArgs::new(ManageAction::RemoveFile, name);
        r.file_path = Some("references/r.md".into());
        refused(&a.run(&r), rule);
        refused(
            &a.run(&SkillManageArgs::new(ManageAction::Delete, name)),
            "symbolic link",
        );
    }
    assert_eq!(
        contents(&a.skills(".store")),
        before,
        "a linked skill changed"
    );
    assert!(!history::history_root(&a.home).join("user_real-").exists());
    a.assert_no_leftovers();
}

#[test]
fn a_skill_md_that_is_a_link_is_never_written_through() {
    let a = Arena::new();
    a.create("victim");
    fs::write(a.skills(".store/other.md"), md("victim")).unwrap_or_else(|_| {
        fs::create_dir_all(a.skills(".store")).unwrap();
        fs::write(a.skills(".store/other.md"), md("victim")).unwrap();
    });
    fs::remove_file(a.skills("victim/SKILL.md")).unwrap();
    symlink(a.skills(".store/other.md"), a.skills("victim/SKILL.md")).unwrap();
    refused(
        &a.patch("victim", None, "hold", "drop"),
        "is a symbolic link",
    );
    assert_eq!(
        fs::read_to_string(a.skills(".store/other.md")).unwrap(),
        md("victim")
    );
    a.assert_no_leftovers();
}

#[test]
fn support_paths_and_the_lock_and_history_folders_refuse_links() {
    let a = Arena::new();
    a.create("victim");
    symlink(a.outside.join("references"), a.skills("victim/references")).unwrap();
    refused(
        &a.write_file("victim", "references/x.md", "x\n"),
        "'references' is a symbolic link",
    );
    fs::remove_file(a.skills("victim/references")).unwrap();
    let before = contents(&a.outside);
    // The lock and history folders beneath the root are not followed either.
    fs::remove_dir_all(a.skills(".locks")).unwrap();
    symlink(&a.outside, a.skills(".locks")).unwrap();
    refused(
        &a.write_file("victim", "references/x.md", "x\n"),
        "cannot lock",
    );
    fs::remove_file(a.skills(".locks")).unwrap();
    let kept = history::history_root(&a.home);
    fs::rename(&kept, a.tmp.path().join("history-aside")).unwrap();
    symlink(&a.outside, &kept).unwrap();
    refused(&a.write_file("victim", "references/x.md", "x\n"), "history");
    assert_eq!(
        contents(&a.outside),
        before,
        "something was written outside"
    );
    assert!(
        !a.skills("victim/references/x.md").exists(),
        "a refused write stayed"
    );
    a.assert_no_leftovers();
}

#[test]
fn rollback_refuses_a_folder_swapped_for_a_link_or_another_skill() {
    let a = Arena::new();
    a.create("victim");
    let out = a.write_file("victim", "references/notes.md", "v1\n");
    assert_eq!(out["success"], json!(true), "{out}");
    assert_eq!(
        a.patch("victim", None, "hold the line", "changed")["success"],
        json!(true)
    );
    let skill = a.skills("victim");
    let aside = a.skills(".aside");
    fs::rename(&skill, &aside).unwrap();

    // Swapped for a link out of the root: refused, the target untouched.
    symlink(&a.outside, &skill).unwrap();
    let before = contents(&a.outside);
    let err = history::rollback(&a.home, "victim", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("symbolic link") && err.contains("refused"),
        "{err}"
    );
    assert_eq!(contents(&a.outside), before);

    // Swapped for a link that stays inside the root: refused just the same.
    fs::remove_file(&skill).unwrap();
    symlink(&aside, &skill).unwrap();
    let aside_before = contents(&aside);
    let err = history::rollback(&a.home, "victim", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(contents(&aside), aside_before);

    // A real folder holding another skill is not the recorded one.
    fs::remove_file(&skill).unwrap();
    fs::create_dir_all(&skill).unwrap();
    fs::write(skill.join("SKILL.md"), md("intruder")).unwrap();
    let err = history::rollback(&a.home, "victim", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("different skill ('intruder')"), "{err}");
    assert_eq!(
        fs::read_to_string(skill.join("SKILL.md")).unwrap(),
        md("intruder")
    );

    // The real skill back in place rolls back as before.
    let versions = history::list(&a.home, "victim").unwrap().len();
    fs::remove_dir_all(&skill).unwrap();
    fs::rename(&aside, &skill).unwrap();
    history::rollback(&a.home, "victim", None).unwrap();
    assert_eq!(
        fs::read_to_string(skill.join("SKILL.md")).unwrap(),
        md("victim")
    );
    assert_eq!(
        history::list(&a.home, "victim").unwrap().len(),
        versions + 1
    );
    a.assert_no_leftovers();
}

#[test]
fn a_deleted_skill_is_not_restored_through_a_linked_category() {
    let a = Arena::new();
    let mut c = SkillManageArgs::new(ManageAction::Create, "victim");
    c.content = Some(md("victim"));
    c.category = Some("ops".into());
    assert_eq!(a.run(&c)["success"], json!(true));
    assert_eq!(
        a.run(&SkillManageArgs::new(ManageAction::Delete, "victim"))["success"],
        json!(true)
    );
    fs::remove_dir_all(a.skills("ops")).unwrap_or(());
    symlink(&a.outside, a.skills("ops")).unwrap();
    let before = contents(&a.outside);
    let err = history::rollback(&a.home, "victim", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(contents(&a.outside), before);
    a.assert_no_leftovers();
}

/// Swaps `path` for a link to `target` and back, over and over, until `stop`.
fn swapper(
    path: PathBuf,
    target: PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let aside = path.with_extension("aside");
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if fs::rename(&path, &aside).is_err() {
                std::thread::yield_now();
                continue;
            }
            if symlink(&target, &path).is_ok() {
                swaps += 1;
            }
            std::thread::yield_now();
            let _ = fs::remove_file(&path);
            if fs::rename(&aside, &path).is_err() {
                // A writer made a fresh folder meanwhile; keep that one.
                let _ = fs::remove_dir_all(&aside);
            }
            // Some time in the real state too, so writes get under way
            // before the next swap pulls the folder from under them.
            std::thread::sleep(std::time::Duration::from_micros(300));
        }
        swaps
    })
}

/// Many writers while another thread swaps a folder for a link out of the
/// root: every write lands beneath the root or is refused; none lands outside.
fn race(swapped: &str, writes: usize) {
    let a = Arc::new(Arena::new());
    a.create("victim");
    assert_eq!(
        a.write_file("victim", "references/seed.md", "seed\n")["success"],
        json!(true)
    );
    let before = contents(&a.outside);
    let stop = Arc::new(AtomicBool::new(false));
    let swap = swapper(a.skills(swapped), a.outside.clone(), stop.clone());
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let a = a.clone();
            std::thread::spawn(move || {
                let mut landed = 0;
                for i in 0..writes / 4 {
                    let rel = format!("references/w{}.md", (w * 7 + i) % 8);
                    let out = if i % 3 == 0 {
                        a.patch("victim", Some("references/seed.md"), "seed", "seed")
                    } else {
                        a.write_file("victim", &rel, &format!("{w}-{i}\n"))
                    };
                    if out["success"] == json!(true) {
                        landed += 1;
                    }
                }
                landed
            })
        })
        .collect();
    let landed: usize = writers.into_iter().map(|h| h.join().unwrap()).sum();
    stop.store(true, Ordering::Relaxed);
    let swaps = swap.join().unwrap();
    assert!(swaps > 0, "the swapper never swapped");
    assert_eq!(
        contents(&a.outside),
        before,
        "a write landed outside the root"
    );
    eprintln!("{swapped}: {landed} of {writes} writes landed beneath the root, {swaps} swaps");
}

#[test]
fn racing_a_references_link_swap_lands_no_write_outside() {
    race("victim/references", 200);
}

#[test]
fn racing_a_skill_folder_link_swap_lands_no_write_outside() {
    race("victim", 200);
}

//! Path attacks on `skill_manage`: every file_path, name and category that could
//! reach outside a skill is refused, and nothing lands outside the skill.

use std::fs;
use std::path::{Path, PathBuf};

use knack_config::KnackHome;
use serde_json::{Value, json};
use skill_core::{
    Actor, DiscoveryOptions, ManageAction, ManageContext, Scope, SkillManageArgs, SkillRoot,
    WriteOrigin, skill_manage,
};

struct Arena {
    _tmp: tempfile::TempDir,
    home: KnackHome,
    sentinel: PathBuf,
    ctx: ManageContext,
}

fn arena() -> Arena {
    let tmp = tempfile::tempdir().unwrap();
    let home = KnackHome::at(tmp.path().join("home"));
    let sentinel = tmp.path().join("sentinel");
    fs::create_dir_all(&sentinel).unwrap();
    let skills = home.skills_dir();
    let victim = skills.join("victim");
    fs::create_dir_all(victim.join("references")).unwrap();
    fs::write(
        victim.join("SKILL.md"),
        "---\nname: victim\ndescription: Use when attacked\n---\n# victim\n\nhold the line\n",
    )
    .unwrap();
    fs::write(victim.join("references/ok.md"), "fine\n").unwrap();
    // Links planted inside the skill, all pointing into the sentinel.
    std::os::unix::fs::symlink(&sentinel, victim.join("assets")).unwrap();
    fs::create_dir_all(victim.join("templates")).unwrap();
    std::os::unix::fs::symlink(
        sentinel.join("dangling.md"),
        victim.join("templates/dangling.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&sentinel, victim.join("scripts")).unwrap();
    // A symlinked category in the user root.
    std::os::unix::fs::symlink(&sentinel, skills.join("linkcat")).unwrap();
    let ctx = ManageContext {
        home: home.clone(),
        options: DiscoveryOptions::with_roots(vec![SkillRoot {
            path: skills,
            scope: Scope::User,
        }]),
        // The planted links already make the guard unhappy; the path rules
        // must refuse on their own, so the guard is off here.
        guard_writes: false,
        library: None,
        agent_writes: knack_config::AgentWrites::Direct,
        session_id: None,
    };
    Arena {
        _tmp: tmp,
        home,
        sentinel,
        ctx,
    }
}

/// Every file (and link) under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(p);
            } else if t.is_symlink() {
                out.push((
                    p.clone(),
                    fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else {
                out.push((p.clone(), fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn refused(v: &Value, attack: &str) {
    assert_eq!(
        v["success"],
        json!(false),
        "attack {attack:?} was accepted: {v:#}"
    );
    let err = v["error"].as_str().unwrap_or_default();
    assert!(err.len() > 10, "attack {attack:?}: no clear error: {v:#}");
}

const FILE_PATH_ATTACKS: &[&str] = &[
    "../x.md",
    "../../../../../../tmp/x.md",
    "references/../../x.md",
    "references/../SKILL.md",
    "references/..",
    "scripts/../../../../etc/x",
    "/etc/passwd",
    "/tmp/x.md",
    "~/x.md",
    "~root/x.md",
    "references\\..\\..\\x.md",
    "..\\x.md",
    "references/%2e%2e/%2e%2e/x.md",
    "%2e%2e/x.md",
    "references/..%2fx.md",
    "references/x\0.md",
    "references/x.md\n",
    "references/\u{2215}..\u{2215}x.md",
    "references/\u{ff0f}x.md",
    "references/\u{2024}\u{2024}/x.md",
    "references/\u{ff0e}\u{ff0e}/x.md",
    "references/\u{202e}dm.x",
    "references/x\u{200b}.md",
    "C:/x.md",
    "C:\\x.md",
    "references//x.md",
    "references/./x.md",
    "./references/x.md",
    "references/",
    "",
    "notes.md",
    ".git/config",
    "SKILL.md/../x.md",
    "assets/escape.md",
    "assets/sub/deep.md",
    "scripts/run.sh",
    "templates/dangling.md",
];

#[test]
fn file_path_attacks_are_refused_and_nothing_leaves_the_skill() {
    let a = arena();
    let victim = a.home.skills_dir().join("victim");
    let before = snapshot(&victim);
    let origin = WriteOrigin::new(Actor::User);
    let mut tried = 0;
    for attack in FILE_PATH_ATTACKS {
        let mut w = SkillManageArgs::new(ManageAction::WriteFile, "victim");
        w.file_path = Some((*attack).to_owned());
        w.file_content = Some("owned\n".into());
        refused(&skill_manage(&a.ctx, &w, &origin), attack);
        let mut r = SkillManageArgs::new(ManageAction::RemoveFile, "victim");
        r.file_path = Some((*attack).to_owned());
        refused(&skill_manage(&a.ctx, &r, &origin), attack);
        // Patching an empty path means SKILL.md, which is legitimate.
        if !attack.is_empty() {
            let mut p = SkillManageArgs::new(ManageAction::Patch, "victim");
            p.file_path = Some((*attack).to_owned());
            p.old_string = Some("fine".into());
            p.new_string = Some("owned".into());
            refused(&skill_manage(&a.ctx, &p, &origin), attack);
        }
        tried += 1;
    }
    assert!(tried >= 30, "only {tried} attacks");
    assert_eq!(
        fs::read_dir(&a.sentinel).unwrap().count(),
        0,
        "the sentinel was written"
    );
    assert_eq!(snapshot(&victim), before, "the skill changed");
    // A clean path still works, so the refusals above are about the paths.
    let mut w = SkillManageArgs::new(ManageAction::WriteFile, "victim");
    w.file_path = Some("references/new.md".into());
    w.file_content = Some("ok\n".into());
    assert_eq!(skill_manage(&a.ctx, &w, &origin)["success"], json!(true));
}

#[test]
fn name_and_category_attacks_are_refused() {
    let a = arena();
    let skills = a.home.skills_dir();
    let before = snapshot(&skills);
    let origin = WriteOrigin::new(Actor::Agent);
    let content =
        |name: &str| format!("---\nname: {name}\ndescription: Use when attacked\n---\nbody\n");
    let names = [
        "../evil",
        "../../evil",
        "/tmp/evil",
        "~evil",
        "evil/..",
        "a/b",
        "a\\b",
        "%2e%2e",
        "evil\0",
        "ev\u{2215}il",
        ".",
        "..",
        "",
        ".hidden",
        "e\u{200b}vil",
        "EVIL",
        "evil\n",
    ];
    for name in names {
        let mut c = SkillManageArgs::new(ManageAction::Create, name);
        c.content = Some(content(name));
        refused(&skill_manage(&a.ctx, &c, &origin), name);
    }
    let categories = [
        "../../escape",
        "/abs",
        "ok/../../x",
        "~",
        "a\\..",
        "%2e%2e",
        "\u{ff0e}\u{ff0e}",
        "a//b",
        "linkcat",
        "linkcat/deeper",
    ];
    for category in categories {
        let mut c = SkillManageArgs::new(ManageAction::Create, "fine-name");
        c.content = Some(content("fine-name"));
        c.category = Some(category.to_owned());
        refused(&skill_manage(&a.ctx, &c, &origin), category);
    }
    let queries = [
        "../victim",
        "/abs/victim",
        "~/victim",
        "user:../victim",
        "victim/../../x",
        "vic\0tim",
        "victim\\..",
    ];
    for query in queries {
        let mut p = SkillManageArgs::new(ManageAction::Patch, query);
        p.old_string = Some("hold".into());
        p.new_string = Some("drop".into());
        refused(&skill_manage(&a.ctx, &p, &origin), query);
        refused(
            &skill_manage(
                &a.ctx,
                &SkillManageArgs::new(ManageAction::Delete, query),
                &origin,
            ),
            query,
        );
    }
    assert!(names.len() + categories.len() + queries.len() >= 30);
    assert_eq!(
        fs::read_dir(&a.sentinel).unwrap().count(),
        0,
        "the sentinel was written"
    );
    let after: Vec<_> = snapshot(&skills)
        .into_iter()
        .filter(|(p, _)| !p.starts_with(skills.join(".locks")))
        .collect();
    assert_eq!(after, before);
}

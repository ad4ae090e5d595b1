//! The learning loop's guards on skill writes: near-duplicates refused (or
//! warned about, for a person), and the inbox that holds the agent's writes
//! until the user accepts them.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use knack_config::{AgentWrites, KnackHome};
use serde_json::{Value, json};
use skill_core::manage::inbox::{self, EntryKind};
use skill_core::{
    Actor, DiscoveryOptions, ManageAction, ManageContext, Scope, SkillManageArgs, SkillRoot,
    WriteOrigin, history, skill_manage,
};

struct Library {
    _tmp: tempfile::TempDir,
    home: KnackHome,
    ctx: ManageContext,
}

fn library(mode: AgentWrites) -> Library {
    let tmp = tempfile::tempdir().unwrap();
    let home = KnackHome::at(tmp.path().join("home"));
    fs::create_dir_all(home.skills_dir()).unwrap();
    let ctx = ManageContext {
        home: home.clone(),
        options: DiscoveryOptions::with_roots(vec![SkillRoot {
            path: home.skills_dir(),
            scope: Scope::User,
        }]),
        guard_writes: true,
        library: None,
        agent_writes: mode,
        session_id: Some("s-test".into()),
    };
    Library {
        _tmp: tmp,
        home,
        ctx,
    }
}

const DEPLOY: (&str, &str, &str) = (
    "deploy-k8s",
    "Deploy an application to a Kubernetes cluster with kubectl. Use when shipping a service to k8s.",
    "# Deploy\n\n1. Build the image and push it to the registry.\n2. kubectl apply the manifests.\n3. Watch the rollout status until it is complete.\n",
);

const NEAR_COPY: (&str, &str, &str) = (
    "k8s-deploy",
    "Deploys applications to Kubernetes clusters using kubectl. Use when a service must ship to k8s.",
    "# Deploying\n\n1. Build and push the image to the registry.\n2. Apply the manifests with kubectl.\n3. Watch the rollout status.\n",
);

const DIFFERENT: (&str, &str, &str) = (
    "postgres-backup",
    "Back up a Postgres database with pg_dump. Use when a dump of the data is needed.",
    "# Backup\n\n1. Run pg_dump in the custom format.\n2. Copy the file to the backup bucket.\n",
);

fn skill_md((name, description, body): (&str, &str, &str)) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}")
}

impl Library {
    fn write(&self, args: &SkillManageArgs, actor: Actor) -> Value {
        let viewed = HashSet::new();
        let origin = match actor {
            Actor::Review => WriteOrigin::review(&viewed),
            other => WriteOrigin::new(other),
        };
        skill_manage(&self.ctx, args, &origin)
    }

    fn create(&self, skill: (&str, &str, &str), actor: Actor) -> Value {
        let mut args = SkillManageArgs::new(ManageAction::Create, skill.0);
        args.content = Some(skill_md(skill));
        self.write(&args, actor)
    }

    fn names(&self) -> Vec<String> {
        let (set, _) = skill_core::discover(&self.ctx.options);
        let mut names: Vec<String> = set.skills.iter().map(|s| s.name.clone()).collect();
        names.sort();
        names
    }
}

fn ok(v: &Value) {
    assert_eq!(v["success"], json!(true), "{v:#}");
}

#[test]
fn a_near_duplicate_is_refused_for_the_agent_and_the_review_and_named() {
    let lib = library(AgentWrites::Direct);
    ok(&lib.create(DEPLOY, Actor::Agent));
    for actor in [Actor::Agent, Actor::Review] {
        let v = lib.create(NEAR_COPY, actor);
        assert_eq!(v["success"], json!(false), "{v:#}");
        let error = v["error"].as_str().unwrap();
        assert!(error.contains("'deploy-k8s'"), "{error}");
        assert!(error.contains("patch"), "{error}");
        assert_eq!(v["similar_skill"], json!("user:deploy-k8s"));
        assert!(v["hint"].as_str().unwrap().contains("write_file"), "{v:#}");
    }
    assert_eq!(lib.names(), ["deploy-k8s"]);
    // A different task is created as usual.
    ok(&lib.create(DIFFERENT, Actor::Agent));
    assert_eq!(lib.names(), ["deploy-k8s", "postgres-backup"]);
}

#[test]
fn a_persons_near_duplicate_is_written_with_a_warning() {
    let lib = library(AgentWrites::Direct);
    ok(&lib.create(DEPLOY, Actor::User));
    let v = lib.create(NEAR_COPY, Actor::User);
    ok(&v);
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("'deploy-k8s'")),
        "{v:#}"
    );
    assert_eq!(lib.names(), ["deploy-k8s", "k8s-deploy"]);
}

#[test]
fn an_agent_write_without_a_trigger_is_warned() {
    let lib = library(AgentWrites::Direct);
    let v = lib.create(
        (
            "csv-stats",
            "Summarise a CSV file's columns",
            "Read it with pandas.\n",
        ),
        Actor::Agent,
    );
    ok(&v);
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("Use when")),
        "{v:#}"
    );
}

#[test]
fn an_umbrella_spanning_several_skills_is_written_with_a_note_to_absorb_them() {
    let lib = library(AgentWrites::Direct);
    let web = (
        "deploy-web",
        "Deploy the web app to the cluster. Use when shipping the web app.",
        "# Web\n\nBuild the web image, push it, kubectl apply the web manifests.\n",
    );
    let api = (
        "deploy-api",
        "Deploy the api to the cluster. Use when shipping the api.",
        "# API\n\nBuild the api image, push it, kubectl apply the api manifests.\n",
    );
    ok(&lib.create(web, Actor::Agent));
    ok(&lib.create(api, Actor::Agent));
    let umbrella = (
        "deploy",
        "Deploy the web app or the api to the cluster. Use when shipping the web app or the api.",
        "# Deploy\n\n## Web\nBuild the web image, push it, kubectl apply the web manifests.\n\n## API\nBuild the api image, push it, kubectl apply the api manifests.\n",
    );
    let v = lib.create(umbrella, Actor::Review);
    ok(&v);
    let warning = v["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .find(|w| w.contains("absorbed_into"))
        .unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        warning.contains("'deploy-web'") && warning.contains("'deploy-api'"),
        "{warning}"
    );
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn inbox_round_trip_for_a_new_skill() {
    let lib = library(AgentWrites::Inbox);
    let mut args = SkillManageArgs::new(ManageAction::Create, DIFFERENT.0);
    args.content = Some(skill_md(DIFFERENT));
    args.category = Some("data".into());
    let v = lib.write(&args, Actor::Review);
    ok(&v);
    assert!(v["message"].as_str().unwrap().contains("inbox"), "{v:#}");
    // Held: not discovered, so in no index; listed in the inbox.
    assert!(lib.names().is_empty(), "{:?}", lib.names());
    let entries = inbox::list(&lib.home);
    assert_eq!(entries.len(), 1);
    assert_eq!(inbox::count(&lib.home), 1);
    let entry = &entries[0];
    assert_eq!(entry.name, "postgres-backup");
    assert_eq!(entry.kind, EntryKind::New);
    assert_eq!(entry.actor, "review");
    assert_eq!(entry.session_id.as_deref(), Some("s-test"));
    assert_eq!(entry.category.as_deref(), Some("data"));
    // A support file joins the entry, not the library.
    let mut file = SkillManageArgs::new(ManageAction::WriteFile, "postgres-backup");
    file.file_path = Some("references/restore.md".into());
    file.file_content = Some("Restore with pg_restore.\n".into());
    ok(&lib.write(&file, Actor::Agent));
    assert!(lib.names().is_empty());
    let diff = inbox::diff(&lib.ctx, "postgres-backup").unwrap();
    assert!(diff.contains("+name: postgres-backup"), "{diff}");
    assert!(diff.contains("+Restore with pg_restore."), "{diff}");
    // Accepting moves it in, as the user's write of an agent's skill.
    let accepted = inbox::accept(&lib.ctx, "postgres-backup").unwrap();
    assert_eq!(accepted.qualified_id, "user:data/postgres-backup");
    assert_eq!(lib.names(), ["postgres-backup"]);
    let dir = lib.home.skills_dir().join("data/postgres-backup");
    assert_eq!(
        fs::read_to_string(dir.join("references/restore.md")).unwrap(),
        "Restore with pg_restore.\n"
    );
    assert_eq!(skill_core::manage::provenance(&dir).created_by, "agent");
    let records = history::list(&lib.home, "postgres-backup").unwrap();
    assert!(!records.is_empty());
    assert!(
        records.iter().all(|r| r.actor == Actor::User),
        "{records:?}"
    );
    assert!(inbox::list(&lib.home).is_empty());
    assert!(!inbox::inbox_dir(&lib.home).join("postgres-backup").exists());
}

#[test]
fn inbox_reject_leaves_nothing() {
    let lib = library(AgentWrites::Inbox);
    let before = tree(&lib.home.skills_dir());
    ok(&lib.create(DIFFERENT, Actor::Agent));
    inbox::reject(&lib.home, "postgres-backup").unwrap();
    assert!(inbox::list(&lib.home).is_empty());
    assert!(
        !inbox::inbox_dir(&lib.home).exists(),
        "an empty inbox folder is not left behind"
    );
    assert!(lib.names().is_empty());
    assert_eq!(tree(&lib.home.skills_dir()), before);
    let err = inbox::reject(&lib.home, "postgres-backup").unwrap_err();
    assert!(err.message.contains("no skill named"), "{err}");
}

#[test]
fn inbox_holds_a_change_to_a_live_skill_until_accepted() {
    let lib = library(AgentWrites::Inbox);
    // The user's own writes are never held.
    ok(&lib.create(DEPLOY, Actor::User));
    let live = lib.home.skills_dir().join("deploy-k8s/SKILL.md");
    let original = fs::read_to_string(&live).unwrap();
    let mut patch = SkillManageArgs::new(ManageAction::Patch, "deploy-k8s");
    patch.old_string = Some("3. Watch the rollout".into());
    patch.new_string = Some("3. Check the namespace first.\n4. Watch the rollout".into());
    ok(&lib.write(&patch, Actor::Agent));
    assert_eq!(
        fs::read_to_string(&live).unwrap(),
        original,
        "the live skill is untouched"
    );
    let entry = inbox::entry(&lib.home, "deploy-k8s").unwrap();
    assert_eq!(entry.kind, EntryKind::Change);
    assert_eq!(entry.target.as_deref(), Some("user:deploy-k8s"));
    assert_eq!(entry.writes, ["patch SKILL.md"]);
    let diff = inbox::diff(&lib.ctx, "deploy-k8s").unwrap();
    assert!(diff.contains("+3. Check the namespace first."), "{diff}");
    assert!(!diff.contains("+name:"), "only the change: {diff}");
    inbox::accept(&lib.ctx, "deploy-k8s").unwrap();
    assert!(
        fs::read_to_string(&live)
            .unwrap()
            .contains("3. Check the namespace first.")
    );
    let last = history::list(&lib.home, "deploy-k8s")
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!((last.action.as_str(), last.actor), ("edit", Actor::User));
    assert!(inbox::list(&lib.home).is_empty());
}

#[test]
fn an_unused_inbox_lists_nothing_and_creates_nothing() {
    let lib = library(AgentWrites::Inbox);
    assert!(inbox::list(&lib.home).is_empty());
    assert_eq!(inbox::count(&lib.home), 0);
    assert!(!inbox::inbox_dir(&lib.home).exists());
}

//! The skills toolset wrappers: list, view (recording what was viewed), and manage
//! (cache invalidation, catalog changes, the review's read-before-write rule).

use std::collections::BTreeSet;

use agent_loop::tools::REVIEW_TOOLS;
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};

fn skill(env: &ToolEnv, rel: &str, name: &str) {
    env.write(
        &env.home_path(&format!("skills/{rel}/SKILL.md")),
        &format!("---\nname: {name}\ndescription: Does {name} things.\n---\n# {name}\n\nSession ${{KNACK_SESSION_ID}}.\n"),
    );
}

fn skill_md(name: &str, body: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Use when testing the {name} flow.\n---\n# {name}\n\n{body}\n"
    )
}

#[tokio::test]
async fn list_and_view_wrap_skill_core_and_record_views() {
    let env = ToolEnv::new();
    skill(&env, "devops/deploy", "deploy");
    skill(&env, "notes", "notes");
    let list = env.call("skills_list", json!({})).await;
    assert_ok(&list);
    assert_eq!(list["count"], 2);
    let devops = env.call("skills_list", json!({"category": "devops"})).await;
    assert_eq!(devops["skills"][0]["qualified_id"], "user:devops/deploy");

    let view = env.call("skill_view", json!({"name": "deploy"})).await;
    assert_ok(&view);
    assert!(view["content"].as_str().unwrap().contains("# deploy"));
    let viewed = env.ctx.viewed();
    assert!(
        viewed.contains("deploy") && viewed.contains("user:devops/deploy"),
        "{viewed:?}"
    );
    assert_eq!(env.ctx.viewed_paths.lock().unwrap().len(), 1);

    let missing = env.call("skill_view", json!({"name": "nope"})).await;
    assert_eq!(missing["success"], false);
    assert!(!env.ctx.viewed().contains("nope"));
}

#[tokio::test]
async fn skill_manage_writes_invalidate_the_cache_and_record_catalog_changes() {
    let env = ToolEnv::new();
    assert!(env.registry.get("skill_manage").unwrap().is_mutating());
    let bad = env.call("skill_manage", json!({"name": "x"})).await;
    assert!(error_of(&bad).contains("action"), "{bad}");

    // Prime the cache so a stale set would show.
    assert_eq!(env.call("skills_list", json!({})).await["count"], 0);
    let created = env
        .call(
            "skill_manage",
            json!({"action": "create", "name": "rollout", "category": "devops",
                   "content": skill_md("rollout", "1. Roll it out.")}),
        )
        .await;
    assert_ok(&created);
    assert_eq!(env.call("skills_list", json!({})).await["count"], 1);
    let delta = env.ctx.catalog.take().unwrap();
    assert_eq!(delta.added, BTreeSet::from(["rollout".to_owned()]));
    assert!(delta.removed.is_empty());

    // A patch changes no names: nothing to report.
    let patched = env
        .call(
            "skill_manage",
            json!({"action": "patch", "name": "rollout", "old_string": "Roll it out.", "new_string": "Roll it out slowly."}),
        )
        .await;
    assert_ok(&patched);
    assert!(env.ctx.catalog.take().is_none());

    let deleted = env
        .call(
            "skill_manage",
            json!({"action": "delete", "name": "rollout"}),
        )
        .await;
    assert_ok(&deleted);
    assert_eq!(
        env.ctx.catalog.take().unwrap().removed,
        BTreeSet::from(["rollout".to_owned()])
    );
    assert_eq!(env.call("skills_list", json!({})).await["count"], 0);
}

#[tokio::test]
async fn the_review_may_only_patch_what_it_viewed_in_this_review() {
    let env = ToolEnv::new();
    let created = env
        .call(
            "skill_manage",
            json!({"action": "create", "name": "probe", "content": skill_md("probe", "Step one.")}),
        )
        .await;
    assert_ok(&created);
    // A foreground view does not count for the review.
    env.call("skill_view", json!({"name": "probe"})).await;
    let review = env
        .ctx
        .for_review(REVIEW_TOOLS.iter().map(|t| t.to_string()).collect());
    let patch = json!({"action": "patch", "name": "probe", "old_string": "Step one.", "new_string": "Step one, carefully."});
    let refused = env
        .registry
        .dispatch_value("skill_manage", patch.clone(), &review)
        .await
        .unwrap();
    assert!(!refused.success(), "{}", refused.value);
    assert!(
        refused.value["error"].as_str().unwrap().contains("read"),
        "{}",
        refused.value
    );

    let viewed = env
        .registry
        .dispatch_value("skill_view", json!({"name": "probe"}), &review)
        .await
        .unwrap();
    assert!(viewed.success());
    let allowed = env
        .registry
        .dispatch_value("skill_manage", patch, &review)
        .await
        .unwrap();
    assert!(allowed.success(), "{}", allowed.value);
}

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

#[tokio::test]
async fn skills_search_finds_a_skill_by_its_body_and_rebuilds_after_a_write() {
    let env = ToolEnv::new();
    skill(&env, "notes", "notes");
    env.write(
        &env.home_path("skills/media/gif-maker/SKILL.md"),
        "---\nname: gif-maker\ndescription: Makes animations.\n---\n# GIF\n\nUse ffmpeg palettegen to shrink the frames.\n",
    );
    let found = env
        .call(
            "skills_search",
            json!({"query": "shrink frames with palettegen"}),
        )
        .await;
    assert_ok(&found);
    assert_eq!(found["results"][0]["name"], "gif-maker");
    assert_eq!(found["results"][0]["qualified_id"], "user:media/gif-maker");
    assert_eq!(found["results"][0]["id"], "media/gif-maker");
    assert!(found["results"][0]["score"].as_f64().unwrap() > 0.0);

    // A skill written through the tools is searchable at once.
    let created = env
        .call(
            "skill_manage",
            json!({"action": "create", "name": "kite-flyer",
                   "content": skill_md("kite-flyer", "Check the wind gauge before launching kites.")}),
        )
        .await;
    assert_ok(&created);
    let found = env
        .call(
            "skills_search",
            json!({"query": "wind gauge kites", "limit": 1}),
        )
        .await;
    assert_eq!(found["results"].as_array().unwrap().len(), 1);
    assert_eq!(found["results"][0]["name"], "kite-flyer");

    let bad = env.call("skills_search", json!({})).await;
    assert_eq!(bad["success"], false, "{bad}");
}

#[tokio::test]
async fn manual_only_skills_are_kept_from_the_models_tools() {
    let env = ToolEnv::new();
    env.write(
        &env.home_path("skills/deploy-prod/SKILL.md"),
        "---\nname: deploy-prod\ndescription: Use when shipping.\ndisable-model-invocation: true\n---\nShip it.\n",
    );
    skill(&env, "notes", "notes");
    let list = env.call("skills_list", json!({})).await;
    assert_eq!(list["count"], 1, "{list}");
    let view = env.call("skill_view", json!({"name": "deploy-prod"})).await;
    assert!(
        error_of(&view).contains("invoked by the user only"),
        "{view}"
    );
    let search = env
        .call("skills_search", json!({"query": "shipping deploy prod"}))
        .await;
    assert!(search["results"].as_array().unwrap().is_empty(), "{search}");
}

#[tokio::test]
async fn skills_list_pages_fit_the_tool_output_cap() {
    let mut config = knack_config::Config::default();
    config.tools.max_output_chars = 4_000;
    let env = ToolEnv::with_config(config);
    for i in 0..120 {
        skill(&env, &format!("c/skill-{i:03}"), &format!("skill-{i:03}"));
    }
    let mut offset = 0;
    let mut names = Vec::new();
    loop {
        let page = env.call("skills_list", json!({"offset": offset})).await;
        assert_ok(&page);
        assert!(
            page.to_string().len() <= 4_000,
            "{}",
            page.to_string().len()
        );
        names.extend(
            page["skills"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].clone()),
        );
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(names.len(), 120);
}

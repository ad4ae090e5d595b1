//! The registry: fixed order, byte-stable specs, whitelist refusals, bad calls as results.

use std::collections::BTreeSet;

use agent_loop::model::freeze_tools;
use agent_loop::tools::{REVIEW_TOOLS, TOOLSETS};
use agent_loop::{ToolRegistry, Toolset};
use serde_json::json;

use super::tool_env::{ToolEnv, assert_ok, error_of};

fn all_toolsets() -> Vec<String> {
    knack_config::AgentConfig::default().toolsets
}

#[test]
fn specs_are_byte_identical_across_builds() {
    let first = freeze_tools(ToolRegistry::for_toolsets(&all_toolsets()).specs())
        .unwrap()
        .unwrap();
    let second = freeze_tools(ToolRegistry::for_toolsets(&all_toolsets()).specs())
        .unwrap()
        .unwrap();
    assert_eq!(first.get(), second.get());
    assert!(
        first.get().len() > 1000,
        "specs carry schemas: {}",
        first.get().len()
    );
}

#[test]
fn tools_follow_the_toolset_table_whatever_the_config_order() {
    let reversed: Vec<String> = all_toolsets().into_iter().rev().collect();
    let registry = ToolRegistry::for_toolsets(&reversed);
    let expected: Vec<&str> = TOOLSETS
        .iter()
        .flat_map(|(_, tools)| tools.iter().copied())
        .collect();
    assert_eq!(registry.names(), expected);

    let only = ToolRegistry::for_toolsets(&["memory".into(), "nonsense".into(), "skills".into()]);
    assert_eq!(
        only.names(),
        [
            "skills_list",
            "skill_view",
            "skill_manage",
            "skills_search",
            "memory"
        ]
    );
    for tool in only.tools() {
        assert!(matches!(tool.toolset(), Toolset::Skills | Toolset::Memory));
    }
}

#[test]
fn every_spec_is_an_openai_function_with_an_object_schema() {
    let registry = ToolRegistry::for_toolsets(&all_toolsets());
    for spec in registry.specs() {
        assert_eq!(spec["type"], "function", "{spec}");
        let function = &spec["function"];
        assert!(function["name"].as_str().is_some_and(|n| !n.is_empty()));
        assert!(
            function["description"]
                .as_str()
                .is_some_and(|d| d.len() > 20)
        );
        assert_eq!(function["parameters"]["type"], "object", "{spec}");
        assert!(function["parameters"]["properties"].is_object(), "{spec}");
        let text = function["parameters"].to_string();
        assert!(!text.contains("\"null\""), "no nullable unions: {text}");
    }
    let terminal = registry.get("terminal").unwrap();
    assert!(terminal.is_mutating());
    assert!(!registry.get("read_file").unwrap().is_mutating());
    assert_eq!(
        registry.specs()[registry
            .names()
            .iter()
            .position(|n| *n == "read_file")
            .unwrap()]["function"]["parameters"]["required"],
        json!(["path"])
    );
}

#[tokio::test]
async fn invalid_json_and_unknown_tools_come_back_as_results() {
    let env = ToolEnv::new();
    let bad = env.call_raw("read_file", "{\"path\": ").await;
    assert!(error_of(&bad).contains("not valid JSON"), "{bad}");
    assert!(bad["hint"].is_string());

    let not_object = env.call_raw("read_file", "[1, 2]").await;
    assert!(
        error_of(&not_object).contains("JSON object"),
        "{not_object}"
    );

    let unknown = env.call_raw("browser_open", "{}").await;
    assert!(error_of(&unknown).contains("browser_open"), "{unknown}");
    assert!(
        unknown["hint"].as_str().unwrap().contains("read_file"),
        "{unknown}"
    );

    let wrong_type = env.call("read_file", json!({"path": 5})).await;
    assert!(
        error_of(&wrong_type).contains("invalid arguments"),
        "{wrong_type}"
    );

    let extra = env
        .call("read_file", json!({"path": "x", "colour": "red"}))
        .await;
    assert!(error_of(&extra).contains("colour"), "{extra}");

    // Empty argument text means no arguments.
    let listed = env.call_raw("skills_list", "").await;
    assert_ok(&listed);
}

#[tokio::test]
async fn a_review_context_refuses_tools_outside_its_whitelist() {
    let env = ToolEnv::new();
    let allowed: BTreeSet<String> = REVIEW_TOOLS.iter().map(|t| t.to_string()).collect();
    let review = env.ctx.for_review(allowed);
    let marker = env.cwd_path("marker");
    let refused = env
        .registry
        .dispatch(
            "terminal",
            &json!({"command": format!("touch {}", marker.display())}).to_string(),
            &review,
        )
        .await
        .unwrap()
        .value;
    let error = error_of(&refused);
    assert!(error.contains("not allowed in a review"), "{error}");
    assert!(
        refused["hint"].as_str().unwrap().contains("skill_manage"),
        "{refused}"
    );
    assert!(!marker.exists(), "the refused command did not run");

    let listed = env
        .registry
        .dispatch("skills_list", "{}", &review)
        .await
        .unwrap();
    assert!(listed.success());
}

//! Golden prompts for typical homes. Paths are redacted to [CWD] and [HOME].

use prompt_builder::{LayerKind, Platform, build_system_prompt};

use super::fixture::Fixture;

fn full(fx: &Fixture) -> String {
    let (prompt, warnings) = fx.build();
    assert!(warnings.is_empty(), "{warnings:?}");
    fx.redact(&prompt.text())
}

#[test]
fn no_skills() {
    let fx = Fixture::new();
    let text = full(&fx);
    assert!(!text.contains("## Skills"));
    insta::assert_snapshot!(text);
}

#[test]
fn three_categories() {
    let fx = Fixture::new();
    fx.category_description("devops", "Deploying and operating services");
    fx.category_description("mlops/training", "Fine-tuning models");
    fx.skill(
        "devops/deploy-k8s",
        "Roll out a release to the Kubernetes cluster",
        "",
    );
    fx.skill(
        "devops/rotate-certs",
        "Use when TLS certificates are close to expiry and must be renewed on every edge node",
        "",
    );
    fx.skill(
        "mlops/training/axolotl",
        "Fine-tune with axolotl configs",
        "",
    );
    fx.skill(
        "writing/changelog",
        "Write a changelog entry from merged PRs",
        "",
    );
    fx.skill("scratch", "A skill directly under the root", "");
    fx.write(
        &fx.home().join("memories/MEMORY.md"),
        "The user's main repo lives in ~/src/app\n§\nTests run with `make check`, not cargo test\n",
    );
    fx.write(
        &fx.home().join("memories/USER.md"),
        "Prefers short answers.\n",
    );
    let text = full(&fx);
    // Under the per-skill cap a description is shown whole.
    assert!(text.contains(
        "- rotate-certs: Use when TLS certificates are close to expiry and must be renewed on every edge node\n"
    ));
    insta::assert_snapshot!(text);
}

#[test]
fn ambiguous_names() {
    let mut fx = Fixture::new();
    fx.skill("devops/deploy", "Deploy the web app", "");
    fx.skill("infra/deploy", "Deploy the database", "");
    fx.skill("tools/lint", "Run the linters", "");
    fx.external_skill("devops/deploy", "Deploy from the shared team library");
    let text = full(&fx);
    assert!(text.contains("- deploy [user:devops/deploy]: Deploy the web app"));
    assert!(text.contains("- deploy [external:devops/deploy]: "));
    assert!(text.contains("- lint: Run the linters"));
    insta::assert_snapshot!(text);
}

#[test]
fn conditions_hide_and_show() {
    let mut fx = Fixture::new();
    fx.skill(
        "web/scrape",
        "Needs a browser toolset",
        "requires_toolsets: [browser]\n",
    );
    fx.skill(
        "web/curl-fetch",
        "Fallback when the browser is missing",
        "metadata:\n  knack:\n    fallback_for_toolsets: [browser]\n",
    );
    fx.skill(
        "shell/manual-shell",
        "Only when there is no terminal tool",
        "fallback_for_tools: [terminal]\n",
    );
    fx.skill(
        "shell/bash-tricks",
        "Needs the terminal tool",
        "metadata:\n  hermes:\n    requires_tools: [terminal]\n",
    );
    fx.skill(
        "other/windows-only",
        "Gated by platform",
        "platforms: [windows]\n",
    );
    fx.config.skills.disabled = vec!["old-tool".into()];
    fx.skill("other/old-tool", "Disabled by config", "");
    fx.skill("other/plain", "Always shown", "");
    let text = full(&fx);
    for hidden in ["scrape", "manual-shell", "windows-only", "old-tool"] {
        assert!(!text.contains(&format!("- {hidden}")), "{hidden} shown");
    }
    for shown in ["curl-fetch", "bash-tricks", "plain"] {
        assert!(text.contains(&format!("- {shown}: ")), "{shown} hidden");
    }
    insta::assert_snapshot!(text);

    // Without the terminal toolset the fallback appears and the dependent skill goes.
    fx.toolsets.retain(|t| t != "terminal");
    fx.tools.retain(|t| t != "terminal");
    let (prompt, _) = build_system_prompt(&fx.inputs(Platform::Cli), &fx.skill_set());
    let index = &prompt.layer(LayerKind::SkillsIndex).unwrap().text;
    assert!(index.contains("- manual-shell: "));
    assert!(!index.contains("- bash-tricks"));
}

#[test]
fn over_budget() {
    let mut fx = Fixture::new();
    for i in 0..12 {
        fx.skill(
            &format!("big/skill-{i:02}"),
            "A description long enough to cost real characters here",
            "",
        );
    }
    for i in 0..4 {
        fx.skill(&format!("small/tool-{i}"), "Short one", "");
    }
    fx.skill("tiny/only", "The one tiny skill", "");
    fx.config.skills.index_budget_chars = 1_000;
    let (prompt, _) = fx.build();
    let index = &prompt.layer(LayerKind::SkillsIndex).unwrap().text;
    assert!(index.chars().count() <= 1_000, "{}", index.chars().count());
    // Each category's first skills keep their descriptions longest.
    assert!(index.contains("- only: The one tiny skill"), "{index}");
    assert!(index.contains("- tool-0: Short one"), "{index}");
    assert!(index.contains("\n- skill-11\n"), "{index}");
    assert!(
        index.contains("listed skills are shown by name only"),
        "{index}"
    );
    insta::assert_snapshot!(fx.redact(&prompt.text()));
}

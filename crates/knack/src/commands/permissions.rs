//! `knack permissions list`: the permission rules in force (`permissions.allow` and
//! `permissions.deny` in config.yaml), one per line, with where each is written.

use serde_json::{Value, json};

use crate::cli::PermissionsCommand;
use crate::context::Context;
use crate::exit;
use crate::output::{print_json, print_table};

pub fn run(cmd: PermissionsCommand) -> anyhow::Result<u8> {
    let ctx = Context::load_unseeded()?;
    match cmd {
        PermissionsCommand::List(flag) => list(&ctx, flag.json),
    }
}

/// One rule as listed: what it does, where it is written, and whether it applies.
struct Listed {
    effect: &'static str,
    rule: String,
    scope: &'static str,
    source: String,
    applied: bool,
}

fn list(ctx: &Context, json_out: bool) -> anyhow::Result<u8> {
    let source = ctx.home.config_path().display().to_string();
    let user = knack_config::Config::load(&ctx.home)?.permissions;
    let mut rules: Vec<Listed> = Vec::new();
    let mut add = |effect, list: &[String], scope, source: &str, applied| {
        rules.extend(list.iter().map(|rule| Listed {
            effect,
            rule: rule.clone(),
            scope,
            source: source.to_owned(),
            applied,
        }));
    };
    // Deny first: it wins over any allow rule.
    add("deny", &user.deny, "user", &source, true);
    if let Some(project) = &ctx.project_rules {
        let path = project.path.display().to_string();
        add("deny", &project.rules.deny, "project", &path, true);
        add("allow", &user.allow, "user", &source, true);
        add(
            "allow",
            &project.rules.allow,
            "project",
            &path,
            project.trusted,
        );
    } else {
        add("allow", &user.allow, "user", &source, true);
    }
    if json_out {
        let items: Vec<Value> = rules
            .iter()
            .map(|r| {
                json!({"rule": r.rule, "effect": r.effect, "scope": r.scope,
                       "source": r.source, "applied": r.applied})
            })
            .collect();
        print_json(&Value::Array(items));
        return Ok(exit::OK);
    }
    if rules.is_empty() {
        println!(
            "No permission rules. An \"always\" answer in the TUI adds one to permissions.allow \
             in {source}; see docs/approvals.md for writing them by hand."
        );
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = rules
        .iter()
        .map(|r| {
            let effect = if r.applied {
                r.effect.to_owned()
            } else {
                format!("{} (not applied: untrusted project)", r.effect)
            };
            vec![effect, r.rule.clone(), r.scope.to_owned(), r.source.clone()]
        })
        .collect();
    print_table(&["effect", "rule", "scope", "source"], &rows);
    if rules.iter().any(|r| !r.applied) {
        println!(
            "A project's allow rules apply once you trust it: `knack skills trust` in the project."
        );
    }
    Ok(exit::OK)
}

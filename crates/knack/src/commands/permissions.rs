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

fn list(ctx: &Context, json_out: bool) -> anyhow::Result<u8> {
    let source = ctx.home.config_path().display().to_string();
    let permissions = &ctx.config.permissions;
    // Deny first: it wins over any allow rule.
    let rules: Vec<(&str, &String)> = permissions
        .deny
        .iter()
        .map(|rule| ("deny", rule))
        .chain(permissions.allow.iter().map(|rule| ("allow", rule)))
        .collect();
    if json_out {
        let items: Vec<Value> = rules
            .iter()
            .map(|(effect, rule)| {
                json!({"rule": rule, "effect": effect, "scope": "user", "source": source})
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
        .map(|(effect, rule)| vec![(*effect).to_owned(), (*rule).clone(), source.clone()])
        .collect();
    print_table(&["effect", "rule", "source"], &rows);
    Ok(exit::OK)
}

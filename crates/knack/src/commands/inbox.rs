//! `knack skills inbox [diff|accept|reject NAME]`: the skills the agent and
//! the review wrote while `skills.agent_writes` is `inbox`, and the user's say
//! over each.

use skill_core::ManageContext;
use skill_core::manage::inbox::{self, EntryKind};

use crate::cli::{InboxArgs, InboxCommand};
use crate::context::Context;
use crate::exit;
use crate::output::{dim, print_json, print_table};

pub fn run(ctx: &Context, args: InboxArgs) -> anyhow::Result<u8> {
    let manage = ManageContext::new(&ctx.home, &ctx.config, &ctx.cwd);
    let refused = |r: skill_core::Refused| exit::failed(r.to_string());
    match args.command {
        None => list(ctx, args.json),
        Some(InboxCommand::Diff(arg)) => {
            let diff = inbox::diff(&manage, &arg.name).map_err(refused)?;
            if diff.is_empty() {
                println!("Accepting '{}' would change nothing.", arg.name);
            } else {
                print!("{diff}");
            }
            Ok(exit::OK)
        }
        Some(InboxCommand::Accept(arg)) => {
            let accepted = inbox::accept(&manage, &arg.name).map_err(refused)?;
            println!(
                "Accepted '{}' into the library as {} ({}).",
                accepted.name,
                accepted.qualified_id,
                if accepted.writes.is_empty() {
                    "nothing differed".to_owned()
                } else {
                    accepted.writes.join(", ")
                }
            );
            println!(
                "{}",
                dim("Recorded in its history as your write; `knack skills rollback` undoes it.")
            );
            Ok(exit::OK)
        }
        Some(InboxCommand::Reject(arg)) => {
            inbox::reject(&ctx.home, &arg.name).map_err(refused)?;
            println!(
                "Rejected '{}': it is gone from the inbox, and the library is unchanged.",
                arg.name
            );
            Ok(exit::OK)
        }
    }
}

fn list(ctx: &Context, json: bool) -> anyhow::Result<u8> {
    let entries = inbox::list(&ctx.home);
    if json {
        let list: Vec<serde_json::Value> = entries.iter().map(inbox::entry_json).collect();
        print_json(&serde_json::json!({"count": list.len(), "skills": list}));
        return Ok(exit::OK);
    }
    if entries.is_empty() {
        println!("The skills inbox is empty.");
        if ctx.config.skills.agent_writes == knack_config::AgentWrites::Direct {
            println!(
                "{}",
                dim(
                    "skills.agent_writes is direct: the agent's skills go straight into the library."
                )
            );
        }
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                e.name.clone(),
                match e.kind {
                    EntryKind::New => "new".to_owned(),
                    EntryKind::Change => {
                        format!("change to {}", e.target.as_deref().unwrap_or("?"))
                    }
                },
                e.actor.clone(),
                e.session_id.clone().unwrap_or_else(|| "-".into()),
                e.updated_at.replace('T', " "),
                e.writes.join(", "),
            ]
        })
        .collect();
    print_table(
        &["NAME", "KIND", "BY", "SESSION", "UPDATED", "WRITES"],
        &rows,
    );
    println!(
        "{}",
        dim(
            "`knack skills inbox diff NAME` shows a change; `accept NAME` moves it in, `reject NAME` drops it."
        )
    );
    Ok(exit::OK)
}

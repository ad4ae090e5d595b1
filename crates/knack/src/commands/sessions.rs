//! `knack sessions list|show|search|delete`: the stored conversations in state.db,
//! as tables and transcripts for people and as CONTRACT.md's JSON for scripts.

use agent_loop::model::Role;
use agent_loop::{SessionStore, StoredSession};

use crate::cli::SessionsCommand;
use crate::exit;
use crate::output::{bold, dim, ellipsize, print_json, print_table};

/// Characters of a tool result shown in a human transcript.
const TOOL_RESULT_PREVIEW_CHARS: usize = 300;
/// Hits `sessions search` prints.
const SEARCH_LIMIT: usize = 20;

pub fn run(cmd: SessionsCommand) -> anyhow::Result<u8> {
    let home = knack_config::KnackHome::from_env()?;
    let store = SessionStore::open(&home)?;
    match cmd {
        SessionsCommand::List(flag) => list(&store, flag.json),
        SessionsCommand::Show { id, json } => show(&store, &id, json),
        SessionsCommand::Search { query, json } => search(&store, &query, json),
        SessionsCommand::Delete { id } => delete(&store, &id),
    }
}

fn list(store: &SessionStore, json_out: bool) -> anyhow::Result<u8> {
    let sessions = store.list()?;
    if json_out {
        print_json(&serde_json::to_value(&sessions)?);
        return Ok(exit::OK);
    }
    if sessions.is_empty() {
        println!("No sessions yet.");
        return Ok(exit::OK);
    }
    let rows: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            vec![
                s.id.clone(),
                s.started_at.clone(),
                s.message_count.to_string(),
                s.model.clone(),
                ellipsize(s.title.as_deref().unwrap_or("-"), 60),
            ]
        })
        .collect();
    print_table(&["ID", "STARTED", "MESSAGES", "MODEL", "TITLE"], &rows);
    Ok(exit::OK)
}

fn load(store: &SessionStore, id: &str) -> anyhow::Result<StoredSession> {
    // A missing id is exit 1 with the error's own hint, like any failure.
    Ok(store.load_session(id)?)
}

fn show(store: &SessionStore, id: &str, json_out: bool) -> anyhow::Result<u8> {
    let session = load(store, id)?;
    if json_out {
        print_json(&serde_json::to_value(&session)?);
        return Ok(exit::OK);
    }
    let meta = &session.meta;
    println!("{}", bold(&format!("session {}", meta.id)));
    println!(
        "{}",
        dim(&format!(
            "started {} · model {} · {} messages · {}",
            meta.started_at,
            if meta.model.is_empty() {
                "-"
            } else {
                &meta.model
            },
            session.messages.len(),
            if meta.cwd.is_empty() { "-" } else { &meta.cwd },
        ))
    );
    for stored in &session.messages {
        let message = &stored.message;
        println!();
        let text = message.content.as_deref().unwrap_or("").trim_end();
        match message.role {
            Role::System => println!("{}\n{text}", bold("system:")),
            Role::User => println!("{}\n{text}", bold("you:")),
            Role::Assistant => {
                println!("{}", bold("assistant:"));
                if !text.is_empty() {
                    println!("{text}");
                }
                for call in message.tool_calls.iter().flatten() {
                    println!(
                        "{}",
                        dim(&format!(
                            "→ {}({})",
                            call.function.name,
                            ellipsize(&call.function.arguments, 200)
                        ))
                    );
                }
            }
            Role::Tool => println!(
                "{}",
                dim(&format!(
                    "← {}",
                    ellipsize(&text.replace('\n', " "), TOOL_RESULT_PREVIEW_CHARS)
                ))
            ),
        }
    }
    Ok(exit::OK)
}

fn search(store: &SessionStore, query: &str, json_out: bool) -> anyhow::Result<u8> {
    let hits = store.search(query, SEARCH_LIMIT, None)?;
    if json_out {
        print_json(&serde_json::to_value(&hits)?);
        return Ok(exit::OK);
    }
    if hits.is_empty() {
        println!("No message matches '{query}'.");
        return Ok(exit::OK);
    }
    for hit in &hits {
        println!(
            "{}  {}  {}",
            hit.session_id,
            dim(&format!("{:<9}", hit.role)),
            hit.snippet.replace('\n', " ")
        );
    }
    Ok(exit::OK)
}

fn delete(store: &SessionStore, id: &str) -> anyhow::Result<u8> {
    store.delete(id)?;
    println!("Deleted session {id}.");
    Ok(exit::OK)
}

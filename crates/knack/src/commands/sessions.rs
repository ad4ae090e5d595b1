//! `knack sessions list|show|search|delete`: the stored conversations in state.db,
//! as tables and transcripts for people and as CONTRACT.md's JSON for scripts.

use agent_loop::model::Role;
use agent_loop::{SessionStore, StoredSession, UsageTotals};

use crate::cli::SessionsCommand;
use crate::exit;
use crate::output::{bold, dim, ellipsize, print_json, print_table};
use crate::terminal_text::escape;

/// Characters of a tool result shown in a human transcript.
const TOOL_RESULT_PREVIEW_CHARS: usize = 300;
/// Hits `sessions search` prints.
const SEARCH_LIMIT: usize = 20;

pub fn run(cmd: SessionsCommand) -> anyhow::Result<u8> {
    if let SessionsCommand::Compact { id, model } = cmd {
        return compact(&id, &model);
    }
    let home = knack_config::KnackHome::from_env()?;
    let store = SessionStore::open(&home)?;
    match cmd {
        SessionsCommand::List(flag) => list(&store, flag.json),
        SessionsCommand::Show { id, json } => show(&store, &id, json),
        SessionsCommand::Search { query, json } => search(&store, &query, json),
        SessionsCommand::Delete { id } => delete(&store, &id),
        SessionsCommand::Compact { .. } => Ok(exit::OK),
    }
}

/// Resumes the session, summarises its older history with its model (the
/// same system prompt and tools, purpose `compact`), and stores the result:
/// the next `--resume` starts from it.
fn compact(id: &str, flags: &crate::cli::ModelArgs) -> anyhow::Result<u8> {
    use agent_loop::compaction::CompactionOutcome;
    use agent_loop::session::{EventSink, Session, SessionOptions};

    let ctx = crate::context::Context::load()?;
    let choice = ctx.model(&flags.flags())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let (events, _rx) = EventSink::channel();
        let options = SessionOptions {
            resume: Some(id.to_owned()),
            review: false,
            context_window: choice.context_window,
            ..ctx
                .session_setup(prompt_builder::Platform::Cli)
                .options(choice.model.clone())
        };
        let mut session = Session::start(options, choice.client, events)
            .map_err(|e| exit::failed(e.to_string()))?;
        match session
            .compact()
            .await
            .map_err(|e| exit::failed(e.to_string()))?
        {
            CompactionOutcome::Compacted { before, after } => {
                println!("compacted {id}: about {before} → {after} tokens");
            }
            CompactionOutcome::NothingToDo => {
                println!("{id} is too short to compact: nothing was changed");
            }
        }
        Ok(exit::OK)
    })
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
    // A missing id is exit 1, like any failure, with the closest id or the error's own hint.
    store
        .load_session(id)
        .map_err(|e| exit::failed(explain_unknown(store, id, e)))
}

/// The message for an id no stored session has: the closest stored id when
/// one is a typo away, else the error's own hint. Other errors as they are.
pub(crate) fn explain_unknown(store: &SessionStore, id: &str, err: agent_loop::Error) -> String {
    if !matches!(err, agent_loop::Error::SessionNotFound(_)) {
        return err.to_string();
    }
    let ids: Vec<String> = store
        .list()
        .map(|sessions| sessions.into_iter().map(|s| s.id).collect())
        .unwrap_or_default();
    match crate::suggest::closest_by_edits(id, ids.iter().map(String::as_str)) {
        Some(near) => format!("no session with id '{id}'; did you mean '{near}'?"),
        None => err.to_string(),
    }
}

fn show(store: &SessionStore, id: &str, json_out: bool) -> anyhow::Result<u8> {
    let session = load(store, id)?;
    if json_out {
        print_json(&serde_json::to_value(&session)?);
        return Ok(exit::OK);
    }
    // Everything below came from the model, its tools or the folder it ran in: shown, never
    // obeyed by the terminal.
    let esc = |text: &str| escape(text).into_owned();
    let meta = &session.meta;
    println!("{}", bold(&format!("session {}", meta.id)));
    println!(
        "{}",
        dim(&format!(
            "started {} · model {} · {} messages · {}",
            meta.started_at,
            if meta.model.is_empty() {
                "-".to_owned()
            } else {
                esc(&meta.model)
            },
            session.messages.len(),
            if meta.cwd.is_empty() {
                "-".to_owned()
            } else {
                esc(&meta.cwd)
            },
        ))
    );
    if let Some(line) = usage_line(&session.usage) {
        println!("{}", dim(&line));
        // The split matters once something besides the turns cost tokens.
        if session.usage_by_purpose.keys().any(|p| *p != "turn") {
            for (purpose, usage) in &session.usage_by_purpose {
                println!("{}", dim(&purpose_line(purpose, usage, &session.usage)));
            }
        }
    }
    for c in &session.compactions {
        println!(
            "{}",
            dim(&format!(
                "compacted {} · about {} → {} tokens · messages before #{} summarised",
                c.created_at, c.before_tokens, c.after_tokens, c.first_kept_seq
            ))
        );
    }
    for stored in &session.messages {
        let message = &stored.message;
        println!();
        let text = esc(message.content.as_deref().unwrap_or("").trim_end());
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
                            esc(&call.function.name),
                            ellipsize(&esc(&call.function.arguments), 200)
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

/// One line totalling the session's tokens and cost; `None` before any
/// request reported usage.
fn usage_line(usage: &UsageTotals) -> Option<String> {
    if usage.requests == 0 {
        return None;
    }
    let plural = if usage.requests == 1 { "" } else { "s" };
    let mut line = format!(
        "usage: {} request{plural} · {} fresh input · {} cache read · {} cache write · {} output tokens",
        usage.requests,
        usage.fresh_input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
    );
    if usage.reasoning_tokens > 0 {
        line.push_str(&format!(" ({} reasoning)", usage.reasoning_tokens));
    }
    if let Some(cost) = usage.cost_usd {
        line.push_str(&format!(" · ${cost:.4}"));
        let unpriced = usage.requests - usage.priced_requests.min(usage.requests);
        if unpriced > 0 {
            line.push_str(&format!(" ({unpriced} without prices not counted)"));
        }
    }
    Some(line)
}

/// One purpose's part of the session's usage: its requests, tokens, cost
/// and share of all tokens.
fn purpose_line(purpose: &str, usage: &UsageTotals, all: &UsageTotals) -> String {
    let tokens = |u: &UsageTotals| {
        u.fresh_input_tokens + u.cache_read_tokens + u.cache_write_tokens + u.output_tokens
    };
    let share = tokens(usage) * 100 / tokens(all).max(1);
    let plural = if usage.requests == 1 { "" } else { "s" };
    let mut line = format!(
        "  {purpose}: {} request{plural} · {} input · {} output tokens · {share} % of the tokens",
        usage.requests,
        usage.fresh_input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        usage.output_tokens,
    );
    if let Some(cost) = usage.cost_usd {
        line.push_str(&format!(" · ${cost:.4}"));
    }
    line
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
    let styled = crate::output::color_enabled();
    for hit in &hits {
        println!(
            "{}  {}  {}",
            hit.session_id,
            dim(&format!("{:<9}", hit.role)),
            // Escaped before knack's own highlighting is added.
            highlight_hits(&escape(&hit.snippet.replace('\n', " ")), styled)
        );
    }
    Ok(exit::OK)
}

/// The store marks each match in a snippet with `**` on both sides (the
/// `--json` shape keeps them). People get the match in bold and underlined
/// on a terminal, and plain text elsewhere: never the raw markers. A
/// marker without its pair (a snippet cut inside one) is left as written.
fn highlight_hits(snippet: &str, styled: bool) -> String {
    let parts: Vec<&str> = snippet.split("**").collect();
    let pairs = (parts.len() - 1) / 2;
    let mut out = String::with_capacity(snippet.len());
    for (i, part) in parts.iter().enumerate() {
        let marked = i % 2 == 1 && i <= pairs * 2;
        if i > pairs * 2 {
            out.push_str("**");
        }
        if marked && styled {
            out.push_str(&format!("\x1b[1;4m{part}\x1b[0m"));
        } else {
            out.push_str(part);
        }
    }
    out
}

fn delete(store: &SessionStore, id: &str) -> anyhow::Result<u8> {
    let id = store
        .resolve_id(id)
        .map_err(|e| exit::failed(explain_unknown(store, id, e)))?;
    store.delete(&id)?;
    println!("Deleted session {id}.");
    Ok(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_hits_lose_their_markers_and_are_styled_only_on_request() {
        let snippet = "…the **heron** flew over the **heron** nest…";
        assert_eq!(
            highlight_hits(snippet, false),
            "…the heron flew over the heron nest…"
        );
        assert_eq!(
            highlight_hits(snippet, true),
            "…the \x1b[1;4mheron\x1b[0m flew over the \x1b[1;4mheron\x1b[0m nest…"
        );
        assert_eq!(highlight_hits("no hits here", true), "no hits here");
        // A lone marker is text, kept as written.
        assert_eq!(highlight_hits("a **hit** and 2**", false), "a hit and 2**");
    }
}

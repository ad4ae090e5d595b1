//! The `session_search` tool: full-text search over the messages of earlier sessions,
//! so the agent can recall what was said or decided before (the current session is excluded).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolFuture, Toolset, parameters_schema, parse_args};
use crate::session_store::SessionStore;

const MAX_HITS: usize = 10;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words to look for; every word must occur in a message.
    query: String,
    /// Most hits to return (default and maximum 10).
    limit: Option<usize>,
}

pub struct SessionSearch;

impl Tool for SessionSearch {
    fn name(&self) -> &'static str {
        "session_search"
    }
    fn toolset(&self) -> Toolset {
        Toolset::SessionSearch
    }
    fn description(&self) -> &'static str {
        "Search the messages of your earlier sessions with the user by keywords. Use it when \
         the user refers to something discussed before, or when earlier work may already hold \
         the answer. Returns session ids, roles and text snippets."
    }
    fn parameters(&self) -> Value {
        parameters_schema::<SearchArgs>()
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: SearchArgs = parse_args(self.name(), args)?;
            if args.query.trim().is_empty() {
                return Err(ToolError::model("query is empty; give a few keywords."));
            }
            let limit = args.limit.unwrap_or(MAX_HITS).clamp(1, MAX_HITS);
            let store = match &ctx.sessions {
                Some(store) => Arc::clone(store),
                None => Arc::new(SessionStore::open(&ctx.home).map_err(|e| {
                    ToolError::model(format!("cannot open the session store: {e}"))
                })?),
            };
            let session_id = ctx.session_id.clone();
            let query = args.query;
            let hits =
                tokio::task::spawn_blocking(move || store.search(&query, limit, Some(&session_id)))
                    .await
                    .map_err(|e| ToolError::Fatal(format!("session search task failed: {e}")))?
                    .map_err(|e| ToolError::model(format!("session search failed: {e}")))?;
            let empty = hits.is_empty();
            let mut out = json!({"success": true, "count": hits.len(), "results": hits});
            if empty {
                out["message"] = json!("No earlier session mentions all of these words.");
            }
            Ok(out)
        })
    }
}

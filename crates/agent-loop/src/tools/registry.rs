//! The tool registry: built once per session from the enabled toolsets, in a fixed order,
//! it renders the frozen `tools` array and dispatches calls (whitelist, argument parsing, errors).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{
    Tool, ToolContext, ToolError, files, memory, session_search, skills, terminal, web_fetch,
};
use crate::{Error, Result};

/// Every built-in toolset and its tools, in the fixed order specs are built.
/// The system prompt gets the names of the session's tools from the registry
/// (never from its own copy of this table).
pub const TOOLSETS: [(&str, &[&str]); 6] = [
    (
        "skills",
        &["skills_list", "skill_view", "skill_manage", "skills_search"],
    ),
    ("terminal", &["terminal"]),
    (
        "file",
        &["read_file", "write_file", "patch", "search_files"],
    ),
    ("memory", &["memory"]),
    ("session_search", &["session_search"]),
    ("web", &["web_fetch"]),
];

/// The tools the self-improvement review may call.
pub const REVIEW_TOOLS: [&str; 6] = [
    "skills_list",
    "skill_view",
    "skill_manage",
    "read_file",
    "search_files",
    "memory",
];

/// What a dispatched call produced: the result object the model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    pub value: Value,
}

impl ToolReply {
    fn failure(error: &str, hint: Option<&str>) -> Self {
        Self {
            value: ToolError::failure_object(error, hint),
        }
    }

    pub fn success(&self) -> bool {
        self.value.get("success").and_then(Value::as_bool) == Some(true)
    }

    /// The text of the `tool` message.
    pub fn content(&self) -> String {
        self.value.to_string()
    }
}

/// Collects tools, then freezes them into a [`ToolRegistry`].
#[derive(Default)]
pub struct ToolRegistryBuilder {
    tools: Vec<Arc<dyn Tool>>,
    mcp: Option<Arc<mcp_client::McpHub>>,
}

impl ToolRegistryBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the built-in tools of every enabled toolset, in [`TOOLSETS`] order
    /// (the order in config.yaml does not matter; unknown names add nothing).
    pub fn builtin_toolsets(mut self, enabled: &[String]) -> Self {
        for (set, _) in TOOLSETS {
            if enabled.iter().any(|name| name.trim() == set) {
                for tool in builtin_tools(set) {
                    self = self.tool(tool);
                }
            }
        }
        self
    }

    /// Adds one tool; a second tool with a name already taken is ignored so
    /// the first registration wins deterministically.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        if self.tools.iter().all(|t| t.name() != tool.name()) {
            self.tools.push(tool);
        } else {
            tracing::warn!(tool = tool.name(), "duplicate tool registration ignored");
        }
        self
    }

    /// Adds the tools of the session's MCP servers after the built-in ones.
    /// A name that is too long or already taken is left out, with a warning
    /// in the log: the model never sees two tools with one name.
    pub fn mcp(mut self, hub: &Arc<mcp_client::McpHub>) -> Self {
        let taken: Vec<String> = self.tools.iter().map(|t| t.name().to_owned()).collect();
        let (tools, refused) = super::mcp_tools(hub, &taken);
        for reason in refused {
            tracing::warn!("{reason}");
        }
        self.tools.extend(tools);
        self.mcp = Some(Arc::clone(hub));
        self
    }

    /// The names taken so far.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    pub fn build(self) -> ToolRegistry {
        let specs = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name(),
                        "description": tool.description(),
                        "parameters": tool.parameters(),
                    }
                })
            })
            .collect();
        let index = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| (tool.name().to_owned(), i))
            .collect();
        ToolRegistry {
            tools: self.tools,
            index,
            specs,
            mcp: self.mcp,
        }
    }
}

fn builtin_tools(toolset: &str) -> Vec<Arc<dyn Tool>> {
    match toolset {
        "skills" => vec![
            Arc::new(skills::SkillsList),
            Arc::new(skills::SkillView),
            Arc::new(skills::SkillManage),
            Arc::new(skills::SkillsSearch),
        ],
        "terminal" => vec![Arc::new(terminal::Terminal)],
        "file" => vec![
            Arc::new(files::ReadFile),
            Arc::new(files::WriteFile),
            Arc::new(files::Patch),
            Arc::new(files::SearchFiles),
        ],
        "memory" => vec![Arc::new(memory::Memory)],
        "session_search" => vec![Arc::new(session_search::SessionSearch)],
        "web" => vec![Arc::new(web_fetch::WebFetch)],
        _ => Vec::new(),
    }
}

/// The session's tools: fixed order, fixed spec bytes.
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    index: HashMap<String, usize>,
    specs: Vec<Value>,
    /// The MCP servers behind the `mcp__*` tools, kept alive with the registry.
    mcp: Option<Arc<mcp_client::McpHub>>,
}

impl ToolRegistry {
    pub fn builder() -> ToolRegistryBuilder {
        ToolRegistryBuilder::new()
    }

    /// The built-in tools of the enabled toolsets.
    pub fn for_toolsets(enabled: &[String]) -> Self {
        ToolRegistryBuilder::new().builtin_toolsets(enabled).build()
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The MCP servers whose tools this registry holds, if any were added.
    pub fn mcp(&self) -> Option<&Arc<mcp_client::McpHub>> {
        self.mcp.as_ref()
    }

    pub fn tools(&self) -> impl Iterator<Item = &dyn Tool> {
        self.tools.iter().map(|t| t.as_ref())
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.index.get(name).map(|&i| self.tools[i].as_ref())
    }

    /// Whether a call to `name` must wait for earlier calls; unknown names
    /// count as mutating so nothing races ahead of them.
    pub fn is_mutating(&self, name: &str) -> bool {
        self.get(name).is_none_or(|t| t.is_mutating())
    }

    /// The OpenAI `tools` array: `[{"type":"function","function":{name, description, parameters}}]`.
    /// Built once; serializing it gives the same bytes every time (`freeze_tools`).
    pub fn specs(&self) -> &[Value] {
        &self.specs
    }

    /// Runs a call as the model wrote it (`arguments` is its raw JSON text).
    ///
    /// Refusals, unknown tools, bad JSON and tool errors become a failed
    /// [`ToolReply`] the model reads; only a fatal tool error is an `Err`.
    /// Every reply is redacted with `ctx.redactor` (see [`Self::dispatch_value`]).
    pub async fn dispatch(
        &self,
        name: &str,
        arguments: &str,
        ctx: &ToolContext,
    ) -> Result<ToolReply> {
        let args = if arguments.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            match serde_json::from_str::<Value>(arguments) {
                Ok(value) => value,
                Err(e) => {
                    return Ok(redacted(
                        ToolReply::failure(
                            &format!("the arguments for {name} are not valid JSON: {e}"),
                            Some(
                                "Send the arguments as one JSON object, e.g. {\"path\": \"README.md\"}.",
                            ),
                        ),
                        ctx,
                    ));
                }
            }
        };
        self.dispatch_value(name, args, ctx).await
    }

    /// Runs a call whose arguments are already parsed.
    ///
    /// The one place tool output leaves the tools: every string of the reply
    /// (and a fatal error's message) is redacted with `ctx.redactor` here,
    /// so no known secret reaches `state.db`, a frontend or the model.
    pub async fn dispatch_value(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolReply> {
        match self.run(name, args, ctx).await {
            Ok(reply) => {
                let mut reply = redacted(reply, ctx);
                crate::compaction::cap_tool_result(
                    &mut reply.value,
                    ctx.config.tools.max_output_chars.max(1_000),
                );
                Ok(reply)
            }
            Err(Error::ToolFatal { tool, message }) => Err(Error::ToolFatal {
                tool,
                message: ctx.redactor.redact(&message).into_owned(),
            }),
            Err(e) => Err(e),
        }
    }

    async fn run(&self, name: &str, args: Value, ctx: &ToolContext) -> Result<ToolReply> {
        if !ctx.is_allowed(name) {
            let allowed: Vec<&str> = ctx.allowed.iter().flatten().map(String::as_str).collect();
            return Ok(ToolReply::failure(
                &format!("{name} is not allowed in a review."),
                Some(&format!(
                    "Only these tools work here: {}. Do not call {name} again.",
                    allowed.join(", ")
                )),
            ));
        }
        let Some(tool) = self.get(name) else {
            return Ok(ToolReply::failure(
                &format!("there is no tool named '{name}'."),
                Some(&format!("Available tools: {}.", self.names().join(", "))),
            ));
        };
        if !args.is_object() {
            return Ok(ToolReply::failure(
                &format!("the arguments for {name} must be a JSON object."),
                None,
            ));
        }
        match tool.call(args, ctx).await {
            Ok(mut value) => {
                if let Value::Object(map) = &mut value
                    && !map.contains_key("success")
                {
                    map.insert("success".into(), Value::Bool(true));
                }
                Ok(ToolReply { value })
            }
            Err(ToolError::RespondToModel { error, hint }) => {
                Ok(ToolReply::failure(&error, hint.as_deref()))
            }
            Err(ToolError::Fatal(message)) => Err(Error::ToolFatal {
                tool: name.to_owned(),
                message,
            }),
        }
    }
}

fn redacted(mut reply: ToolReply, ctx: &ToolContext) -> ToolReply {
    ctx.redactor.redact_json(&mut reply.value);
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_toolset_in_the_table_registers_exactly_its_tools() {
        for (set, names) in TOOLSETS {
            let tools = builtin_tools(set);
            let got: Vec<&str> = tools.iter().map(|t| t.name()).collect();
            assert_eq!(got, names, "{set}");
            assert!(tools.iter().all(|t| t.toolset().as_str() == set), "{set}");
        }
        for tool in REVIEW_TOOLS {
            assert!(
                TOOLSETS.iter().any(|(_, names)| names.contains(&tool)),
                "{tool}"
            );
        }
    }

    /// A tool whose output carries a secret, as `cat .env` would.
    struct Leaky;

    impl Tool for Leaky {
        fn name(&self) -> &'static str {
            "leaky"
        }
        fn toolset(&self) -> super::super::Toolset {
            super::super::Toolset::Terminal
        }
        fn description(&self) -> &'static str {
            "prints a secret"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> super::super::ToolFuture<'a> {
            Box::pin(async move {
                match args.get("fail").and_then(Value::as_bool) {
                    Some(true) => Err(ToolError::model("bad key sk-test-0123456789")),
                    _ => Ok(json!({"output": "KEY=sk-test-0123456789\n"})),
                }
            })
        }
    }

    #[tokio::test]
    async fn dispatch_redacts_results_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(
            knack_config::KnackHome::at(dir.path()),
            knack_config::Config::default(),
            dir.path().to_path_buf(),
            "s1",
        )
        .with_redactor(Arc::new(crate::secrets::Redactor::new([(
            "KNACK_API_KEY",
            "sk-test-0123456789",
        )])));
        let registry = ToolRegistry::builder().tool(Arc::new(Leaky)).build();
        let ok = registry.dispatch("leaky", "{}", &ctx).await.unwrap();
        assert_eq!(ok.value["output"], json!("KEY=[REDACTED:KNACK_API_KEY]\n"));
        assert!(ok.success());
        let failed = registry
            .dispatch("leaky", r#"{"fail": true}"#, &ctx)
            .await
            .unwrap();
        assert!(
            !failed.content().contains("sk-test"),
            "{}",
            failed.content()
        );
    }
}

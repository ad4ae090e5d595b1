//! MCP tools as registry tools: each tool of a running server becomes `mcp__<server>__<tool>`
//! with the server's schema, gated by `boundary::mcp_tool_gate`, its result mapped for the model.

use std::sync::Arc;

use mcp_client::{McpHub, ToolInfo, qualified_name};
use serde_json::{Map, Value, json};

use super::boundary::{Check, McpToolHints, Subject, mcp_tool_gate, pass};
use super::{Tool, ToolContext, ToolError, ToolFuture, Toolset};

/// One tool of one MCP server.
pub struct McpTool {
    hub: Arc<McpHub>,
    info: ToolInfo,
    name: String,
    description: String,
    parameters: Value,
}

impl McpTool {
    pub fn server(&self) -> &str {
        &self.info.server
    }

    /// The name the server gives the tool.
    pub fn remote_name(&self) -> &str {
        &self.info.name
    }
}

/// The tools of every ready server of `hub`, in server order, and a sentence
/// for each tool left out: its name is over 64 characters, or it collides
/// with a name in `taken` (built-in tools come first) or with another MCP tool.
pub fn mcp_tools(hub: &Arc<McpHub>, taken: &[String]) -> (Vec<Arc<dyn Tool>>, Vec<String>) {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut names: Vec<String> = taken.to_vec();
    let mut refused = Vec::new();
    for info in hub.tools() {
        let name = match qualified_name(&info.server, &info.name) {
            Ok(name) => name,
            Err(reason) => {
                refused.push(reason);
                continue;
            }
        };
        if names.contains(&name) {
            refused.push(format!(
                "the tool '{}' of MCP server '{}' is left out: its name {name} is already taken",
                info.name, info.server
            ));
            continue;
        }
        names.push(name.clone());
        let description = if info.description.trim().is_empty() {
            format!("The tool {} of the MCP server {}.", info.name, info.server)
        } else {
            info.description.clone()
        };
        tools.push(Arc::new(McpTool {
            hub: Arc::clone(hub),
            parameters: object_schema(&info.input_schema),
            info,
            name,
            description,
        }));
    }
    (tools, refused)
}

/// The server's schema, made acceptable to every wire: an object with `properties`.
fn object_schema(schema: &Value) -> Value {
    let mut schema = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    schema.insert("type".into(), json!("object"));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(schema)
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn toolset(&self) -> Toolset {
        Toolset::Mcp
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn is_mutating(&self) -> bool {
        // What the server does is unknown unless it says it only reads.
        !self.info.read_only
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let hints = McpToolHints {
                read_only: self.info.read_only,
                destructive: self.info.destructive,
                approval: self.info.approval,
            };
            let subject = format!("{} {}", self.name, args);
            let check = Check::new(subject, Subject::McpTool(self.name.clone()));
            pass(ctx, check, mcp_tool_gate(ctx, &self.name, hints)).await?;
            let Value::Object(arguments) = args else {
                return Err(ToolError::model(format!(
                    "the arguments for {} must be a JSON object.",
                    self.name
                )));
            };
            let outcome = self
                .hub
                .call(&self.info.server, &self.info.name, arguments)
                .await
                .map_err(|e| {
                    ToolError::model_with_hint(
                        format!("{e}."),
                        "Check the arguments against the tool's schema; if the server is down, \
                         carry on without it and tell the user.",
                    )
                })?;
            if outcome.is_error {
                let text = if outcome.text.trim().is_empty() {
                    "no details given".to_owned()
                } else {
                    outcome.text
                };
                return Err(ToolError::model(format!(
                    "{} reported an error: {text}",
                    self.name
                )));
            }
            let mut result = Map::new();
            result.insert("output".into(), Value::String(outcome.text));
            if let Some(structured) = outcome.structured {
                result.insert("structured_content".into(), structured);
            }
            Ok(Value::Object(result))
        })
    }
}

#[cfg(test)]
mod tests {
    use knack_config::{ApprovalPolicy, McpApproval};

    use super::super::boundary::{Gate, McpToolHints, mcp_tool_gate};
    use super::*;

    fn ctx(policy: ApprovalPolicy) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = knack_config::Config::default();
        config.agent.approval = policy;
        let ctx = ToolContext::new(
            knack_config::KnackHome::at(dir.path()),
            config,
            dir.path().to_path_buf(),
            "s1",
        );
        (dir, ctx)
    }

    fn gate(
        policy: ApprovalPolicy,
        read_only: bool,
        destructive: Option<bool>,
        approval: McpApproval,
    ) -> &'static str {
        let (_dir, ctx) = ctx(policy);
        let hints = McpToolHints {
            read_only,
            destructive,
            approval,
        };
        match mcp_tool_gate(&ctx, "mcp__s__t", hints) {
            Gate::Run => "run",
            Gate::Ask { .. } => "ask",
            Gate::Refuse { .. } => "refuse",
        }
    }

    #[test]
    fn annotations_and_the_server_setting_decide_the_gate() {
        use ApprovalPolicy::{Never, OnRequest, Untrusted};
        use McpApproval::{Always, Auto};
        // readOnlyHint runs everywhere.
        for policy in [Untrusted, OnRequest, Never] {
            assert_eq!(gate(policy, true, None, Auto), "run");
        }
        // No annotation or destructive: asks (under `never`, `boundary::pass` refuses
        // what asks unless a permission rule allows it).
        assert_eq!(gate(OnRequest, false, None, Auto), "ask");
        assert_eq!(gate(Untrusted, false, Some(true), Auto), "ask");
        assert_eq!(gate(Never, false, Some(true), Auto), "ask");
        // Additive only: runs under on-request, asks under untrusted.
        assert_eq!(gate(OnRequest, false, Some(false), Auto), "run");
        assert_eq!(gate(Untrusted, false, Some(false), Auto), "ask");
        // The server's setting wins over the annotations.
        assert_eq!(gate(OnRequest, true, None, Always), "ask");
        assert_eq!(
            gate(OnRequest, false, Some(true), McpApproval::Never),
            "run"
        );
    }

    #[test]
    fn schemas_become_objects_with_properties() {
        assert_eq!(
            object_schema(&json!({"type": "object"})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            object_schema(&json!(true)),
            json!({"type": "object", "properties": {}})
        );
        let kept =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert_eq!(object_schema(&kept), kept);
    }
}

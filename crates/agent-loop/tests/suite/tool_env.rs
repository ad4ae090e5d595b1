//! A temp home and working directory with a tool context and the full registry.

use std::path::PathBuf;
use std::sync::Arc;

use agent_loop::{Approver, ToolContext, ToolRegistry};
use knack_config::{Config, KnackHome};
use serde_json::Value;

pub struct ToolEnv {
    pub home: tempfile::TempDir,
    pub cwd: tempfile::TempDir,
    pub ctx: ToolContext,
    pub registry: ToolRegistry,
}

impl ToolEnv {
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    pub fn with_config(config: Config) -> Self {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let registry = ToolRegistry::for_toolsets(&config.agent.toolsets);
        let ctx = ToolContext::new(
            KnackHome::at(home.path()),
            config,
            cwd.path().to_path_buf(),
            "session-under-test",
        );
        Self {
            home,
            cwd,
            ctx,
            registry,
        }
    }

    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.ctx = self.ctx.with_approver(approver);
        self
    }

    pub fn home_path(&self, rel: &str) -> PathBuf {
        self.home.path().join(rel)
    }

    pub fn cwd_path(&self, rel: &str) -> PathBuf {
        self.cwd.path().join(rel)
    }

    pub fn write(&self, path: &PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Calls a tool with raw argument text, as the model would.
    pub async fn call_raw(&self, name: &str, arguments: &str) -> Value {
        self.registry
            .dispatch(name, arguments, &self.ctx)
            .await
            .unwrap()
            .value
    }

    pub async fn call(&self, name: &str, args: Value) -> Value {
        self.call_raw(name, &args.to_string()).await
    }
}

/// Asserts a failed result and returns its error text.
pub fn error_of(result: &Value) -> String {
    assert_eq!(result["success"], false, "expected a failure: {result}");
    result["error"].as_str().unwrap_or_default().to_owned()
}

pub fn assert_ok(result: &Value) {
    assert_eq!(result["success"], true, "expected success: {result}");
}

//! The `skills` toolset: thin wrappers over skill-core's progressive disclosure
//! (`skills_list`, `skill_view`), its search (`skills_search`) and its writer (`skill_manage`). Names, descriptions and
//! schemas come from `skill_core::tool_specs`, so `knack tool` and the loop describe them alike.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::Value;
use skill_core::manage::viewed_path;
use skill_core::tool_specs::{SkillViewArgs, SkillsListArgs, SkillsSearchArgs, tool_spec};
use skill_core::{Actor, ManageContext, PreprocessOptions, Resolution, ViewContext, WriteOrigin};

use super::context::SkillWriteMode;
use super::schema::simplify_schema;
use super::{Tool, ToolContext, ToolError, ToolFuture, Toolset, parse_args};
use crate::skill_usage::{self, UsageEvent};

fn description_of(name: &str) -> &'static str {
    tool_spec(name).map_or("", |spec| spec.description)
}

fn parameters_of(name: &str) -> Value {
    tool_spec(name).map_or_else(
        || serde_json::json!({"type": "object", "properties": {}}),
        |spec| simplify_schema(spec.parameters),
    )
}

pub struct SkillsList;

impl Tool for SkillsList {
    fn name(&self) -> &'static str {
        skill_core::tool_specs::SKILLS_LIST
    }
    fn toolset(&self) -> Toolset {
        Toolset::Skills
    }
    fn description(&self) -> &'static str {
        description_of(self.name())
    }
    fn parameters(&self) -> Value {
        parameters_of(self.name())
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: SkillsListArgs = parse_args(self.name(), args)?;
            let set = ctx.skills();
            let page = skill_core::ListPage {
                category: args.category.as_deref(),
                offset: args.offset.unwrap_or(0),
                limit: args
                    .limit
                    .unwrap_or(skill_core::disclosure::DEFAULT_PAGE_ROWS),
                // The registry's cap would cut rows mid-list; a page that
                // fits it says where the next one starts instead.
                max_chars: ctx.config.tools.max_output_chars.max(1_000),
            };
            Ok(skill_core::skills_list_page(&set, &page))
        })
    }
}

pub struct SkillsSearch;

impl Tool for SkillsSearch {
    fn name(&self) -> &'static str {
        skill_core::tool_specs::SKILLS_SEARCH
    }
    fn toolset(&self) -> Toolset {
        Toolset::Skills
    }
    fn description(&self) -> &'static str {
        description_of(self.name())
    }
    fn parameters(&self) -> Value {
        parameters_of(self.name())
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: SkillsSearchArgs = parse_args(self.name(), args)?;
            let ctx_for_build = ctx.clone();
            // The first search reads each skill's body head from disk.
            tokio::task::spawn_blocking(move || {
                let set = ctx_for_build.skills();
                let search = ctx_for_build.skill_search_for(&set);
                skill_core::search::skills_search_json(&search, &set, &args.query, args.limit)
            })
            .await
            .map_err(|e| ToolError::Fatal(format!("skills_search task failed: {e}")))
        })
    }
}

pub struct SkillView;

impl Tool for SkillView {
    fn name(&self) -> &'static str {
        skill_core::tool_specs::SKILL_VIEW
    }
    fn toolset(&self) -> Toolset {
        Toolset::Skills
    }
    fn description(&self) -> &'static str {
        description_of(self.name())
    }
    fn parameters(&self) -> Value {
        parameters_of(self.name())
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: SkillViewArgs = parse_args(self.name(), args)?;
            let set = ctx.skills();
            if let Resolution::Found(skill) = set.resolve(&args.name)
                && !skill.frontmatter.model_invocable()
            {
                return Ok(serde_json::json!({
                    "success": false,
                    "error": format!(
                        "'{}' is invoked by the user only (disable-model-invocation); it is not loaded by the model",
                        skill.name
                    ),
                    "hint": format!("Ask the user to run /{} if it is needed.", skill.name),
                }));
            }
            let env = ctx.home.env_file();
            let view = ViewContext {
                preprocess: PreprocessOptions::from_config(&ctx.home, &ctx.config),
                session_id: Some(&ctx.session_id),
                env: &env,
            };
            let result = skill_core::skill_view(&set, &args.name, args.file_path.as_deref(), &view);
            if result.get("success").and_then(Value::as_bool) == Some(true) {
                let names = ["name", "qualified_id"]
                    .iter()
                    .filter_map(|key| result.get(*key).and_then(Value::as_str))
                    .map(str::to_owned);
                ctx.mark_viewed(names);
                if let Resolution::Found(skill) = set.resolve(&args.name) {
                    ctx.mark_viewed_path(viewed_path(skill, args.file_path.as_deref()));
                    // Only the model's own reading counts: the review reads
                    // to maintain, a person with `knack tool call` to look.
                    if ctx.write_mode == SkillWriteMode::Foreground {
                        skill_usage::record_in(
                            ctx.sessions.as_ref(),
                            &ctx.home,
                            &skill.qualified_id(),
                            &skill.name,
                            UsageEvent::View,
                        );
                    }
                }
            }
            Ok(result)
        })
    }
}

pub struct SkillManage;

impl Tool for SkillManage {
    fn name(&self) -> &'static str {
        skill_core::tool_specs::SKILL_MANAGE
    }
    fn toolset(&self) -> Toolset {
        Toolset::Skills
    }
    fn description(&self) -> &'static str {
        description_of(self.name())
    }
    fn parameters(&self) -> Value {
        parameters_of(self.name())
    }
    fn is_mutating(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let name = args
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let action = args
                .get("action")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let mut manage = ManageContext::new(&ctx.home, &ctx.config, &ctx.cwd)
                .with_session(ctx.session_id.clone());
            let is_create = action.as_deref() == Some("create");
            let library_ctx = is_create.then(|| ctx.clone());
            let mode = ctx.write_mode;
            let viewed: HashSet<PathBuf> = super::context::lock(&ctx.viewed_paths).clone();
            let result = tokio::task::spawn_blocking(move || {
                if let Some(ctx) = library_ctx {
                    // The near-duplicate check reuses the session's search
                    // index (the first build reads each skill's body head).
                    let set = ctx.skills();
                    let search = ctx.skill_search_for(&set);
                    manage = manage.with_library(set, search);
                }
                let origin = match mode {
                    SkillWriteMode::Foreground => WriteOrigin::new(Actor::Agent),
                    SkillWriteMode::User => WriteOrigin::new(Actor::User),
                    SkillWriteMode::Review => WriteOrigin::review(&viewed),
                };
                skill_core::skill_manage_json(&manage, &args, &origin)
            })
            .await
            .map_err(|e| ToolError::Fatal(format!("skill_manage task failed: {e}")))?;
            if result.get("success").and_then(Value::as_bool) == Some(true) {
                // The write changed the tree under the cache's feet; mtimes of the
                // same second may not show it, so forget the cached set outright.
                ctx.discovery.invalidate();
                record_write(ctx, action.as_deref(), &name, &result);
                // Only create and delete change the catalog (renames are refused);
                // the turn loop re-reads the catalog when told something changed.
                match action.as_deref() {
                    Some("create") => ctx.catalog.record_added(name),
                    Some("delete") => ctx.catalog.record_removed(name),
                    _ => {}
                }
            }
            Ok(result)
        })
    }
}

/// Keeps the usage record of a successful write: who created the skill,
/// and every change to an existing one as a patch by its actor.
fn record_write(ctx: &ToolContext, action: Option<&str>, name: &str, result: &Value) {
    let Some(qualified_id) = result.get("qualified_id").and_then(Value::as_str) else {
        return;
    };
    let actor = match ctx.write_mode {
        SkillWriteMode::Foreground => Actor::Agent,
        SkillWriteMode::User => Actor::User,
        SkillWriteMode::Review => Actor::Review,
    };
    let event = match action {
        Some("create") => UsageEvent::Created(actor),
        Some("edit" | "patch" | "write_file" | "remove_file") => UsageEvent::Patch(actor),
        _ => return,
    };
    skill_usage::record_in(ctx.sessions.as_ref(), &ctx.home, qualified_id, name, event);
}

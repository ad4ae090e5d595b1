//! Names, descriptions and JSON-schema parameters of the three skill tools,
//! shared by `knack tool` and the agent loop so both describe them identically.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::manage::SkillManageArgs;

pub const SKILLS_LIST: &str = "skills_list";
pub const SKILL_VIEW: &str = "skill_view";
pub const SKILL_MANAGE: &str = "skill_manage";
pub const SKILLS_SEARCH: &str = "skills_search";

/// One tool as a model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// A JSON schema of the argument object.
    pub parameters: Value,
}

/// Arguments of `skills_list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsListArgs {
    /// Only skills in this category and its sub-categories, e.g. 'devops'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Skip this many skills (from an earlier answer's next_offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// At most this many skills in the answer (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Arguments of `skills_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsSearchArgs {
    /// What the task is about, in a few words, e.g. 'fill a PDF form'.
    pub query: String,
    /// At most this many results (default 10, at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// Arguments of `skill_view`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillViewArgs {
    /// The skill's name, id ('category/name') or qualified id ('user:category/name').
    pub name: String,
    /// A file inside the skill to read instead of SKILL.md, e.g. 'references/api.md'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
}

const SKILLS_LIST_DESCRIPTION: &str = "List the skills available to you: name, one-line description, category and id. \
Skills are saved procedures for recurring kinds of work. Call this when the index in your instructions \
is not enough, optionally narrowed to one category. Long lists come in pages: pass the answer's \
next_offset as offset to read the next one.";

const SKILLS_SEARCH_DESCRIPTION: &str = "Search every installed skill by what a task is about, \
including skills the index in your instructions had no room for. Answers with the best matches \
(name, id, description, score), best first; load one with skill_view(name).";

const SKILL_VIEW_DESCRIPTION: &str = "Load a skill's full SKILL.md (or, with file_path, one of its \
support files under references/, templates/, scripts/ or assets/). Load a skill before doing work it \
covers and follow it. An ambiguous name answers with the qualified ids to choose from.";

const SKILL_MANAGE_DESCRIPTION: &str = "Write your procedural memory: create, improve or retire skills. \
A skill is a folder with SKILL.md (YAML frontmatter with name and a short description starting \
'Use when', then Markdown: when to use it, steps, pitfalls, how to verify) plus optional support files. \
Actions: create (name, content, optional category; new skills go to the user skills folder), \
patch (old_string -> new_string in SKILL.md or file_path; the preferred way to fix or extend a skill), \
edit (whole SKILL.md; only for major rewrites), delete (optional absorbed_into: the skill that took \
over its content), write_file (file_path, file_content), remove_file (file_path). \
Create a skill after a hard task succeeded (many tool calls, errors overcome, a correction from the \
user that worked) or when the user asks you to remember a procedure. Patch a skill as soon as you find \
it wrong or incomplete. Every write is validated, scanned for dangerous content and kept in history.";

/// The skill tools, in a fixed order.
pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: SKILLS_LIST,
            description: SKILLS_LIST_DESCRIPTION,
            parameters: schema_of::<SkillsListArgs>(),
        },
        ToolSpec {
            name: SKILL_VIEW,
            description: SKILL_VIEW_DESCRIPTION,
            parameters: schema_of::<SkillViewArgs>(),
        },
        ToolSpec {
            name: SKILL_MANAGE,
            description: SKILL_MANAGE_DESCRIPTION,
            parameters: schema_of::<SkillManageArgs>(),
        },
        ToolSpec {
            name: SKILLS_SEARCH,
            description: SKILLS_SEARCH_DESCRIPTION,
            parameters: schema_of::<SkillsSearchArgs>(),
        },
    ]
}

/// The spec of one skill tool by name.
pub fn tool_spec(name: &str) -> Option<ToolSpec> {
    tool_specs().into_iter().find(|s| s.name == name)
}

/// A plain, self-contained object schema: sub-schemas inlined (no `$ref`),
/// no `$schema` or `title`, which tool APIs do not want.
fn schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .for_deserialize()
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_tools_with_object_schemas() {
        let specs = tool_specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [SKILLS_LIST, SKILL_VIEW, SKILL_MANAGE, SKILLS_SEARCH]
        );
        assert_eq!(
            specs[3].parameters["required"],
            serde_json::json!(["query"])
        );
        for spec in &specs {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.parameters.get("$schema").is_none());
            assert!(
                !spec.parameters.to_string().contains("$ref"),
                "{}",
                spec.name
            );
        }
        let manage = &specs[2].parameters;
        let required: Vec<&str> = manage["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(required, ["action", "name"]);
        for key in [
            "content",
            "category",
            "file_path",
            "file_content",
            "old_string",
            "new_string",
            "replace_all",
            "absorbed_into",
        ] {
            assert!(manage["properties"].get(key).is_some(), "{key}");
        }
        let schema_text = manage.to_string();
        for action in [
            "create",
            "edit",
            "patch",
            "delete",
            "write_file",
            "remove_file",
        ] {
            assert!(schema_text.contains(&format!("\"{action}\"")), "{action}");
        }
        assert_eq!(specs[1].parameters["required"], serde_json::json!(["name"]));
    }
}

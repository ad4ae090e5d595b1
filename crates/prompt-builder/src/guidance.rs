//! Layer 2: short advice for each tool family the session has, so the model
//! knows when memory, past sessions and skills are worth a call.

const MEMORY: &str = "\
Memory: the memory tool keeps durable facts for later sessions: the user's \
preferences and corrections, their environment, conventions of their projects. \
Keep each entry short and factual. It is not a diary or a task log; progress on \
the current task stays in the conversation, and procedures belong in skills. \
What you save shows up in this prompt from the next session on.";

const SESSION_SEARCH: &str = "\
Past sessions: when the user refers to earlier work, or the task has likely come \
up before, look it up with session_search before asking the user to repeat it.";

const SKILLS_LOAD: &str = "\
Skills: before you start on a task, check the skills index below. When a skill \
matches the task, even in part, load it with skill_view and follow it; it \
records how this task is done for this user. skills_list shows every skill with \
its full description.";

const SKILLS_WRITE: &str = "\
When you had to work out a procedure (several steps, some trial and error, a \
pitfall found the hard way), save it with skill_manage (action create) so the \
next session starts from it. When a skill you loaded turned out wrong, \
incomplete or outdated, correct it with skill_manage (action patch) before you \
finish.";

pub(crate) fn layer(tools: &[String]) -> String {
    let has = |name: &str| tools.iter().any(|t| t == name);
    let mut parts = Vec::new();
    if has("memory") {
        parts.push(MEMORY);
    }
    if has("session_search") {
        parts.push(SESSION_SEARCH);
    }
    if has("skill_view") {
        parts.push(SKILLS_LOAD);
    }
    if has("skill_manage") {
        parts.push(SKILLS_WRITE);
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("## Using your tools\n\n{}", parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn only_present_families_get_guidance() {
        assert_eq!(layer(&tools(&["terminal"])), "");
        let text = layer(&tools(&["memory", "skill_view"]));
        assert!(text.contains("memory tool"));
        assert!(text.contains("skill_view"));
        assert!(!text.contains("session_search"));
        assert!(!text.contains("skill_manage"));
        assert!(layer(&tools(&["skill_manage"])).contains("action patch"));
    }
}

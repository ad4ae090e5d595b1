//! The one recogniser of a description's trigger clause: the words that tell a
//! model when to load a skill ("Use when …", "Use this skill whenever …").
//!
//! The skills index keeps the trigger when it must shorten a description, and
//! validation warns about descriptions without one; both ask this module.

/// Phrases that open a trigger, lower case, matched at word boundaries.
/// Longer phrases that share a start with a shorter one need not be listed:
/// the earliest match wins, whichever phrase it is.
const TRIGGER_PHRASES: &[&str] = &[
    "use when",
    "use whenever",
    "use this when",
    "use this whenever",
    "use this skill when",
    "use this skill whenever",
    "use this skill for",
    "use this skill if",
    "use it when",
    "use if",
    "use for",
    "use this for",
    "use proactively",
    "use after",
    "use before",
    "this skill should be used when",
    "should be used when",
    "invoke when",
    "invoke this skill when",
    "trigger when",
    "triggers when",
    "triggers on",
    "triggered when",
    "triggers:",
    "trigger:",
    "trigger on",
    "activate when",
    "apply when",
    "load when",
    "when the user",
    "when you need",
    "when asked to",
];

/// Where the trigger clause of `text` starts (a byte offset), if `text` has
/// one: the earliest trigger phrase at a word start, ignoring ASCII case.
/// Offset 0 means the whole description is a trigger.
pub fn trigger_start(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut best: Option<usize> = None;
    for phrase in TRIGGER_PHRASES {
        let mut from = 0;
        while let Some(found) = lower[from..].find(phrase) {
            let at = from + found;
            if best.is_some_and(|b| b <= at) {
                break;
            }
            let word_start = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            let end = at + phrase.len();
            // A phrase ending in ':' ends its own word.
            let word_end =
                phrase.ends_with(':') || end == bytes.len() || !bytes[end].is_ascii_alphanumeric();
            if word_start && word_end {
                best = Some(at);
                break;
            }
            from = at + 1;
        }
    }
    best
}

/// Whether `text` says when to use the skill.
pub fn has_trigger(text: &str) -> bool {
    trigger_start(text).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phrases_people_write_are_recognised() {
        for (text, at) in [
            ("Use when the user asks for a PDF.", 0),
            (
                "Edit spreadsheets. Use this skill whenever a .xlsx file is involved.",
                19,
            ),
            ("Word files. Use this skill when a .docx is mentioned", 12),
            ("Renders charts. Triggers: chart, plot, graph.", 16),
            ("Reviews code. Invoke when a pull request is opened.", 14),
            ("Lints YAML; use it when saving a workflow", 12),
            ("Deploys. This skill should be used when shipping.", 9),
            ("Helps. Trigger on 'deploy' or 'release'.", 7),
        ] {
            assert_eq!(trigger_start(text), Some(at), "{text}");
        }
    }

    #[test]
    fn the_earliest_phrase_wins_and_words_must_match_whole() {
        assert_eq!(trigger_start("Use for X. Use when Y."), Some(0));
        assert_eq!(trigger_start("Refuse when asked. Reuse when"), None);
        assert_eq!(trigger_start("misuse whenever"), None);
        assert_eq!(trigger_start("A summary with no clause at all"), None);
        assert!(!has_trigger(""));
        assert!(has_trigger("Summary. USE WHEN shouting."));
    }

    #[test]
    fn offsets_are_char_boundaries_in_unicode_text() {
        let text = "Café résumé naïve — use when ünïcode";
        let at = trigger_start(text).expect("found");
        assert!(text.is_char_boundary(at));
        assert!(text[at..].starts_with("use when"));
    }
}

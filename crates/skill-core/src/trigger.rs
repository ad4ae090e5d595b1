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

/// Characters of a description the skills index can be counted on to show.
/// A small library shows far more, but a library of a few hundred skills
/// shares the index's budget out at about this much per skill, and the index
/// then keeps only the trigger clause (see prompt-builder's skills index).
pub const INDEX_SHOWN_CHARS: usize = 160;

/// What keeps a description from telling a model when to load its skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerProblem {
    /// No trigger clause at all.
    Missing,
    /// The trigger clause is longer than the index shows, so its end is cut.
    Cut { clause_chars: usize },
}

/// The trigger problem of `description`, read on one line as the index reads it.
pub fn trigger_problem(description: &str) -> Option<TriggerProblem> {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(start) = trigger_start(&flat) else {
        return Some(TriggerProblem::Missing);
    };
    if flat.chars().count() <= INDEX_SHOWN_CHARS {
        return None;
    }
    let clause_chars = flat[start..].chars().count();
    (clause_chars > INDEX_SHOWN_CHARS).then_some(TriggerProblem::Cut { clause_chars })
}

/// The warning a writer of `description` gets about its trigger, if any.
pub fn trigger_warning(description: &str) -> Option<String> {
    match trigger_problem(description)? {
        TriggerProblem::Missing => Some(
            "the description never says when to use the skill, so a model rarely picks it; end it with a clause such as 'Use when the user asks to …'".to_owned(),
        ),
        TriggerProblem::Cut { clause_chars } => Some(format!(
            "the description's 'Use when …' clause has {clause_chars} characters; a crowded skills index shows about {INDEX_SHOWN_CHARS} of a description, so the end of the clause would be cut: shorten it"
        )),
    }
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
    fn problems_missing_cut_and_fine() {
        assert_eq!(
            trigger_problem("Converts PDF files to text."),
            Some(TriggerProblem::Missing)
        );
        assert_eq!(
            trigger_problem("Converts PDFs. Use when a PDF is given."),
            None
        );
        // A long summary is fine when the clause itself is short: the index
        // keeps the clause.
        let long_summary = format!("{} Use when a PDF is given.", "Converts files. ".repeat(20));
        assert_eq!(trigger_problem(&long_summary), None);
        let long_clause = format!(
            "Converts. Use when {}",
            "a PDF or a scan is given, ".repeat(10)
        );
        match trigger_problem(&long_clause) {
            Some(TriggerProblem::Cut { clause_chars }) => {
                assert!(clause_chars > INDEX_SHOWN_CHARS)
            }
            other => panic!("expected a cut clause, got {other:?}"),
        }
        assert!(trigger_warning("No clause here.").is_some_and(|w| w.contains("Use when")));
        assert!(trigger_warning(&long_clause).is_some_and(|w| w.contains("cut")));
        assert!(trigger_warning("Does X. Use this skill whenever X is due.").is_none());
    }

    #[test]
    fn offsets_are_char_boundaries_in_unicode_text() {
        let text = "Café résumé naïve — use when ünïcode";
        let at = trigger_start(text).expect("found");
        assert!(text.is_char_boundary(at));
        assert!(text[at..].starts_with("use when"));
    }
}

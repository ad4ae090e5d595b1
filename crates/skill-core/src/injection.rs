//! A cheap check run when a skill is loaded: phrases that try to override the
//! model's instructions are logged (never blocked; the guard decides on writes).

const SUSPICIOUS_PHRASES: [&str; 9] = [
    "ignore previous instructions",
    "ignore all previous",
    "disregard your instructions",
    "disregard the above",
    "forget your instructions",
    "you are now in developer mode",
    "new system prompt:",
    "<system>",
    "override your guidelines",
];

/// The suspicious phrases found in `text`, lower-cased.
pub fn suspicious_phrases(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    SUSPICIOUS_PHRASES
        .iter()
        .copied()
        .filter(|p| lower.contains(p))
        .collect()
}

pub fn warn_if_suspicious(skill: &str, text: &str) {
    let found = suspicious_phrases(text);
    if !found.is_empty() {
        tracing::warn!(skill, phrases = ?found, "loaded skill contains instruction-override phrases");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_phrases_case_insensitively() {
        assert_eq!(
            super::suspicious_phrases("Please IGNORE previous instructions now"),
            vec!["ignore previous instructions"]
        );
        assert!(super::suspicious_phrases("a normal skill").is_empty());
    }
}

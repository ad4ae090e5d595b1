//! Invisible-character detection: zero-width characters, bidi controls and tag characters.
//! They let a skill show a human one text while the model reads another.

use crate::finding::{Finding, Severity, ThreatCategory};
use crate::scan::SNIPPET_CHARS;

/// The characters we report, with a readable name.
const INVISIBLE: &[(char, &str)] = &[
    ('\u{200B}', "zero width space"),
    ('\u{200C}', "zero width non-joiner"),
    ('\u{200D}', "zero width joiner"),
    ('\u{2060}', "word joiner"),
    ('\u{2061}', "function application"),
    ('\u{2062}', "invisible times"),
    ('\u{2063}', "invisible separator"),
    ('\u{2064}', "invisible plus"),
    ('\u{FEFF}', "zero width no-break space"),
    ('\u{180E}', "mongolian vowel separator"),
    ('\u{202A}', "left-to-right embedding"),
    ('\u{202B}', "right-to-left embedding"),
    ('\u{202C}', "pop directional formatting"),
    ('\u{202D}', "left-to-right override"),
    ('\u{202E}', "right-to-left override"),
    ('\u{2066}', "left-to-right isolate"),
    ('\u{2067}', "right-to-left isolate"),
    ('\u{2068}', "first strong isolate"),
    ('\u{2069}', "pop directional isolate"),
];

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

fn name_of(c: char) -> Option<&'static str> {
    if is_tag(c) {
        return Some("tag character");
    }
    INVISIBLE.iter().find(|(ch, _)| *ch == c).map(|(_, n)| *n)
}

fn is_emoji_like(c: char) -> bool {
    let u = c as u32;
    u >= 0x1F000 || (0x2600..=0x27BF).contains(&u) || u == 0xFE0F || (0x2190..=0x21FF).contains(&u)
}

/// Uses that are part of ordinary writing: joiners inside emoji sequences,
/// the non-joiner between letters of Persian or Indic words, tag characters
/// after the black flag (subdivision flags).
fn is_legitimate(prev: Option<char>, c: char, next: Option<char>) -> bool {
    match c {
        '\u{200D}' => prev.is_some_and(is_emoji_like) && next.is_some_and(is_emoji_like),
        '\u{200C}' => {
            let letter = |x: Option<char>| x.is_some_and(|x| !x.is_ascii() && x.is_alphabetic());
            letter(prev) && letter(next)
        }
        _ if is_tag(c) => prev.is_some_and(|p| p == '\u{1F3F4}' || is_tag(p)),
        _ => false,
    }
}

/// One `high` finding per line that carries invisible characters.
pub(crate) fn invisible_findings(text: &str, file: &str) -> Vec<Finding> {
    if text.is_ascii() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (n, line) in text.split('\n').enumerate() {
        if line.is_ascii() {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut seen: Vec<char> = Vec::new();
        for (i, &c) in chars.iter().enumerate() {
            if name_of(c).is_none() {
                continue;
            }
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1).copied();
            if !is_legitimate(prev, c, next) && !seen.contains(&c) {
                seen.push(c);
            }
        }
        if seen.is_empty() {
            continue;
        }
        let names: Vec<String> = seen
            .iter()
            .map(|&c| format!("U+{:04X} ({})", c as u32, name_of(c).unwrap_or("invisible")))
            .collect();
        out.push(Finding {
            pattern_id: "invisible_unicode".to_string(),
            severity: Severity::High,
            category: ThreatCategory::InvisibleUnicode,
            file: file.to_string(),
            line: n + 1,
            matched: visible_form(line),
            description: format!(
                "invisible character {} can hide text from a human reviewer",
                names.join(", ")
            ),
        });
    }
    out
}

/// The line with each invisible character spelled out as `<U+XXXX>`.
fn visible_form(line: &str) -> String {
    let mut out = String::new();
    for c in line.trim().chars() {
        if name_of(c).is_some() {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    if out.chars().count() > SNIPPET_CHARS {
        let cut: String = out.chars().take(SNIPPET_CHARS - 3).collect();
        out = cut + "...";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_width_and_bidi_characters_are_high_findings() {
        let text = "line one\nrun\u{200B}this quietly\nfn is_admin() { /*\u{202E} } \u{2066}*/ }\n";
        let f = invisible_findings(text, "SKILL.md");
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].line, 2);
        assert_eq!(f[0].severity, Severity::High);
        assert_eq!(f[0].category, ThreatCategory::InvisibleUnicode);
        assert!(f[0].matched.contains("<U+200B>"));
        assert!(f[0].description.contains("U+200B (zero width space)"));
        assert_eq!(f[1].line, 3);
        assert!(f[1].description.contains("U+202E"));
        assert!(f[1].description.contains("U+2066"));
    }

    #[test]
    fn tag_characters_smuggling_ascii_are_caught() {
        let hidden: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        let text = format!("Nice skill{hidden}\n");
        let f = invisible_findings(&text, "SKILL.md");
        assert_eq!(f.len(), 1);
        assert!(f[0].description.contains("tag character"));
    }

    #[test]
    fn ordinary_unicode_is_not_reported() {
        let text = "Café — naïve résumé 日本語\nfamily: 👨\u{200D}👩\u{200D}👧\nمی\u{200C}خواهم\n";
        assert!(invisible_findings(text, "SKILL.md").is_empty());
    }
}

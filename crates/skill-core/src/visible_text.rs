//! The one rule for text a skill file supplies about itself (its name, its
//! description, a category's description) before it reaches the system
//! prompt, a terminal or a listing: control characters are made visible.
//!
//! Such text is read from files anyone may have written; an escape sequence
//! in a description would otherwise be obeyed by the terminal that lists it
//! (clearing the screen, setting the clipboard) and sit invisibly in the
//! model's prompt. C0 controls and DEL become caret notation (`^[`, `^?`),
//! C1 controls and bidi overrides `<U+202E>`; tabs and newlines stay. The
//! notation is the one knack's terminal output uses (`knack::terminal_text`).

use std::borrow::Cow;

/// Whether `c` must not reach a prompt or a terminal as it is.
pub fn is_control(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `text` with every control character shown as a visible escape; borrowed
/// when there is none. `\r\n` becomes `\n`.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            c if !is_control(c) => out.push(c),
            '\x7f' => out.push_str("^?"),
            c if c < ' ' => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible_and_plain_text_is_borrowed() {
        assert!(matches!(
            escape_controls("plain — text\tok\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape_controls("a\x1b[2Jb\x07c\u{9b}d\u{202e}e\x7f\0"),
            "a^[[2Jb^Gc<U+009B>d<U+202E>e^?^@"
        );
        assert_eq!(escape_controls("x\r\ny\rz"), "x\ny^Mz");
        for c in ['\x1b', '\u{85}', '\u{2067}'] {
            assert!(!escape_controls(&format!("a{c}b")).contains(c));
        }
    }
}

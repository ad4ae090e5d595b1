//! Text from the model and from tools made safe for a terminal: control characters are shown as
//! visible escapes before `knack run` or the TUI prints them, and knack's own styling is added after.
//!
//! An answer or a tool result could otherwise carry sequences the terminal obeys: OSC 52 sets
//! the clipboard, `ESC[2J` clears the screen, OSC 0 retitles the window, bidi overrides reorder
//! what is read. ESC, BEL and the other C0 controls become caret notation (`^[`, `^G`), DEL `^?`,
//! C1 controls and bidi overrides `<U+009B>`; newlines and tabs stay, `\r\n` becomes `\n`.

use std::borrow::Cow;

use agent_protocol::Event;
use serde_json::Value;

// Whether `c` must not reach a terminal as it is: the one rule skill text
// also follows before it reaches a prompt or a listing.
use skill_core::visible_text::is_control as is_unsafe;

/// `text` with every control character shown as a visible escape; borrowed
/// when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    skill_core::visible_text::escape_controls(text)
}

/// Escapes every string of `value` (object keys too) in place; whether any
/// changed. For text a renderer takes out of a tool's JSON reply.
pub fn escape_json(value: &mut Value) -> bool {
    match value {
        Value::String(text) => match escape(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(escaped) => {
                *text = escaped;
                true
            }
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| escape_json(item) | changed),
        Value::Object(map) => {
            let mut changed = false;
            if map.keys().any(|k| k.chars().any(is_unsafe)) {
                let old = std::mem::take(map);
                *map = old
                    .into_iter()
                    .map(|(k, v)| (escape(&k).into_owned(), v))
                    .collect();
                changed = true;
            }
            map.values_mut()
                .fold(changed, |changed, item| escape_json(item) | changed)
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Any serialisable value (an event, a stored message) with every string
/// in it escaped; borrowed when nothing needed it. Every field counts:
/// a new event's text is covered without a change here.
fn escape_serde<T>(item: &T) -> Cow<'_, T>
where
    T: Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    let Ok(mut value) = serde_json::to_value(item) else {
        return Cow::Borrowed(item);
    };
    if !escape_json(&mut value) {
        return Cow::Borrowed(item);
    }
    match serde_json::from_value(value) {
        Ok(escaped) => Cow::Owned(escaped),
        Err(e) => {
            // Only strings changed, so this does not happen; if it ever
            // does, nothing unescaped is printed either.
            tracing::error!("cannot rebuild an escaped value: {e}");
            Cow::Owned(item.clone())
        }
    }
}

/// `event` with all its text escaped for a terminal.
pub fn escape_event(event: &Event) -> Cow<'_, Event> {
    escape_serde(event)
}

/// [`escape_event`] for an event the caller owns.
pub fn escaped_event(event: Event) -> Event {
    match escape_serde(&event) {
        Cow::Borrowed(_) => event,
        Cow::Owned(escaped) => escaped,
    }
}

/// A stored message (a resumed session) escaped for the transcript.
pub fn escape_message(
    message: &agent_loop::model::ChatMessage,
) -> Cow<'_, agent_loop::model::ChatMessage> {
    escape_serde(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_become_visible_and_text_stays() {
        assert!(matches!(
            escape("plain text\nwith a tab\tand ünïcode"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            escape("copy\x1b]52;c;ZXZpbA==\x07 clear\x1b[2J\x1b[H"),
            "copy^[]52;c;ZXZpbA==^G clear^[[2J^[[H"
        );
        assert_eq!(escape("a\r\nb\rc\x7f\0"), "a\nb^Mc^?^@");
        assert_eq!(escape("\u{9b}31m \u{202e}txt"), "<U+009B>31m <U+202E>txt");
    }

    #[test]
    fn every_string_of_an_event_is_escaped() {
        let event = Event::ToolCallBegin {
            call_id: "c1".into(),
            name: "terminal".into(),
            arguments: serde_json::json!({"command": "printf '\x1b]0;owned\x07'", "n": 1}),
        };
        let escaped = escape_event(&event);
        let Event::ToolCallBegin { arguments, .. } = escaped.as_ref() else {
            panic!("{escaped:?}");
        };
        assert_eq!(arguments["command"], "printf '^[]0;owned^G'");
        assert_eq!(arguments["n"], 1);
        let answer = Event::AssistantDelta {
            text: "fine".into(),
        };
        assert!(matches!(escape_event(&answer), Cow::Borrowed(_)));
        assert_eq!(
            escaped_event(Event::AssistantMessage {
                text: "\x1b[2Jdone".into()
            }),
            Event::AssistantMessage {
                text: "^[[2Jdone".into()
            }
        );
    }
}

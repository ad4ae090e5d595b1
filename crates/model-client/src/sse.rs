//! A minimal server-sent-events decoder: bytes in, complete `data` payloads out.
//! Only what Chat Completions streams use: `data:` lines, comments, blank-line dispatch.

/// Incremental SSE decoder; network chunks may split lines and UTF-8 characters anywhere.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    pending: Vec<u8>,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// Feeds bytes and returns the data of every event they completed.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..].iter().position(|b| *b == b'\n') {
            let end = start + offset;
            let line = &self.pending[start..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = String::from_utf8_lossy(line).into_owned();
            if let Some(data) = self.line(&line) {
                events.push(data);
            }
            start = end + 1;
        }
        self.pending.drain(..start);
        events
    }

    /// The event left open when the stream ended without its blank line.
    pub(crate) fn finish(&mut self) -> Option<String> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let line = String::from_utf8_lossy(&rest).into_owned();
            if let Some(data) = self.line(&line) {
                return Some(data);
            }
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        // `event`, `id` and `retry` carry nothing Chat Completions clients need.
        None
    }

    fn dispatch(&mut self) -> Option<String> {
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(std::mem::take(&mut self.data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_pushes_and_crlf_lines_decode() {
        let mut decoder = SseDecoder::default();
        assert!(decoder.push(b"data: {\"a\"").is_empty());
        assert_eq!(decoder.push(b":1}\r\n\r\ndata: [DO"), vec!["{\"a\":1}"]);
        assert_eq!(decoder.push(b"NE]\n\n"), vec!["[DONE]"]);
    }

    #[test]
    fn comments_other_fields_and_multi_line_data() {
        let mut decoder = SseDecoder::default();
        let events =
            decoder.push(b": keep-alive\n\nevent: message\nid: 7\ndata: one\ndata:two\n\n");
        assert_eq!(events, vec!["one\ntwo"]);
    }

    #[test]
    fn a_multibyte_character_split_between_pushes_survives() {
        let text = "data: héllo\n\n".as_bytes();
        let split = text.iter().position(|b| *b == 0xC3).unwrap() + 1;
        let mut decoder = SseDecoder::default();
        assert!(decoder.push(&text[..split]).is_empty());
        assert_eq!(decoder.push(&text[split..]), vec!["héllo"]);
    }

    #[test]
    fn finish_flushes_an_unterminated_event() {
        let mut decoder = SseDecoder::default();
        assert!(decoder.push(b"data: tail").is_empty());
        assert_eq!(decoder.finish().as_deref(), Some("tail"));
        assert_eq!(decoder.finish(), None);
    }
}

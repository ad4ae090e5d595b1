//! Shell-level rewriting: quote splitting undone (`ba""sh` → `bash`), and variables set earlier expanded (`$c$r`, `${!v}`).
//! Python and JavaScript names bound to a short string or a secret-file read are expanded too, so a two-line leak reads as one.

use std::collections::HashMap;

/// Names remembered per file; past this a file is data, not a script.
const MAX_NAMES: usize = 512;
/// Longest value remembered.
const MAX_VALUE: usize = 512;
/// Longest code string literal remembered (a module or function name, a command).
const MAX_CODE_LITERAL: usize = 96;

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_separator(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>' | b'`')
}

/// One shell word, read with the shell's quoting rules.
struct Word {
    end: usize,
    /// The word as the shell passes it on (only filled when asked for).
    unquoted: Vec<u8>,
    /// The unquoted word is a plain name: letters, digits, `-_./`, not empty.
    plain: bool,
    /// Quotes or backslashes glue pieces of one word together.
    split: bool,
    /// A quote never closed: an apostrophe in prose, not shell quoting.
    unbalanced: bool,
}

/// Prefixes that make a quote a Python string literal (`f"…"`, `rb'…'`), not
/// a piece of a shell word.
fn literal_prefix(word: &[u8]) -> bool {
    matches!(
        word.to_ascii_lowercase().as_slice(),
        b"f" | b"b" | b"r" | b"u" | b"rb" | b"br" | b"fr" | b"rf"
    )
}

impl Word {
    fn push(&mut self, b: u8, keep: bool) {
        self.plain &= b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/');
        if keep {
            self.unquoted.push(b);
        }
    }
}

/// Reads the word at `start`; `keep` fills [`Word::unquoted`], which a
/// first look at a line (is anything split at all?) does without.
fn read_word(line: &[u8], start: usize, keep: bool) -> Word {
    let mut w = Word {
        end: start,
        unquoted: Vec::new(),
        plain: true,
        split: false,
        unbalanced: false,
    };
    let mut i = start;
    // Whether the previous piece was a quoted segment (for `'a''b'`).
    let mut after_quote = false;
    while i < line.len() && !is_separator(line[i]) {
        let b = line[i];
        match b {
            b'\'' | b'"' => {
                let body_start = i + 1;
                let close = if b == b'\'' {
                    line[body_start..].iter().position(|&c| c == b'\'')
                } else {
                    closing_double_quote(&line[body_start..])
                };
                let Some(len) = close else {
                    w.unbalanced = true;
                    w.end = line.len();
                    return w;
                };
                let before_is_word = i > start && is_word(line[i - 1]);
                // `it's the user's`: an apostrophe between letters whose
                // "quote" spans words is prose, not shell quoting.
                let next_is_letter = line.get(body_start).is_some_and(u8::is_ascii_alphabetic);
                if before_is_word
                    && next_is_letter
                    && line[body_start..body_start + len]
                        .iter()
                        .any(u8::is_ascii_whitespace)
                {
                    w.unbalanced = true;
                    w.end = line.len();
                    return w;
                }
                let prefix_run = {
                    let mut p = i;
                    while p > start && is_word(line[p - 1]) {
                        p -= 1;
                    }
                    &line[p..i]
                };
                let after = i + 1 + len + 1;
                let after_is_word = after < line.len() && is_word(line[after]);
                let empty = len == 0;
                if (before_is_word
                    && !(prefix_run.len() == i - start && literal_prefix(prefix_run)))
                    || after_is_word
                    || after_quote
                    || (empty && (i > start || (after < line.len() && !is_separator(line[after]))))
                {
                    w.split = true;
                }
                let body = &line[body_start..body_start + len];
                if b == b'"' {
                    let mut k = 0;
                    while k < body.len() {
                        if body[k] == b'\\'
                            && k + 1 < body.len()
                            && matches!(body[k + 1], b'"' | b'\\' | b'$' | b'`')
                        {
                            k += 1;
                        }
                        w.push(body[k], keep);
                        k += 1;
                    }
                } else {
                    for &c in body {
                        w.push(c, keep);
                    }
                }
                if body.is_empty() {
                    w.plain = w.plain && i > start;
                }
                i = after;
                after_quote = i < line.len() && matches!(line[i], b'\'' | b'"');
                continue;
            }
            // `$'…'` (ANSI-C quoting) exists to spell bytes as escapes; as a
            // piece of a command word it is a disguise, so the `$` goes.
            b'$' if line.get(i + 1) == Some(&b'\'') => {
                w.split = true;
                i += 1;
                continue;
            }
            b'\\' if i + 1 < line.len() => {
                if line[i + 1].is_ascii_alphanumeric() {
                    w.split = true;
                }
                w.push(line[i + 1], keep);
                i += 2;
            }
            _ => {
                w.push(b, keep);
                i += 1;
            }
        }
        after_quote = false;
    }
    w.end = i;
    w.plain &= w.end > start;
    w
}

fn closing_double_quote(body: &[u8]) -> Option<usize> {
    let mut k = 0;
    while k < body.len() {
        match body[k] {
            b'\\' => k += 2,
            b'"' => return Some(k),
            _ => k += 1,
        }
    }
    None
}

/// Words glued from quoted pieces or backslashes, written the way the shell
/// reads them: `ba""sh`, `b'a'sh`, `"ba"sh`, `c\url` all become one plain word.
pub(super) fn unsplit_quotes(line: &[u8]) -> Option<Vec<u8>> {
    if !line.iter().any(|&b| matches!(b, b'\'' | b'"' | b'\\')) {
        return None;
    }
    // Most lines quote nothing oddly: look first, rewrite only when needed.
    rewrite_words(line, false)?;
    rewrite_words(line, true)
}

/// The rewritten line, or `None` when no word needed rewriting; with
/// `build` false only the answer matters and nothing is copied.
fn rewrite_words(line: &[u8], build: bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(if build { line.len() } else { 0 });
    let mut i = 0;
    let mut changed = false;
    // Whether the next word names the program to run.
    let mut command_position = true;
    while i < line.len() {
        if is_separator(line[i]) {
            // A call's `(` in code starts arguments, not a command; `$(` does.
            let b = line[i];
            if matches!(b, b';' | b'|' | b'&' | b'`') || (b == b'(' && i > 0 && line[i - 1] == b'$')
            {
                command_position = true;
            } else if !b.is_ascii_whitespace() {
                command_position = false;
            }
            if build {
                out.push(line[i]);
            }
            i += 1;
            continue;
        }
        let w = read_word(line, i, build);
        if w.unbalanced {
            // Prose: copy the rest of the line as it is.
            if build {
                out.extend_from_slice(&line[i..]);
            }
            break;
        }
        // `| "bash"`: quotes around a plain program name mean nothing to the
        // shell, and only hide the name from a pattern.
        let quoted_program = command_position && matches!(line[i], b'\'' | b'"') && w.plain;
        command_position = false;
        if w.split || quoted_program {
            if !build {
                return Some(Vec::new());
            }
            out.extend_from_slice(&w.unquoted);
            changed = true;
        } else if build {
            out.extend_from_slice(&line[i..w.end]);
        }
        i = w.end.max(i + 1);
    }
    changed.then_some(out)
}

/// Values bound earlier in the file: shell variables and code names.
#[derive(Default)]
pub(super) struct Variables {
    shell: HashMap<Vec<u8>, Vec<u8>>,
    code: HashMap<Vec<u8>, Vec<u8>>,
    /// First bytes of the code names, so most words skip the map lookup.
    code_starts: u128,
}

/// A shell assignment `NAME=value` starting at `at`: the name, the value as
/// the shell stores it, and where the assignment ends.
fn shell_assignment(line: &[u8], at: usize) -> Option<(&[u8], Vec<u8>, usize)> {
    if at > 0 && !matches!(line[at - 1], b' ' | b'\t' | b';' | b'&' | b'|' | b'(') {
        return None;
    }
    if !(line[at].is_ascii_alphabetic() || line[at] == b'_') {
        return None;
    }
    let mut eq = at;
    while eq < line.len() && is_word(line[eq]) {
        eq += 1;
    }
    if line.get(eq) != Some(&b'=') || line.get(eq + 1) == Some(&b'=') {
        return None;
    }
    let name = &line[at..eq];
    let start = eq + 1;
    let (value, end) = match line.get(start) {
        Some(b'$') if line.get(start + 1) == Some(&b'(') => {
            let mut depth = 0;
            let mut k = start + 1;
            let mut close = None;
            while k < line.len() {
                match line[k] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            let close = close?;
            (line[start..=close].to_vec(), close + 1)
        }
        Some(b'(') => return None,
        _ => {
            let w = read_word(line, start, true);
            if w.unbalanced {
                return None;
            }
            (w.unquoted, w.end)
        }
    };
    (value.len() <= MAX_VALUE).then_some((name, value, end))
}

/// A code binding `name = <expr>` at the start of the line (after `const`,
/// `let` or `var`), when the value is worth remembering: a short string
/// literal, a read of a secret file, or a dynamic import.
fn code_assignment(line: &[u8]) -> Option<(&[u8], Vec<u8>)> {
    let mut rest = line.trim_ascii_start();
    for kw in [&b"const "[..], b"let ", b"var ", b"export const "] {
        if let Some(r) = rest.strip_prefix(kw) {
            rest = r.trim_ascii_start();
        }
    }
    let name_len = rest.iter().take_while(|&&b| is_word(b)).count();
    if name_len == 0 || rest[0].is_ascii_digit() {
        return None;
    }
    let (name, after) = rest.split_at(name_len);
    let after = after.trim_ascii_start();
    let value = after.strip_prefix(b"=")?;
    if value.first() == Some(&b'=') {
        return None;
    }
    let value = value.trim_ascii();
    let value = value.strip_suffix(b";").unwrap_or(value).trim_ascii_end();
    let literal = value.len() >= 2
        && value.len() <= MAX_CODE_LITERAL
        && matches!(value[0], b'\'' | b'"')
        && value.last() == Some(&value[0])
        && !value[1..value.len() - 1].contains(&value[0]);
    let worth = literal
        || (value.len() <= MAX_VALUE && (mentions_secret_file(value) || has(value, b"__import__")));
    worth.then(|| (name, value.to_vec()))
}

fn has(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Files whose content should never reach a request.
fn mentions_secret_file(value: &[u8]) -> bool {
    // `.env` as a file name, not `os.environ` or `process.env.X`.
    let env_file = value.windows(4).enumerate().any(|(i, w)| {
        w == b".env"
            && (i == 0 || !is_word(value[i - 1]))
            && value.get(i + 4).is_none_or(|&b| !b.is_ascii_alphanumeric())
    });
    const MARKERS: &[&[u8]] = &[
        b"id_rsa",
        b"id_ed25519",
        b"id_ecdsa",
        b".ssh/",
        b".aws/",
        b".netrc",
        b".pgpass",
        b".git-credentials",
        b".npmrc",
        b".pypirc",
        b"credentials",
        b".kube/config",
        b".docker/config",
        b".knack",
        b"/etc/shadow",
    ];
    env_file || MARKERS.iter().any(|m| has(value, m))
}

/// A name and its value, bound earlier on the line being expanded.
type Binding = (Vec<u8>, Vec<u8>);

impl Variables {
    /// The value of `name`: bound earlier on this line, else in the file.
    fn lookup(&self, local: &[Binding], name: &[u8]) -> Option<Vec<u8>> {
        local
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| self.shell.get(name).cloned())
    }

    /// Whether any code name is bound; then every line may use one.
    pub(super) fn has_code_names(&self) -> bool {
        !self.code.is_empty()
    }

    /// Records the bindings a (normalised) line makes.
    pub(super) fn learn(&mut self, line: &[u8]) {
        if line.contains(&b'=') {
            if let Some((name, value)) = code_assignment(line) {
                self.remember_code(name, value);
            }
            let mut i = 0;
            while i < line.len() {
                match shell_assignment(line, i) {
                    Some((name, value, end)) => {
                        self.remember_shell(name, value);
                        i = end.max(i + 1);
                    }
                    None => i += 1,
                }
            }
        }
    }

    fn remember_shell(&mut self, name: &[u8], value: Vec<u8>) {
        if self.shell.len() < MAX_NAMES || self.shell.contains_key(name) {
            self.shell.insert(name.to_vec(), value);
        }
    }

    fn remember_code(&mut self, name: &[u8], value: Vec<u8>) {
        if self.code.len() < MAX_NAMES || self.code.contains_key(name) {
            if let Some(&first) = name.first() {
                self.code_starts |= 1u128 << (first & 0x7f);
            }
            self.code.insert(name.to_vec(), value);
        }
    }

    /// The line with known variables expanded, reading left to right so an
    /// assignment earlier on the line counts (`c=cu;r=rl;$c$r`).
    pub(super) fn expand(&self, line: &[u8]) -> Option<Vec<u8>> {
        let shellish = line.contains(&b'$');
        if !shellish && self.code.is_empty() {
            return None;
        }
        // Nothing known and nothing assigned here: no reference can expand.
        if self.shell.is_empty() && self.code.is_empty() && !line.contains(&b'=') {
            return None;
        }
        let mut local: Vec<Binding> = Vec::new();
        let mut out = Vec::with_capacity(line.len());
        let mut i = 0;
        let mut changed = false;
        while i < line.len() {
            let b = line[i];
            if shellish && let Some((name, value, end)) = shell_assignment(line, i) {
                // Copy the assignment itself, with references in its value expanded.
                let expanded = self.expand_refs(&value, &local).unwrap_or(value);
                local.push((name.to_vec(), expanded));
                out.extend_from_slice(&line[i..end]);
                i = end.max(i + 1);
                continue;
            }
            if b == b'$' {
                if let Some((value, end)) = self.reference(line, i, &local) {
                    out.extend_from_slice(&value);
                    i = end;
                    changed = true;
                    continue;
                }
            } else if !self.code.is_empty()
                && (b.is_ascii_alphabetic() || b == b'_')
                && (i == 0 || !is_word(line[i - 1]) && line[i - 1] != b'.' && line[i - 1] != b'$')
            {
                let len = line[i..].iter().take_while(|&&c| is_word(c)).count();
                let name = &line[i..i + len];
                if (self.code_starts >> (b & 0x7f)) & 1 == 0 {
                    out.extend_from_slice(name);
                    i += len;
                    continue;
                }
                let rest = line[i + len..].trim_ascii_start();
                let assigned = rest.first() == Some(&b'=') && rest.get(1) != Some(&b'=');
                if !assigned && let Some(value) = self.code.get(name) {
                    out.extend_from_slice(value);
                    i += len;
                    changed = true;
                    continue;
                }
                out.extend_from_slice(name);
                i += len;
                continue;
            }
            out.push(b);
            i += 1;
        }
        changed.then_some(out)
    }

    /// Expands `$name`, `${name}` and `${!name}` references in a value.
    fn expand_refs(&self, value: &[u8], local: &[Binding]) -> Option<Vec<u8>> {
        if !value.contains(&b'$') {
            return None;
        }
        let mut out = Vec::with_capacity(value.len());
        let mut i = 0;
        let mut changed = false;
        while i < value.len() {
            if value[i] == b'$'
                && let Some((v, end)) = self.reference(value, i, local)
            {
                out.extend_from_slice(&v);
                i = end;
                changed = true;
                continue;
            }
            out.push(value[i]);
            i += 1;
        }
        changed.then_some(out)
    }

    /// The value of the reference at `at` (a `$`), and where it ends.
    fn reference(&self, line: &[u8], at: usize, local: &[Binding]) -> Option<(Vec<u8>, usize)> {
        let lookup = |local: &[Binding], name: &[u8]| self.lookup(local, name);
        let rest = &line[at + 1..];
        if let Some(inner) = rest.strip_prefix(b"{") {
            let close = inner.iter().position(|&b| b == b'}')?;
            let body = &inner[..close];
            let end = at + 2 + close + 1;
            if let Some(pointer) = body.strip_prefix(b"!") {
                // `${!v}`: the variable whose name `v` holds.
                let target = lookup(local, pointer)?;
                return match lookup(local, &target) {
                    Some(v) => Some((v, end)),
                    None if !target.is_empty() && target.iter().all(|&b| is_word(b)) => {
                        let mut r = b"$".to_vec();
                        r.extend_from_slice(&target);
                        Some((r, end))
                    }
                    None => None,
                };
            }
            let name_len = body.iter().take_while(|&&b| is_word(b)).count();
            if name_len == 0 || (name_len < body.len() && !body[name_len..].starts_with(b":-")) {
                return None;
            }
            return lookup(local, &body[..name_len]).map(|v| (v, end));
        }
        let len = rest.iter().take_while(|&&b| is_word(b)).count();
        if len == 0 || rest[0].is_ascii_digit() {
            return None;
        }
        lookup(local, &rest[..len]).map(|v| (v, at + 1 + len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: Option<Vec<u8>>) -> Option<String> {
        v.map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn split_words_are_joined() {
        for (input, want) in [
            ("x | ba\"\"sh", "x | bash"),
            ("x | b'a'sh -i", "x | bash -i"),
            ("\"ba\"sh", "bash"),
            ("'cu''rl' -s", "curl -s"),
            ("c\\url -s", "curl -s"),
            ("x | $'bash'", "x | bash"),
            ("x | \"bash\" -i", "x | bash -i"),
        ] {
            assert_eq!(
                s(unsplit_quotes(input.as_bytes())),
                Some(want.into()),
                "{input}"
            );
        }
    }

    #[test]
    fn ordinary_quoting_and_prose_are_left_alone() {
        for input in [
            "echo \"hello world\" 'x'",
            "it's the user's \"config\"",
            "print(f\"{name}\") and rb'\\x00'",
            "curl -H 'Accept: json' \"$URL\"",
            "{\"key\":\"value\"}",
        ] {
            assert_eq!(unsplit_quotes(input.as_bytes()), None, "{input}");
        }
    }

    #[test]
    fn variables_expand_on_the_line_and_after_it() {
        let mut v = Variables::default();
        assert_eq!(
            s(v.expand(b"c=cu;r=rl;$c$r x")),
            Some("c=cu;r=rl;curl x".into())
        );
        v.learn(b"t=bash; p=t");
        assert_eq!(s(v.expand(b"x | $t")), Some("x | bash".into()));
        assert_eq!(s(v.expand(b"x | ${!p}")), Some("x | bash".into()));
        assert_eq!(s(v.expand(b"x | ${t}")), Some("x | bash".into()));
        assert_eq!(v.expand(b"echo $HOME"), None);
    }

    #[test]
    fn code_names_bound_to_secrets_or_literals_expand() {
        let mut v = Variables::default();
        v.learn(b"data = open('.env').read()");
        v.learn(b"m = 'os'");
        v.learn(b"count = len(items)");
        assert_eq!(
            s(v.expand(b"requests.post(u, data=data)")),
            Some("requests.post(u, data=open('.env').read())".into())
        );
        assert_eq!(
            s(v.expand(b"__import__(m)")),
            Some("__import__('os')".into())
        );
        assert_eq!(v.expand(b"print(count)"), None);
        assert_eq!(v.expand(b"self.m = 1"), None);
    }
}

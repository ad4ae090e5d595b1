//! Download-then-run across commands and lines: a file that `curl -o`, `wget` or `urlretrieve` saved, later run by a shell or an interpreter.
//! It is `curl … | bash` in two steps, so it is reported like it; a well-known vendor installer is reported milder, as the pipe form is.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

use crate::catalog::VENDOR_INSTALLER_URL;

/// A download and the later command that runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Flow {
    /// Offset (in the scanned text) of the line that downloads.
    pub(crate) fetched_at: usize,
    /// Offset of the line that runs the file.
    pub(crate) run_at: usize,
    /// The file's name as the download saved it.
    pub(crate) name: String,
    /// The URL is a well-known vendor installer.
    pub(crate) vendor: bool,
}

struct Fetched {
    name: Vec<u8>,
    at: usize,
    vendor: bool,
}

/// Files downloaded so far in one text.
#[derive(Default)]
pub(super) struct Tracker {
    fetched: Vec<Fetched>,
}

/// Most downloads remembered per text.
const MAX_FETCHED: usize = 64;

static VENDOR: LazyLock<Option<Regex>> = LazyLock::new(|| {
    RegexBuilder::new(VENDOR_INSTALLER_URL)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .ok()
});

/// Programs that run a file given to them.
const RUNNERS: &[&[u8]] = &[
    b"bash",
    b"sh",
    b"zsh",
    b"dash",
    b"ksh",
    b"fish",
    b"python",
    b"python2",
    b"python3",
    b"perl",
    b"ruby",
    b"node",
    b"php",
    b"pwsh",
    b"powershell",
    b"bun",
    b"deno",
    b"exec",
    b"eval",
    b"iex",
    b"system",
    b"popen",
    b"run",
    b"call",
    b"Popen",
    b"check_call",
    b"check_output",
    b"spawn",
    b"execFile",
    b"execSync",
];

/// Words that may stand before a command without being the program.
const PREFIXES: &[&[u8]] = &[
    b"sudo", b"then", b"do", b"exec", b"nohup", b"time", b"env", b"&&",
];

fn has(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn trim_token(t: &[u8]) -> &[u8] {
    let t = t.trim_ascii();
    let strip = |b: &u8| matches!(b, b'\'' | b'"' | b'(' | b')' | b',' | b'[' | b']' | b'`');
    let start = t.iter().position(|b| !strip(b)).unwrap_or(t.len());
    let end = t.iter().rposition(|b| !strip(b)).map_or(start, |e| e + 1);
    &t[start..end.max(start)]
}

fn basename(path: &[u8]) -> &[u8] {
    let path = path
        .split(|&b| b == b'?' || b == b'#')
        .next()
        .unwrap_or(path);
    let path = path.strip_suffix(b"/").unwrap_or(path);
    path.rsplit(|&b| b == b'/' || b == b'\\')
        .next()
        .unwrap_or(path)
}

impl Tracker {
    /// Whether some download is waiting to be run.
    pub(super) fn active(&self) -> bool {
        !self.fetched.is_empty()
    }

    /// Reads one (normalised) line: first the commands that run a file
    /// downloaded earlier, then the downloads it makes, command by command.
    /// `downloads`: the line names a download tool (the caller looked).
    pub(super) fn line(&mut self, line: &[u8], at: usize, downloads: bool, out: &mut Vec<Flow>) {
        if !downloads && self.fetched.is_empty() {
            return;
        }
        for command in line.split(|&b| b == b';' || b == b'&' || b == b'|' || b == b'\n') {
            if !self.fetched.is_empty() {
                self.runs(command, at, out);
            }
            if downloads && let Some((name, url)) = saved_file(command) {
                let name = basename(&name).to_vec();
                if name.len() >= 2 && name != b"-" && self.fetched.len() < MAX_FETCHED {
                    let vendor = VENDOR.as_ref().is_some_and(|re| re.is_match(&url));
                    self.fetched.push(Fetched { name, at, vendor });
                }
            }
        }
    }

    fn runs(&self, command: &[u8], at: usize, out: &mut Vec<Flow>) {
        for f in &self.fetched {
            let mut from = 0;
            while let Some(pos) = find(&command[from..], &f.name).map(|p| p + from) {
                from = pos + 1;
                let end = pos + f.name.len();
                let ends_token = command.get(end).is_none_or(|&b| {
                    b.is_ascii_whitespace() || matches!(b, b'\'' | b'"' | b')' | b',' | b']' | b'`')
                });
                let starts_name = pos == 0
                    || matches!(
                        command[pos - 1],
                        b'/' | b'\\'
                            | b' '
                            | b'\t'
                            | b'\''
                            | b'"'
                            | b'('
                            | b'['
                            | b'='
                            | b','
                            | b'`'
                    );
                if !ends_token || !starts_name || !is_run(command, pos) {
                    continue;
                }
                if !out.iter().any(|o| o.run_at == at && o.fetched_at == f.at) {
                    out.push(Flow {
                        fetched_at: f.at,
                        run_at: at,
                        name: String::from_utf8_lossy(&f.name).into_owned(),
                        vendor: f.vendor,
                    });
                }
                break;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether the path ending at the name found at `pos` is run: given to a
/// shell or interpreter, or itself in command position with a directory.
fn is_run(command: &[u8], pos: usize) -> bool {
    // The start of the path token holding the name.
    let mut start = pos;
    while start > 0
        && !matches!(
            command[start - 1],
            b' ' | b'\t' | b'\'' | b'"' | b'(' | b'[' | b',' | b'`' | b'='
        )
    {
        start -= 1;
    }
    let has_dir = start < pos;
    let before = &command[..start];
    let mut words: Vec<&[u8]> = before
        .split(|b| b.is_ascii_whitespace() || *b == b',' || *b == b'(' || *b == b'[')
        .map(trim_token)
        .filter(|w| !w.is_empty())
        .collect();
    // Flags between the program and the file (`python3 -u x.py`, `bash -x x.sh`).
    while words.last().is_some_and(|w| w.starts_with(b"-")) {
        words.pop();
    }
    let Some(last) = words.last() else {
        return has_dir;
    };
    if PREFIXES.contains(last) {
        return has_dir;
    }
    // `. file` and `source file` run it only as the command itself (`jq . file` does not).
    if *last == b"." || *last == b"source" {
        let before_it = &words[..words.len() - 1];
        return before_it.last().is_none_or(|w| PREFIXES.contains(w));
    }
    let program = basename(last);
    // `exec(open('x.py').read())`: `open` runs only inside exec or eval.
    if program.ends_with(b"open") && !program.ends_with(b"popen") {
        return has(before, b"exec") || has(before, b"eval");
    }
    let program = program.strip_suffix(b".exe").unwrap_or(program);
    RUNNERS.iter().any(|r| {
        *r == program
            || (r.len() >= 6
                && program.starts_with(r)
                && program[r.len()..]
                    .iter()
                    .all(|b| b.is_ascii_digit() || *b == b'.'))
    })
}

/// The file a download command saves, and its URL.
fn saved_file(command: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    if let Some(at) = find(command, b"urlretrieve") {
        // urlretrieve(URL, 'file') or filename='file'
        let args = &command[at..];
        let parts: Vec<&[u8]> = args.split(|&b| b == b',').collect();
        let url = parts.first().map(|p| url_in(p)).unwrap_or_default();
        let file = parts.get(1).map(|p| {
            let p = trim_token(p);
            let p = p.strip_prefix(b"filename=").unwrap_or(p);
            trim_token(p).to_vec()
        })?;
        return (!file.is_empty()).then_some((file, url));
    }
    let tokens: Vec<&[u8]> = command
        .split(|b| b.is_ascii_whitespace())
        .map(trim_token)
        .filter(|t| !t.is_empty())
        .collect();
    let tool = tokens.iter().position(|t| {
        let b = basename(t);
        matches!(b, b"curl" | b"wget" | b"curl.exe" | b"wget.exe" | b"iwr")
            || b.eq_ignore_ascii_case(b"Invoke-WebRequest")
    })?;
    let is_wget = basename(tokens[tool]).starts_with(b"wget");
    let args = &tokens[tool + 1..];
    let url = args
        .iter()
        .find(|t| has(t, b"://"))
        .map(|t| t.to_vec())
        .unwrap_or_default();
    let mut remote_name = false;
    let mut saved: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        let next = args.get(i + 1).map(|t| t.to_vec());
        if a.eq_ignore_ascii_case(b"-OutFile") || a == b"--output" || a == b"--output-document" {
            saved = next;
        } else if let Some(v) = a
            .strip_prefix(b"--output=")
            .or_else(|| a.strip_prefix(b"--output-document="))
        {
            saved = Some(v.to_vec());
        } else if a == b">" {
            saved = next;
        } else if let Some(v) = a
            .strip_prefix(b">")
            .filter(|v| !v.is_empty() && v[0] != b'&')
        {
            saved = Some(v.to_vec());
        } else if a == b"--remote-name" {
            remote_name = true;
        } else if a.len() >= 2 && a[0] == b'-' && a[1] != b'-' {
            // A cluster of short flags: the file follows the last letter.
            let flags = &a[1..];
            let letter = if is_wget { b'O' } else { b'o' };
            if let Some(p) = flags.iter().position(|&b| b == letter) {
                let attached = &flags[p + 1..];
                saved = if attached.is_empty() {
                    next
                } else {
                    Some(attached.to_vec())
                };
            } else if !is_wget && flags.contains(&b'O') {
                remote_name = true;
            }
        }
        i += 1;
    }
    match saved {
        Some(s) if s != b"-" && !s.starts_with(b"/dev/") => Some((s, url)),
        Some(_) => None,
        None if (remote_name || is_wget) && !url.is_empty() => {
            // Without a path the server's index page is what gets saved.
            let path = find(&url, b"://").map_or(&url[..], |p| &url[p + 3..]);
            let name = match basename(path) {
                n if n.is_empty() || !path.contains(&b'/') => b"index.html".to_vec(),
                n => n.to_vec(),
            };
            Some((name, url))
        }
        None => None,
    }
}

fn url_in(part: &[u8]) -> Vec<u8> {
    let start = find(part, b"http").unwrap_or(part.len());
    let rest = &part[start..];
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'\'' | b'"' | b' ' | b')'))
        .unwrap_or(rest.len());
    rest[..end].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(text: &str) -> Vec<(usize, usize, String, bool)> {
        let mut t = Tracker::default();
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            t.line(line.as_bytes(), n, true, &mut out);
        }
        out.into_iter()
            .map(|f| (f.fetched_at, f.run_at, f.name, f.vendor))
            .collect()
    }

    #[test]
    fn a_download_run_later_is_a_flow() {
        assert_eq!(
            flows("curl -fsSLo /tmp/i.sh https://x.example/i.sh\necho ok\nbash /tmp/i.sh\n"),
            vec![(0, 2, "i.sh".into(), false)]
        );
        assert_eq!(
            flows("wget -q https://x.example/agent && chmod +x agent && ./agent"),
            vec![(0, 0, "agent".into(), false)]
        );
        assert_eq!(
            flows("curl -sO https://x.example/setup.py; python3 -u setup.py"),
            vec![(0, 0, "setup.py".into(), false)]
        );
        assert_eq!(
            flows(
                "urllib.request.urlretrieve('https://x.example/p.py', '/tmp/p.py')\nexec(open('/tmp/p.py').read())"
            ),
            vec![(0, 1, "p.py".into(), false)]
        );
        assert_eq!(
            flows(
                "Invoke-WebRequest https://x.example/a.ps1 -OutFile a.ps1\npowershell -File .\\a.ps1"
            ),
            vec![(0, 1, "a.ps1".into(), false)]
        );
    }

    #[test]
    fn vendor_installers_are_marked() {
        let f =
            flows("curl -fsSL https://get.docker.com -o get-docker.sh\nsudo sh get-docker.sh\n");
        assert_eq!(f, vec![(0, 1, "get-docker.sh".into(), true)]);
    }

    #[test]
    fn downloads_that_are_only_read_are_not_flows() {
        assert!(flows("curl -o data.json https://x.example/d\njq . data.json\npython3 report.py data.json\n").is_empty());
        assert!(flows("curl -LO https://x.example/t.tar.gz\ntar xzf t.tar.gz\n").is_empty());
        assert!(flows("wget -qO- https://x.example/a | tar xz\n").is_empty());
        assert!(flows("bash install.sh\n").is_empty());
    }
}

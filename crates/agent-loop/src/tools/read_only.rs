//! The commands `approval: untrusted` runs without asking: one table of programs, each with the
//! argument shapes that only read. Anything else — another program, an option that writes or
//! runs a program, an expansion, a redirection into a file — is asked about.
//!
//! The line is split into simple commands by a quote-aware scan (operators, expansions,
//! redirections) and each into words by `shlex`; a program's arguments are then checked by its
//! entry. Refusing too much costs one question; allowing too much runs a writer unasked.

use std::sync::LazyLock;

use regex::Regex;

/// Why a command line is not on the read-only list, for the approval question.
pub type Refusal = String;

/// Whether `command` only reads, by the table below: `Err` says why not.
pub fn check(command: &str) -> Result<(), Refusal> {
    for segment in split_simple_commands(command)? {
        let words = shlex::split(&segment.text)
            .ok_or_else(|| "its quoting could not be read".to_owned())?;
        let Some((program, args)) = words.split_first() else {
            continue;
        };
        if program.contains('=') {
            return Err(format!("`{program}` sets a variable for the program"));
        }
        let entry = READ_ONLY
            .iter()
            .find(|e| e.program == program)
            .ok_or_else(|| format!("`{program}` is not on the read-only list"))?;
        if segment.globs && !entry.globs {
            return Err(format!(
                "a wildcard could expand to a file named like an option of `{program}`"
            ));
        }
        (entry.check)(args).map_err(|why| format!("`{program}`: {why}"))?;
    }
    Ok(())
}

/// One program `untrusted` may run unasked, and how its arguments are checked.
pub struct Entry {
    pub program: &'static str,
    /// Unquoted wildcards may stand in its arguments: none of its options
    /// writes or runs anything, so a file named like an option does no harm.
    pub globs: bool,
    pub check: fn(&[String]) -> Result<(), Refusal>,
}

/// The table. Every entry has tests below, allowed and refused shapes.
pub static READ_ONLY: &[Entry] = &[
    any("ls"),
    any("cat"),
    any("head"),
    any("tail"),
    any("wc"),
    any("pwd"),
    any("echo"),
    any("grep"),
    any("which"),
    any("stat"),
    any("du"),
    any("df"),
    any("whoami"),
    any("uname"),
    any("cd"),
    any("true"),
    Entry {
        program: "file",
        globs: false,
        check: file_args,
    },
    Entry {
        program: "date",
        globs: false,
        check: date_args,
    },
    Entry {
        program: "tree",
        globs: false,
        check: tree_args,
    },
    Entry {
        program: "sort",
        globs: false,
        check: sort_args,
    },
    Entry {
        program: "uniq",
        globs: false,
        check: uniq_args,
    },
    Entry {
        program: "rg",
        globs: false,
        check: rg_args,
    },
    Entry {
        program: "find",
        globs: false,
        check: find_args,
    },
    Entry {
        program: "sed",
        globs: false,
        check: sed_args,
    },
    Entry {
        program: "git",
        globs: false,
        check: git_args,
    },
];

const fn any(program: &'static str) -> Entry {
    Entry {
        program,
        globs: true,
        check: |_| Ok(()),
    }
}

/// One simple command of a line, and whether it holds an unquoted wildcard.
#[derive(Debug, PartialEq, Eq)]
struct Segment {
    text: String,
    globs: bool,
}

/// Splits a line at unquoted `;`, `&`, `|` and newlines. Refuses command
/// substitution, parameter expansion and every redirection except the
/// harmless ones (`2>&1`, `>/dev/null`, …), which are dropped.
fn split_simple_commands(line: &str) -> Result<Vec<Segment>, Refusal> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut segments = Vec::new();
    let mut current = Segment {
        text: String::new(),
        globs: false,
    };
    let mut quote = Quote::None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Quote::Single => {
                if c == '\'' {
                    quote = Quote::None;
                }
                current.text.push(c);
            }
            Quote::Double => match c {
                '"' => {
                    quote = Quote::None;
                    current.text.push(c);
                }
                '$' | '`' => return Err("it expands a variable or a command".to_owned()),
                '\\' => {
                    current.text.push(c);
                    if let Some(next) = chars.next() {
                        current.text.push(next);
                    }
                }
                _ => current.text.push(c),
            },
            Quote::None => match c {
                '\'' => {
                    quote = Quote::Single;
                    current.text.push(c);
                }
                '"' => {
                    quote = Quote::Double;
                    current.text.push(c);
                }
                '\\' => {
                    current.text.push(c);
                    match chars.next() {
                        Some(next) => current.text.push(next),
                        None => return Err("it ends in a backslash".to_owned()),
                    }
                }
                '$' | '`' => return Err("it expands a variable or a command".to_owned()),
                '(' | ')' => return Err("it runs a subshell".to_owned()),
                '<' => return Err("it redirects input".to_owned()),
                '>' => {
                    // Only onto /dev/null or another descriptor: the word
                    // before (a descriptor number or `&`) goes with it.
                    let digits = current
                        .text
                        .trim_end_matches(|ch: char| ch.is_ascii_digit() || ch == '&');
                    let op_start = digits.len();
                    let mut target = String::new();
                    if chars.peek() == Some(&'&') {
                        chars.next();
                        while let Some(d) = chars.next_if(char::is_ascii_digit) {
                            target.push(d);
                        }
                        if target.is_empty() {
                            return Err("it redirects output into a file".to_owned());
                        }
                    } else {
                        while chars.next_if(|ch| *ch == ' ').is_some() {}
                        while let Some(ch) = chars.next_if(|ch| !ch.is_whitespace()) {
                            target.push(ch);
                        }
                        if target != "/dev/null" {
                            return Err("it redirects output into a file".to_owned());
                        }
                    }
                    current.text.truncate(op_start);
                    current.text.push(' ');
                }
                ';' | '&' | '|' | '\n' => {
                    segments.push(std::mem::replace(
                        &mut current,
                        Segment {
                            text: String::new(),
                            globs: false,
                        },
                    ));
                }
                '*' | '?' | '[' => {
                    current.globs = true;
                    current.text.push(c);
                }
                _ => current.text.push(c),
            },
        }
    }
    if quote != Quote::None {
        return Err("a quote is not closed".to_owned());
    }
    segments.push(current);
    Ok(segments)
}

/// One argument as an option parser sees it.
#[derive(Debug, PartialEq, Eq)]
enum Arg<'a> {
    /// `-abc`: the letters, in order (a value attached to the last is part of it).
    Short(&'a str),
    /// `--name` or `--name=value`: the name.
    Long(&'a str),
    Positional(&'a str),
}

/// Reads `args` into options and operands; options named in `short_values`
/// (letters) and `long_values` take the next word as their value when none
/// is attached (it is then skipped, neither an option nor an operand).
fn parse<'a>(args: &'a [String], short_values: &str, long_values: &[&str]) -> Vec<Arg<'a>> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    let mut options_done = false;
    while let Some(arg) = iter.next() {
        if options_done || arg == "-" || !arg.starts_with('-') {
            out.push(Arg::Positional(arg));
        } else if arg == "--" {
            options_done = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if !attached && long_values.contains(&name) {
                iter.next();
            }
            out.push(Arg::Long(name));
        } else {
            let letters = &arg[1..];
            // The first letter that takes a value ends the cluster; the
            // rest of the word is its value, or else the next word is.
            match letters
                .char_indices()
                .find(|(_, l)| short_values.contains(*l))
            {
                Some((i, l)) => {
                    if i + l.len_utf8() == letters.len() {
                        iter.next();
                    }
                    out.push(Arg::Short(&letters[..i + l.len_utf8()]));
                }
                None => out.push(Arg::Short(letters)),
            }
        }
    }
    out
}

/// Refuses the short letters in `short` and the long names in `long`
/// (a long name also matches its unambiguous abbreviations, as getopt takes them).
fn deny(args: &[Arg<'_>], short: &str, long: &[&str]) -> Result<(), Refusal> {
    for arg in args {
        match arg {
            Arg::Short(letters) => {
                if let Some(l) = letters.chars().find(|l| short.contains(*l)) {
                    return Err(format!("-{l} writes a file or runs a program"));
                }
            }
            Arg::Long(name) => {
                if let Some(bad) = long.iter().find(|bad| bad.starts_with(*name)) {
                    return Err(format!("--{bad} writes a file or runs a program"));
                }
            }
            Arg::Positional(_) => {}
        }
    }
    Ok(())
}

fn positionals<'a>(args: &'a [Arg<'a>]) -> impl Iterator<Item = &'a str> {
    args.iter().filter_map(|a| match a {
        Arg::Positional(p) => Some(*p),
        _ => None,
    })
}

fn file_args(args: &[String]) -> Result<(), Refusal> {
    // -C compiles a magic file next to the one given.
    deny(&parse(args, "mfFeP", &[]), "C", &["compile"])
}

fn date_args(args: &[String]) -> Result<(), Refusal> {
    // -s sets the system clock (as root it works).
    deny(&parse(args, "dfr", &[]), "s", &["set"])
}

fn tree_args(args: &[String]) -> Result<(), Refusal> {
    // -o writes the listing to a file; -R writes one per folder.
    deny(
        &parse(args, "LPIHTo", &["charset", "filelimit", "timefmt"]),
        "oR",
        &["output"],
    )
}

fn sort_args(args: &[String]) -> Result<(), Refusal> {
    deny(
        &parse(
            args,
            "kotST",
            &[
                "key",
                "field-separator",
                "buffer-size",
                "temporary-directory",
                "parallel",
                "batch-size",
                "random-source",
                "files0-from",
            ],
        ),
        "o",
        &["output", "compress-program"],
    )
}

fn uniq_args(args: &[String]) -> Result<(), Refusal> {
    let parsed = parse(
        args,
        "fsw",
        &["skip-fields", "skip-chars", "check-chars", "group"],
    );
    // A second operand is the file uniq writes to.
    if positionals(&parsed).count() > 1 {
        return Err("a second file name is where it writes".to_owned());
    }
    Ok(())
}

fn rg_args(args: &[String]) -> Result<(), Refusal> {
    // Matched on every word, values included: a pattern spelled `--pre` asks too.
    for arg in args {
        let name = arg.split('=').next().unwrap_or_default();
        if ["--pre", "--hostname-bin"].contains(&name) {
            return Err(format!("{name} runs a program"));
        }
    }
    Ok(())
}

fn find_args(args: &[String]) -> Result<(), Refusal> {
    const ACTIONS: [&str; 9] = [
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
    ];
    match args.iter().find(|a| ACTIONS.contains(&a.as_str())) {
        Some(action) => Err(format!("{action} deletes, writes or runs a program")),
        None => Ok(()),
    }
}

/// sed scripts of a small, plainly harmless shape: addresses (numbers, `$`,
/// `/regex/`), and the commands that print, delete, quit or substitute (with
/// `/` as the separator and no `w` or `e` flag). No `w`, `r`, `e` commands.
static SAFE_SED_SCRIPT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let re = r"(?:/(?:[^/\\\n]|\\.)*/I?)";
    let addr = format!(r"(?:\d+|\$|{re})");
    let command = r"(?:[pdqQ=nNPDlhHgGxz]|s/(?:[^/\\\n]|\\.)*/(?:[^/\\\n]|\\.)*/[gpiI0-9]*|y/(?:[^/\\\n]|\\.)*/(?:[^/\\\n]|\\.)*/)";
    let one = format!(r"\s*(?:{addr}(?:\s*,\s*{addr})?)?\s*!?\s*{command}\s*");
    Regex::new(&format!(r"^{one}(?:[;\n]{one})*;?\s*$")).ok()
});

fn sed_script_is_safe(script: &str) -> bool {
    SAFE_SED_SCRIPT
        .as_ref()
        .is_some_and(|re| re.is_match(script))
}

fn sed_args(args: &[String]) -> Result<(), Refusal> {
    // -i edits the files in place; -f reads a script this check cannot see.
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut iter = args.iter();
    let mut options_done = false;
    while let Some(arg) = iter.next() {
        if options_done || !arg.starts_with('-') || arg == "-" {
            operands.push(arg.as_str());
        } else if arg == "--" {
            options_done = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match name {
                "in-place" | "file" => {
                    return Err(format!("--{name} edits files or reads a script"));
                }
                "expression" => match value.map(str::to_owned).or_else(|| iter.next().cloned()) {
                    Some(script) => scripts.push(script),
                    None => return Err("--expression has no script".to_owned()),
                },
                "line-length" if value.is_none() => {
                    iter.next();
                }
                _ => {}
            }
        } else {
            let letters = &arg[1..];
            for (i, l) in letters.char_indices() {
                match l {
                    'i' | 'f' => return Err(format!("-{l} edits files or reads a script")),
                    'e' => {
                        let rest = &letters[i + 1..];
                        let script = if rest.is_empty() {
                            iter.next().cloned()
                        } else {
                            Some(rest.to_owned())
                        };
                        match script {
                            Some(script) => scripts.push(script),
                            None => return Err("-e has no script".to_owned()),
                        }
                        break;
                    }
                    'l' => {
                        if letters[i + 1..].is_empty() {
                            iter.next();
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(script) => scripts.push((*script).to_owned()),
            None => return Err("no script".to_owned()),
        }
    }
    match scripts.iter().find(|s| !sed_script_is_safe(s)) {
        Some(script) => Err(format!(
            "the script `{script}` may write files or run commands (only p, d, q and s/// \
             without w or e pass)"
        )),
        None => Ok(()),
    }
}

fn git_args(args: &[String]) -> Result<(), Refusal> {
    let mut rest = args.iter();
    // Global options: only those that change nothing but where git looks.
    let sub = loop {
        match rest.next().map(String::as_str) {
            Some("--no-pager" | "-P" | "--no-optional-locks") => {}
            Some("-C") => {
                rest.next();
            }
            Some(other) if other.starts_with('-') => {
                return Err(format!(
                    "the global option {other} can change what git runs"
                ));
            }
            Some(sub) => break sub,
            None => return Err("no subcommand".to_owned()),
        }
    };
    let args: Vec<String> = rest.cloned().collect();
    match sub {
        "status" | "blame" => Ok(()),
        "log" | "show" | "diff" => deny(
            &parse(&args, "", &[]),
            "",
            // --output writes the patch to a file; an external diff or a
            // text conversion runs a configured program.
            &["output", "ext-diff", "textconv"],
        ),
        "branch" => git_branch_args(&args),
        other => Err(format!("`git {other}` is not on the read-only list")),
    }
}

/// `git branch` only lists: listing options, and names only as patterns
/// after `--list` (a bare name creates a branch).
fn git_branch_args(args: &[String]) -> Result<(), Refusal> {
    const LISTING_LONG: [&str; 14] = [
        "all",
        "remotes",
        "verbose",
        "list",
        "show-current",
        "color",
        "no-color",
        "contains",
        "no-contains",
        "merged",
        "no-merged",
        "points-at",
        "sort",
        "format",
    ];
    let parsed = parse(
        args,
        "",
        &[
            "contains",
            "no-contains",
            "merged",
            "no-merged",
            "points-at",
            "sort",
            "format",
        ],
    );
    let mut listing = false;
    for arg in &parsed {
        match arg {
            Arg::Short(letters) => {
                if let Some(l) = letters.chars().find(|l| !"arvl".contains(*l)) {
                    return Err(format!("-{l} changes branches"));
                }
                listing |= letters.contains('l');
            }
            Arg::Long(name) => {
                if !LISTING_LONG.contains(name) {
                    return Err(format!("--{name} changes branches"));
                }
                listing |= *name == "list";
            }
            Arg::Positional(_) if !listing => {
                return Err("a branch name without --list creates a branch".to_owned());
            }
            Arg::Positional(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of the table with shapes it allows and (where it has
    /// any) shapes it refuses.
    const CASES: &[(&str, &[&str], &[&str])] = &[
        (
            "ls",
            &["ls", "ls -la src/*.rs", "ls -R | head"],
            &["ls > list.txt"],
        ),
        (
            "cat",
            &["cat a.txt b.txt", "cat *.md"],
            &["cat a > b", "cat < a"],
        ),
        ("head", &["head -n 5 README.md"], &[]),
        ("tail", &["tail -n 20 log.txt 2>&1"], &[]),
        ("wc", &["wc -l src/*.rs"], &[]),
        ("pwd", &["pwd"], &[]),
        (
            "echo",
            &["echo 'a | b; c'", "echo done >/dev/null"],
            &["echo $HOME", "echo \"$(id)\"", "echo `id`"],
        ),
        (
            "grep",
            &["grep -rn 'fn main' src", "grep -c x *.rs 2>/dev/null"],
            &[],
        ),
        ("which", &["which cargo"], &[]),
        ("stat", &["stat Cargo.toml"], &[]),
        ("du", &["du -sh ."], &[]),
        ("df", &["df -h"], &[]),
        ("whoami", &["whoami"], &[]),
        ("uname", &["uname -a"], &[]),
        ("cd", &["cd src && ls"], &["cd src && rm x"]),
        ("true", &["true"], &[]),
        (
            "file",
            &["file -b Cargo.toml", "file -m magic x"],
            &["file -C -m magic", "file --compile", "file *"],
        ),
        (
            "date",
            &["date", "date -u +%F", "date -d yesterday"],
            &["date -s 2020-01-01", "date --set=now", "date --se now"],
        ),
        (
            "tree",
            &["tree -L 2 src"],
            &[
                "tree -o out.txt",
                "tree -R -H . -o index.html",
                "tree --output=x",
            ],
        ),
        (
            "sort",
            &[
                "sort -u names.txt",
                "sort -k 2 -t , data.csv",
                "sort -t o x",
            ],
            &[
                "sort -o out.txt in.txt",
                "sort -uo out in",
                "sort --output=x in",
                "sort --compress-program=sh in",
                "sort *",
            ],
        ),
        (
            "uniq",
            &["uniq -c names.txt", "uniq -f 1 names.txt"],
            &["uniq in.txt out.txt"],
        ),
        (
            "rg",
            &["rg -n 'TODO' src", "rg --pre-glob '*.gz' x"],
            &[
                "rg --pre ./evil.sh x",
                "rg --pre=./evil.sh x",
                "rg --hostname-bin=./x y",
                "rg x *",
            ],
        ),
        (
            "find",
            &[
                "find . -name '*.rs' -type f",
                "find src -newer Cargo.toml -print",
            ],
            &[
                "find . -exec rm {} +",
                "find . -delete",
                "find . -fprint out",
                "find . -execdir sh \\;",
                "find . -ok rm {} \\;",
                "find *",
            ],
        ),
        (
            "sed",
            &[
                "sed -n '1,10p' file.txt",
                "sed 's/foo/bar/g' file.txt",
                "sed -e '/^#/d' -e 's/a/b/' f",
                "sed -n '$p' f",
            ],
            &[
                "sed -i 's/a/b/' f",
                "sed -ni 's/a/b/p' f",
                "sed --in-place 's/a/b/' f",
                "sed 's/a/b/w out' f",
                "sed 'w out' f",
                "sed 's/a/id/e' f",
                "sed '1e id' f",
                "sed -f script.sed f",
                "sed 'r /etc/passwd' f",
            ],
        ),
        (
            "git",
            &[
                "git status",
                "git log --oneline -5",
                "git diff HEAD~1 -- src",
                "git show HEAD:Cargo.toml",
                "git blame src/main.rs",
                "git branch",
                "git branch -a -v",
                "git branch --list 'feat/*'",
                "git branch --contains HEAD",
                "git -C sub status",
                "git --no-pager log",
            ],
            &[
                "git diff --output=patch.txt",
                "git log --output x",
                "git diff --ext-diff",
                "git log -p --textconv",
                "git branch -D main",
                "git branch -d old",
                "git branch -m a b",
                "git branch new-branch",
                "git branch --delete x",
                "git -c core.pager=sh log",
                "git --exec-path=. status",
                "git push",
                "git commit -m x",
                "git diff *",
            ],
        ),
    ];

    #[test]
    fn every_entry_allows_its_read_only_shapes_and_refuses_its_writers() {
        for entry in READ_ONLY {
            assert!(
                CASES.iter().any(|(program, ..)| *program == entry.program),
                "{} has no tests",
                entry.program
            );
        }
        for (program, allowed, refused) in CASES {
            assert!(
                READ_ONLY.iter().any(|e| e.program == *program),
                "{program} is not in the table"
            );
            for command in *allowed {
                assert_eq!(check(command), Ok(()), "{command}");
            }
            for command in *refused {
                assert!(check(command).is_err(), "{command} should ask");
            }
        }
    }

    #[test]
    fn other_programs_expansions_and_redirections_ask() {
        for command in [
            "rm -rf x",
            "tee out.txt",
            "ls | tee out.txt",
            "awk 'BEGIN{system(\"id\")}'",
            "xargs rm",
            "python3 -c 'print(1)'",
            "X=1 ls",
            "./ls",
            "ls; rm x",
            "ls && curl x",
            "ls || sh",
            "ls & rm x",
            "ls\nrm x",
            "ls >> log",
            "ls 2> err.txt",
            "ls >& out",
            "(rm x)",
            "echo 'unclosed",
            "ls \\",
            "cat <<< x",
        ] {
            assert!(check(command).is_err(), "{command} should ask");
        }
        // Quoted operators are arguments, not operators.
        assert_eq!(check("grep -E 'a|b;c>d' f.txt"), Ok(()));
        assert_eq!(check("echo \"a && b\""), Ok(()));
    }

    #[test]
    fn options_are_read_with_their_values() {
        let args: Vec<String> = ["-k", "2", "-uo", "x", "--key=3", "--", "-o"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            parse(&args, "ko", &["key"]),
            vec![
                Arg::Short("k"),
                Arg::Short("uo"),
                Arg::Long("key"),
                Arg::Positional("-o")
            ]
        );
    }
}

//! Derives each pattern's literal gates from its syntax tree, and checks the checked-in table against them.
//! A gate clause is a set of lowercase literals at least one of which every match must contain.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::{CATALOG, gates::GATES};

/// Largest set of whole strings tracked for a sub-expression before it is
/// demoted to a "contains one of" clause.
const MAX_EXACT: usize = 128;
/// Largest character class expanded into single-byte strings (after case
/// folding): letters and small digit sets, not `\s`.
const MAX_CLASS: usize = 4;
/// Longest literal kept in a table clause: a shorter piece of a literal is
/// implied by it, and short literals keep the automaton (built by every fresh
/// process) small.
const MAX_LITERAL: usize = 8;
/// Clauses kept per pattern; each one more makes the gate tighter and the
/// literal automaton larger.
const MAX_CLAUSES: usize = 4;

type Literals = BTreeSet<Vec<u8>>;

/// What is known about the strings a sub-expression matches.
#[derive(Debug, Clone, Default)]
struct Facts {
    /// Every string it can match, when that set is small.
    exact: Option<Literals>,
    /// Clauses every match satisfies (each: contains one of these literals).
    clauses: Vec<Literals>,
}

impl Facts {
    fn exact(set: Literals) -> Facts {
        Facts {
            exact: Some(set),
            clauses: Vec::new(),
        }
    }

    fn empty() -> Facts {
        Facts::exact(BTreeSet::from([Vec::new()]))
    }

    /// Its usable clauses, best first, without repeats.
    fn ranked(&self) -> Vec<Literals> {
        let mut all = self.clauses.clone();
        all.extend(self.exact.clone());
        let mut ranked: Vec<Literals> = Vec::new();
        for c in all.into_iter().filter_map(usable) {
            if !ranked.contains(&c) {
                ranked.push(c);
            }
        }
        // Stable: among equal scores the leftmost piece of the pattern comes first.
        ranked.sort_by_key(|c| std::cmp::Reverse(score(c)));
        ranked
    }
}

/// A clause that an empty string satisfies says nothing, and one with a
/// line break cannot be met within a line, where the scanner looks for them.
fn usable(clause: Literals) -> Option<Literals> {
    let clause = minimal(clause);
    let breaks = |l: &Vec<u8>| l.iter().any(|&b| b == b'\n' || b == b'\r');
    (!clause.is_empty() && !clause.contains(&Vec::new()) && !clause.iter().any(breaks))
        .then_some(clause)
}

/// Drops every literal that contains another one of the same clause: finding
/// the longer one implies finding the shorter, so the clause means the same.
fn minimal(clause: Literals) -> Literals {
    if clause.contains(&Vec::new()) {
        return BTreeSet::from([Vec::new()]);
    }
    let all: Vec<Vec<u8>> = clause.into_iter().collect();
    all.iter()
        .filter(|l| {
            !all.iter()
                .any(|o| o.len() < l.len() && l.windows(o.len()).any(|w| w == &o[..]))
        })
        .cloned()
        .collect()
}

/// Words so common in skills and notes that a gate on them opens on almost
/// every text, whatever their length says.
const COMMON_WORDS: &[&str] = &[
    "to", "at", "in", "is", "it", "be", "do", "on", "of", "as", "an", "or", "if", "by", "no",
    "the", "and", "not", "for", "you", "all", "any", "use", "run", "set", "get", "add", "new",
    "now", "key", "see", "with", "from", "this", "that", "your", "user", "data", "file", "home",
    "node", "show", "read", "more", "then", "will", "when", "each", "check", "local", "server",
];

/// Roughly how many bits of surprise one literal carries in ordinary text:
/// common letters little, digits and punctuation more, common words little.
fn rarity(literal: &[u8]) -> u32 {
    if COMMON_WORDS.iter().any(|w| w.as_bytes() == literal) {
        return 4;
    }
    literal
        .iter()
        .map(|&b| match b {
            b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' | b'h' | b' ' => 3,
            b'a'..=b'z' => 5,
            b'-' | b'.' | b'/' | b'_' | b'(' | b')' | b':' | b'"' | b'\'' | b'`' => 4,
            b'0'..=b'9' => 6,
            _ => 7,
        })
        .sum()
}

/// Clauses whose likeliest literal is rarer open less often; at equal rarity
/// fewer literals make a smaller automaton.
fn score(clause: &Literals) -> (u32, std::cmp::Reverse<usize>) {
    let weakest = clause.iter().map(|l| rarity(l)).min().unwrap_or(0);
    // Each doubling of the literals halves the odds of staying closed.
    let spread = usize::BITS - clause.len().leading_zeros();
    (
        weakest.saturating_sub(spread),
        std::cmp::Reverse(clause.len()),
    )
}

fn cross(a: &Literals, b: &Literals) -> Option<Literals> {
    if a.len() * b.len() > MAX_EXACT {
        return None;
    }
    Some(
        a.iter()
            .flat_map(|x| {
                b.iter().map(move |y| {
                    let mut s = x.clone();
                    s.extend_from_slice(y);
                    s
                })
            })
            .collect(),
    )
}

fn class_bytes(class: &Class) -> Option<Literals> {
    let mut bytes = BTreeSet::new();
    let mut add = |lo: u32, hi: u32| -> Option<()> {
        if hi >= 0x80 || hi - lo >= MAX_CLASS as u32 * 2 {
            return None;
        }
        for b in lo..=hi {
            bytes.insert(vec![u8::try_from(b).ok()?.to_ascii_lowercase()]);
        }
        (bytes.len() <= MAX_CLASS).then_some(())
    };
    match class {
        Class::Bytes(c) => {
            for r in c.ranges() {
                add(u32::from(r.start()), u32::from(r.end()))?;
            }
        }
        Class::Unicode(c) => {
            for r in c.ranges() {
                add(u32::from(r.start()), u32::from(r.end()))?;
            }
        }
    }
    Some(bytes)
}

fn facts(hir: &Hir) -> Facts {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Facts::empty(),
        HirKind::Literal(lit) => {
            if lit.0.is_ascii() {
                Facts::exact(BTreeSet::from([lit.0.to_ascii_lowercase()]))
            } else {
                Facts::default()
            }
        }
        HirKind::Class(class) => class_bytes(class).map(Facts::exact).unwrap_or_default(),
        HirKind::Capture(cap) => facts(&cap.sub),
        HirKind::Repetition(rep) => {
            let sub = facts(&rep.sub);
            match (rep.min, rep.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => match sub.exact {
                    Some(mut e) => {
                        e.insert(Vec::new());
                        Facts::exact(e)
                    }
                    None => Facts::default(),
                },
                (0, _) => Facts::default(),
                // At least one copy: whatever one copy must contain, the
                // whole must contain too.
                _ => Facts {
                    exact: None,
                    clauses: sub.ranked(),
                },
            }
        }
        HirKind::Concat(parts) => {
            let mut clauses = Vec::new();
            let mut acc: Literals = BTreeSet::from([Vec::new()]);
            let mut whole = true;
            for part in parts {
                let f = facts(part);
                match f.exact {
                    Some(e) => match cross(&acc, &e) {
                        Some(c) => acc = c,
                        None => {
                            whole = false;
                            clauses.push(std::mem::replace(&mut acc, e));
                        }
                    },
                    None => {
                        whole = false;
                        clauses.push(std::mem::replace(&mut acc, BTreeSet::from([Vec::new()])));
                        clauses.extend(f.clauses);
                    }
                }
            }
            if whole {
                Facts::exact(acc)
            } else {
                clauses.push(acc);
                Facts {
                    exact: None,
                    clauses,
                }
            }
        }
        HirKind::Alternation(branches) => {
            let all: Vec<Facts> = branches.iter().map(facts).collect();
            let union_exact = all.iter().try_fold(BTreeSet::new(), |mut u, f| {
                u.extend(f.exact.clone()?);
                (u.len() <= MAX_EXACT).then_some(u)
            });
            if let Some(u) = union_exact {
                return Facts::exact(u);
            }
            // Every branch must contribute a clause, or nothing is known.
            // (a1 ∧ a2) ∨ b equals (a1 ∨ b) ∧ (a2 ∨ b): the n-th clause
            // joins each branch's n-th best (its last, when it has fewer).
            let ranked: Vec<Vec<Literals>> = all.iter().map(Facts::ranked).collect();
            if ranked.iter().any(Vec::is_empty) {
                return Facts::default();
            }
            let depth = ranked
                .iter()
                .map(Vec::len)
                .max()
                .unwrap_or(0)
                .min(MAX_CLAUSES);
            let clauses = (0..depth)
                .map(|n| {
                    ranked
                        .iter()
                        .flat_map(|r| r[n.min(r.len() - 1)].iter().cloned())
                        .collect()
                })
                .collect();
            Facts {
                exact: None,
                clauses,
            }
        }
    }
}

/// The regex-syntax parser configured exactly as `super::builder` configures
/// the real regexes (byte-oriented, ASCII classes, case-insensitive).
pub(crate) fn parse(source: &str) -> Hir {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .unicode(false)
        .utf8(false)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(source)
        .unwrap()
}

/// The gate clauses of one regex: empty when it can match without any
/// literal we could name (the pattern then always runs).
pub(super) fn derive(source: &str) -> Vec<Vec<String>> {
    let mut clauses = facts(&parse(source)).ranked();
    clauses.truncate(MAX_CLAUSES);
    clauses
        .into_iter()
        .map(|c| {
            minimal(
                c.into_iter()
                    .map(|l| l[..l.len().min(MAX_LITERAL)].to_vec())
                    .collect(),
            )
        })
        .map(|c| {
            c.into_iter()
                .map(|l| String::from_utf8(l).unwrap())
                .collect()
        })
        .collect()
}

/// The table as Rust source, for regenerating `gates.rs`.
fn render() -> String {
    let mut out = String::from(
        "//! Literal gates of the catalog, generated from the patterns by `gate_derivation` (do not edit by hand).\n\
         //! Regenerate with `SKILL_GUARD_WRITE_GATES=1 cargo test -p skill-guard gate_table_is_current`.\n\n\
         /// Per catalog entry, in catalog order: its id and clauses; every match of\n\
         /// the pattern contains one literal of each clause (ASCII case ignored).\n\
         /// No clauses: the pattern always runs.\n\
         #[rustfmt::skip]\n\
         pub(crate) static GATES: &[(&str, &[&[&str]])] = &[\n",
    );
    for p in CATALOG {
        let clauses = derive(p.regex);
        let body: Vec<String> = clauses
            .iter()
            .map(|c| {
                let lits: Vec<String> = c.iter().map(|l| format!("{l:?}")).collect();
                format!("&[{}]", lits.join(", "))
            })
            .collect();
        out.push_str(&format!("    ({:?}, &[{}]),\n", p.id, body.join(", ")));
    }
    out.push_str("];\n");
    out
}

/// A tiny deterministic generator (xorshift) so the sampling is repeatable.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random string the syntax tree describes (look-arounds ignored; the
/// caller keeps only samples the real regex matches).
pub(crate) fn sample(hir: &Hir, rng: &mut Rng, out: &mut Vec<u8>) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(l) => out.extend_from_slice(&l.0),
        HirKind::Class(Class::Bytes(c)) => {
            let r = c.ranges()[rng.below(c.ranges().len() as u64) as usize];
            let span = u64::from(r.end() - r.start()) + 1;
            out.push(r.start() + rng.below(span) as u8);
        }
        HirKind::Class(Class::Unicode(c)) => {
            let r = c.ranges()[rng.below(c.ranges().len() as u64) as usize];
            let span = u64::from(r.end()) - u64::from(r.start()) + 1;
            let ch = char::from_u32(r.start() as u32 + rng.below(span) as u32).unwrap_or('x');
            let mut buf = [0; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        HirKind::Capture(c) => sample(&c.sub, rng, out),
        HirKind::Repetition(r) => {
            let extra = r.max.map_or(3, |m| (m - r.min).min(3));
            let n = r.min + rng.below(u64::from(extra) + 1) as u32;
            for _ in 0..n {
                sample(&r.sub, rng, out);
            }
        }
        HirKind::Concat(parts) => parts.iter().for_each(|p| sample(p, rng, out)),
        HirKind::Alternation(b) => sample(&b[rng.below(b.len() as u64) as usize], rng, out),
    }
}

#[cfg(test)]
mod tests {
    use regex::bytes::Regex;

    use super::*;
    use crate::catalog::builder;

    fn gates_of(source: &str) -> Vec<Vec<String>> {
        derive(source)
    }

    fn strs(v: &[&[&str]]) -> Vec<Vec<String>> {
        v.iter()
            .map(|c| c.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn gate_table_is_current() {
        let derived: Vec<(String, Vec<Vec<String>>)> = CATALOG
            .iter()
            .map(|p| (p.id.to_string(), derive(p.regex)))
            .collect();
        let table: Vec<(String, Vec<Vec<String>>)> = GATES
            .iter()
            .map(|(id, clauses)| (id.to_string(), strs(clauses)))
            .collect();
        if std::env::var_os("SKILL_GUARD_WRITE_GATES").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/catalog/gates.rs");
            std::fs::write(path, render()).unwrap();
            return;
        }
        assert!(
            derived == table,
            "src/catalog/gates.rs is stale; regenerate it with \
             SKILL_GUARD_WRITE_GATES=1 cargo test -p skill-guard gate_table_is_current"
        );
    }

    #[test]
    fn derivation_handles_optional_parts_alternations_and_anchors() {
        // Prefix literal with a word boundary.
        assert_eq!(gates_of(r"\bcurl\b"), vec![vec!["curl"]]);
        // An optional prefix is not required; the required tail is.
        assert_eq!(gates_of(r"\$?HOME\b"), vec![vec!["home"]]);
        // An alternation with an empty branch requires nothing.
        assert!(gates_of(r"(?:abc|)x").iter().all(|c| c != &["abc"]));
        assert!(gates_of(r"(?:abc|)").is_empty());
        // Case folding and escapes.
        assert_eq!(gates_of(r"\x22Login\x22"), vec![vec!["\"login\""]]);
        // A branch without literals makes the alternation useless as a gate.
        assert!(gates_of(r"foo|[a-z]+").is_empty());
        // Star-repeated pieces are optional.
        assert_eq!(gates_of(r"(?:xyz)*abc"), vec![vec!["abc"]]);
        // Pure classes repeated have no literal.
        assert!(gates_of(r"[a-z0-9+/]{200,}").is_empty());
        // Conjunction of independent required pieces, long literals cut short.
        assert_eq!(
            gates_of(r"\bwget\b[^\n]*--post-data"),
            vec![vec!["--post-d"], vec!["wget"]]
        );
        // Alternation of pieces each with its own required literal.
        assert_eq!(
            gates_of(r"^\s*(?:alpha[^\n]*|[^\n]*beta)"),
            vec![vec!["alpha", "beta"]]
        );
    }

    fn satisfies(text: &[u8], clauses: &[&[&str]]) -> bool {
        let lower = text.to_ascii_lowercase();
        clauses.iter().all(|c| {
            c.iter()
                .any(|l| lower.windows(l.len()).any(|w| w == l.as_bytes()))
        })
    }

    /// Independent of the derivation: random matches of every pattern must
    /// all carry their gate literals, or the table would hide real findings.
    #[test]
    fn gate_table_is_sound_on_sampled_matches() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut checked = 0usize;
        for (p, (id, clauses)) in CATALOG.iter().zip(GATES) {
            assert_eq!(p.id, *id);
            let hir = parse(p.regex);
            let re: Regex = builder(p.regex).build().unwrap();
            let mut matched = 0;
            for round in 0..400 {
                // Spaces satisfy word boundaries, newlines line anchors.
                let pad = if round % 2 == 0 { b' ' } else { b'\n' };
                let mut text = vec![pad];
                sample(&hir, &mut rng, &mut text);
                text.push(pad);
                if let Some(m) = re.find(&text) {
                    matched += 1;
                    assert!(
                        satisfies(&text[m.start()..m.end()], clauses),
                        "{id}: match {:?} carries none of a gate clause {clauses:?}",
                        String::from_utf8_lossy(&text[m.start()..m.end()])
                    );
                }
            }
            checked += matched;
            assert!(
                matched >= 100,
                "{id}: only {matched} samples matched; the check saw too little"
            );
        }
        assert!(
            checked > CATALOG.len() * 100,
            "only {checked} samples matched"
        );
    }
}

//! Ranked lexical retrieval over skills (BM25 with weighted fields): the
//! `skills_search` tool, `knack skills search --local`, and near-duplicate checks.
//!
//! The index is built once from a skill set (names, descriptions, tags and the
//! head of each body) and answers each query from its postings in milliseconds.

use std::collections::HashMap;

use serde::Serialize;

use crate::frontmatter::{split_frontmatter, strip_bom};
use crate::skill::{QualifiedId, Skill};
use crate::skill_set::SkillSet;

/// Characters of a body's start that are indexed: the part that says what the
/// skill does, before the long tail of examples.
pub const BODY_HEAD_CHARS: usize = 2_000;
/// Results a search returns unless asked for another number.
pub const DEFAULT_LIMIT: usize = 10;
/// Most results one search returns.
pub const MAX_LIMIT: usize = 50;

/// How much a word counts by where it stands: a name says most about a skill.
const NAME_WEIGHT: f32 = 3.0;
const TAG_WEIGHT: f32 = 2.0;
const DESCRIPTION_WEIGHT: f32 = 2.0;
const BODY_WEIGHT: f32 = 1.0;
/// BM25's usual constants: term-frequency saturation and length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Words too common to tell skills apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so", "that", "the", "their",
    "then", "this", "to", "use", "used", "using", "was", "we", "what", "when", "which", "with",
    "you", "your",
];

/// One document's text, by field.
#[derive(Debug, Clone, Copy, Default)]
pub struct SearchDoc<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub tags: &'a [String],
    pub body_head: &'a str,
}

/// A document that matched, by its position in the build order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchHit {
    pub doc: usize,
    pub score: f32,
}

/// The inverted index: for each term, the documents holding it and its
/// field-weighted frequency there.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    postings: HashMap<Box<str>, Vec<(u32, f32)>>,
    doc_len: Vec<f32>,
    avg_len: f32,
}

impl SearchIndex {
    pub fn build<'a>(docs: impl IntoIterator<Item = SearchDoc<'a>>) -> Self {
        let mut postings: HashMap<Box<str>, Vec<(u32, f32)>> = HashMap::new();
        let mut doc_len = Vec::new();
        let mut terms: HashMap<String, f32> = HashMap::new();
        // One buffer for every word: most words repeat, so a term is only
        // allocated the first time a document holds it.
        let mut word = String::new();
        for (i, doc) in docs.into_iter().enumerate() {
            terms.clear();
            let mut add = |text: &str, weight: f32| {
                for raw in raw_words(text) {
                    if !normalize_into(raw, &mut word) {
                        continue;
                    }
                    match terms.get_mut(word.as_str()) {
                        Some(tf) => *tf += weight,
                        None => {
                            terms.insert(word.clone(), weight);
                        }
                    }
                }
            };
            add(doc.name, NAME_WEIGHT);
            add(doc.description, DESCRIPTION_WEIGHT);
            for tag in doc.tags {
                add(tag, TAG_WEIGHT);
            }
            add(doc.body_head, BODY_WEIGHT);
            let doc_id = u32::try_from(i).unwrap_or(u32::MAX);
            doc_len.push(terms.values().sum());
            for (term, tf) in terms.drain() {
                match postings.get_mut(term.as_str()) {
                    Some(list) => list.push((doc_id, tf)),
                    None => {
                        postings.insert(term.into_boxed_str(), vec![(doc_id, tf)]);
                    }
                }
            }
        }
        let avg_len = if doc_len.is_empty() {
            1.0
        } else {
            (doc_len.iter().sum::<f32>() / doc_len.len() as f32).max(1.0)
        };
        Self {
            postings,
            doc_len,
            avg_len,
        }
    }

    /// How many documents the index holds.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// How rare `term` (a token as [`tokens`] makes it) is among the
    /// documents: BM25's inverse document frequency; highest for a term no
    /// document holds.
    pub fn idf(&self, term: &str) -> f32 {
        let n = self.doc_len.len() as f32;
        let df = self.postings.get(term).map_or(0, Vec::len) as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The best `limit` documents for `query`, best first (ties in build
    /// order); only documents sharing at least one word with the query.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let n = self.doc_len.len();
        if n == 0 || limit == 0 {
            return Vec::new();
        }
        let mut words: Vec<String> = tokens(query).collect();
        words.sort();
        words.dedup();
        let mut scores = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for word in &words {
            let Some(list) = self.postings.get(word.as_str()) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let d = doc as usize;
                let norm = K1 * (1.0 - B + B * self.doc_len[d] / self.avg_len);
                if scores[d] == 0.0 {
                    touched.push(doc);
                }
                scores[d] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let mut hits: Vec<SearchHit> = touched
            .into_iter()
            .map(|doc| SearchHit {
                doc: doc as usize,
                score: scores[doc as usize],
            })
            .filter(|h| h.score > 0.0)
            .collect();
        let order = |a: &SearchHit, b: &SearchHit| {
            b.score.total_cmp(&a.score).then_with(|| a.doc.cmp(&b.doc))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits
    }
}

/// The words of `text` as the index compares them: lower case, split at
/// anything but letters and digits, common words dropped, plural and verb
/// endings trimmed so "deploys" finds "deploy".
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    raw_words(text).filter_map(|raw| {
        let mut word = String::new();
        normalize_into(raw, &mut word).then_some(word)
    })
}

/// `text` split at anything but letters and digits, words of two bytes or more.
fn raw_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
}

/// Writes the index form of `raw` into `out` (lower case, stemmed); false
/// when it is a stopword.
fn normalize_into(raw: &str, out: &mut String) -> bool {
    out.clear();
    if raw.is_ascii() {
        out.push_str(raw);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&raw.to_lowercase());
    }
    if STOPWORDS.contains(&out.as_str()) {
        return false;
    }
    stem(out);
    true
}

fn stem(word: &mut String) {
    let len = word.chars().count();
    for (suffix, min_len, replacement) in
        [("ies", 5, "y"), ("ing", 6, ""), ("ed", 5, ""), ("s", 4, "")]
    {
        if len >= min_len && word.ends_with(suffix) && !word.ends_with("ss") {
            word.truncate(word.len() - suffix.len());
            word.push_str(replacement);
            break;
        }
    }
}

/// The head of a skill's body (after the frontmatter), at most
/// `BODY_HEAD_CHARS` characters; empty when the file cannot be read.
pub fn body_head(skill: &Skill) -> String {
    let Ok(text) = std::fs::read_to_string(&skill.path) else {
        return String::new();
    };
    let text = strip_bom(&text);
    let body = match split_frontmatter(text) {
        Ok(Some((_, offset))) => &text[offset..],
        _ => text,
    };
    body.chars().take(BODY_HEAD_CHARS).collect()
}

/// A search index over the skills a model may be offered (visible, not
/// manual-only), remembering which skill each document is.
#[derive(Debug, Clone, Default)]
pub struct SkillSearch {
    index: SearchIndex,
    /// The qualified id of each document, in build order.
    skills: Vec<String>,
}

/// One result as `skills_search` answers it (CONTRACT).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult<'a> {
    pub name: &'a str,
    pub id: &'a str,
    pub qualified_id: QualifiedId<'a>,
    pub description: &'a str,
    pub score: f32,
}

impl SkillSearch {
    /// Indexes the skills of `set` the model may see; bodies are read from
    /// disk once, here.
    pub fn from_skill_set(set: &SkillSet) -> Self {
        let skills: Vec<&Skill> = set
            .visible()
            .into_iter()
            .filter(|s| s.frontmatter.model_invocable())
            .collect();
        let heads: Vec<String> = skills.iter().map(|s| body_head(s)).collect();
        let index = SearchIndex::build(skills.iter().zip(&heads).map(|(s, head)| SearchDoc {
            name: &s.name,
            description: &s.description,
            tags: &s.frontmatter.tags,
            body_head: head,
        }));
        Self {
            index,
            skills: skills.iter().map(|s| s.qualified_id()).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The index itself, for callers that weigh words by their rarity.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// The best `limit` skills of `set` (the set this search was built
    /// from) for `query`, with their raw scores, best first.
    pub fn skills<'a>(
        &self,
        set: &'a SkillSet,
        query: &str,
        limit: usize,
    ) -> Vec<(&'a Skill, f32)> {
        self.index
            .search(query, limit)
            .into_iter()
            .filter_map(|hit| Some((set.by_qualified_id(&self.skills[hit.doc])?, hit.score)))
            .collect()
    }

    /// The best `limit` skills of `set` (the set this search was built from)
    /// for `query`.
    pub fn search<'a>(
        &self,
        set: &'a SkillSet,
        query: &str,
        limit: usize,
    ) -> Vec<SearchResult<'a>> {
        self.index
            .search(query, limit.clamp(1, MAX_LIMIT))
            .into_iter()
            .filter_map(|hit| {
                let skill = set.by_qualified_id(&self.skills[hit.doc])?;
                Some(SearchResult {
                    name: &skill.name,
                    id: &skill.id,
                    qualified_id: skill.qualified(),
                    description: skill.listed_description(),
                    score: (hit.score * 1000.0).round() / 1000.0,
                })
            })
            .collect()
    }
}

/// `skills_search {query, limit?}` as JSON (CONTRACT): `{success, results}`.
pub fn skills_search_json(
    search: &SkillSearch,
    set: &SkillSet,
    query: &str,
    limit: Option<usize>,
) -> serde_json::Value {
    let query = query.trim();
    if query.is_empty() {
        return serde_json::json!({
            "success": false,
            "error": "the query is empty",
            "hint": "Describe the task in a few words, e.g. 'convert a PDF to text'.",
        });
    }
    let results = search.search(set, query, limit.unwrap_or(DEFAULT_LIMIT));
    let mut out = serde_json::json!({"success": true, "results": results});
    if results.is_empty() {
        out["message"] = serde_json::Value::String(format!(
            "No skill matches '{query}'. Try other words, or skills_list to browse."
        ));
    } else {
        out["hint"] = serde_json::Value::String("Load a result with skill_view(name).".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(name: &'a str, description: &'a str, body: &'a str) -> SearchDoc<'a> {
        SearchDoc {
            name,
            description,
            tags: &[],
            body_head: body,
        }
    }

    #[test]
    fn tokens_are_lowered_split_and_stemmed() {
        let words: Vec<String> =
            tokens("Deploys the K8s-cluster; USING Terraform's modules").collect();
        assert_eq!(words, ["deploy", "k8s", "cluster", "terraform", "module"]);
        let words: Vec<String> = tokens("café résumés").collect();
        assert_eq!(words, ["café", "résumé"]);
    }

    #[test]
    fn names_outrank_bodies_and_rare_words_outrank_common_ones() {
        let index = SearchIndex::build([
            doc("pdf-tools", "Read and fill PDF forms", "steps for files"),
            doc(
                "spreadsheet",
                "Edit sheets",
                "sometimes a pdf export of files",
            ),
            doc("notes", "Take notes", "files and more files"),
        ]);
        let hits = index.search("pdf", 10);
        assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 1]);
        assert!(hits[0].score > hits[1].score);
        // A word every document has adds little; the rare one decides.
        let hits = index.search("notes files", 3);
        assert_eq!(hits[0].doc, 2);
    }

    #[test]
    fn limits_ties_and_misses() {
        let index = SearchIndex::build([doc("a-b", "same", ""), doc("c-d", "same", "")]);
        let hits = index.search("same", 1);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].doc, 0, "ties keep build order");
        assert!(index.search("nothing here", 5).is_empty());
        assert!(index.search("same", 0).is_empty());
        assert!(SearchIndex::build([]).search("x", 3).is_empty());
    }
}

//! "Did you mean …?" for names the user typed: the closest known name by a
//! fuzzy match (nucleo, as the palette ranks), else by a small edit distance.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// The known name closest to `typed`, if any is close enough to be a typo.
pub fn closest<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let known: Vec<&str> = known.into_iter().collect();
    if let Some(name) = closest_by_edits(typed, known.iter().copied()) {
        return Some(name);
    }
    // Letters left out (`relnotes` for `release-notes`) match as a subsequence;
    // short queries match too much to be a useful suggestion.
    if typed.chars().count() < 4 {
        return None;
    }
    let mut matcher = Matcher::new(Config::DEFAULT);
    let pattern = Pattern::parse(typed, CaseMatching::Ignore, Normalization::Smart);
    let mut buf = Vec::new();
    known
        .iter()
        .filter_map(|name| {
            let score = pattern.score(Utf32Str::new(name, &mut buf), &mut matcher)?;
            Some((score, *name))
        })
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(a.1)))
        .map(|(_, name)| name)
}

/// The known name a few edits from `typed`: the typo people make most (a
/// swapped, missing or wrong letter). Alone, without the fuzzy match, for
/// names that share most of their letters (session ids share their date).
pub fn closest_by_edits<'a>(
    typed: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let typed_lower = typed.to_lowercase();
    let max_edits = (typed.chars().count() / 4).clamp(1, 3);
    known
        .into_iter()
        .map(|name| (edit_distance(&typed_lower, &name.to_lowercase()), name))
        .filter(|(d, _)| *d <= max_edits)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, name)| name)
}

/// "did you mean 'x'?" for the known name closest to `typed`, else `otherwise`
/// (usually the command that lists the names), for the end of an error.
pub fn did_you_mean<'a>(
    typed: &str,
    known: impl IntoIterator<Item = &'a str>,
    otherwise: &str,
) -> String {
    match closest(typed, known) {
        Some(name) => format!("did you mean '{name}'?"),
        None => otherwise.to_owned(),
    }
}

/// The end of a "no such skill" error: the closest skill name, else where to
/// look. An id (`devops/deploy`, `user:devops/deploy`) is compared by its name.
pub fn skill_hint(set: &skill_core::SkillSet, typed: &str) -> String {
    let visible = set.visible();
    let bare = typed.rsplit(['/', ':']).next().unwrap_or(typed);
    did_you_mean(
        bare,
        visible.iter().map(|s| s.name.as_str()),
        "`knack skills list` shows every skill",
    )
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_and_left_out_letters_find_the_name() {
        let names = ["release-notes", "code-review", "deploy-k8s"];
        assert_eq!(closest("relase-notes", names), Some("release-notes"));
        assert_eq!(closest("code-reveiw", names), Some("code-review"));
        assert_eq!(closest("relnotes", names), Some("release-notes"));
        assert_eq!(closest("no-such-skill", names), None);
        assert_eq!(closest("zz", names), None);
    }

    #[test]
    fn the_hint_names_the_closest_or_says_where_to_look() {
        let names = ["release-notes", "code-review"];
        assert_eq!(
            did_you_mean("code-reveiw", names, "see the list"),
            "did you mean 'code-review'?"
        );
        assert_eq!(
            did_you_mean("zzzzzz", names, "see the list"),
            "see the list"
        );
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}

//! Warnings: input rt-app accepts and ignores (an unknown key, a `resume` nobody waits for),
//! which schedlab reads as rt-app does but reports, because it is often a typo. `--strict`
//! turns them into errors (`Warning::into_error`).

use std::fmt;

use schedlab_base::error::InputError;

/// Something the reader ignored or found to have no effect, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file, as `InputError::file`.
    pub file: String,
    /// The JSON path, as `InputError::place`.
    pub place: String,
    /// What was found there, e.g. `unknown key "frag"`.
    pub found: String,
    /// What schedlab (and rt-app) does with it, e.g. `ignored, as rt-app ignores it`.
    pub effect: String,
    /// What an error under `--strict` says was expected.
    pub expected: String,
    /// A known key close to the unknown one ("did you mean …").
    pub suggestion: Option<String>,
}

impl Warning {
    /// The error `--strict` makes of this warning.
    pub fn into_error(self) -> InputError {
        let found = match &self.suggestion {
            Some(s) => format!("{} (did you mean {s:?}?)", self.found),
            None => self.found,
        };
        InputError::new(
            self.file,
            self.place,
            format!("{} (--strict)", self.expected),
            found,
        )
    }
}

use schedlab_base::error::OneLine;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: warning: {} {}",
            OneLine(&self.file),
            OneLine(&self.place),
            OneLine(&self.found),
            self.effect
        )?;
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean {s:?}?")?;
        }
        Ok(())
    }
}

/// The candidate closest to `word` by edit distance, if it is close enough to be a likely
/// typo: at most one edit for words of up to four characters, two for longer ones (the
/// bound rustc and git use for their suggestions is of the same order). Ties go to the
/// earlier candidate, so the answer does not depend on anything but the list's order.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = if word.chars().count() <= 4 { 1 } else { 2 };
    let mut best: Option<(usize, &str)> = None;
    for &c in candidates {
        let d = edit_distance(word, c);
        if d <= limit && best.map_or(true, |(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance over characters counting insertions, deletions, substitutions and swaps of
/// two neighbours (the optimal-string-alignment variant of Damerau–Levenshtein: `mdoe` is
/// one edit from `mode`), with three rows of memory.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j - 1] + cost).min(prev[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("slep", "sleep"), 1);
        assert_eq!(edit_distance("sleep", "slep"), 1);
        assert_eq!(edit_distance("prority", "priority"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("frag", ""), 4);
        assert_eq!(edit_distance("mdoe", "mode"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn suggests_only_close_candidates() {
        let keys = ["duration", "calibration", "ftrace", "instance", "sleep"];
        assert_eq!(did_you_mean("duraton", &keys), Some("duration"));
        assert_eq!(did_you_mean("instances", &keys), Some("instance"));
        assert_eq!(did_you_mean("slep", &keys), Some("sleep"));
        assert_eq!(did_you_mean("frag", &keys), None);
        assert_eq!(did_you_mean("xyz", &keys), None);
    }

    #[test]
    fn strict_error_names_the_key_and_the_suggestion() {
        let w = Warning {
            file: "f.json".into(),
            place: "global.duraton".into(),
            found: "unknown key \"duraton\"".into(),
            effect: "ignored, as rt-app ignores it".into(),
            expected: "a global key".into(),
            suggestion: Some("duration".into()),
        };
        assert_eq!(
            w.to_string(),
            "f.json: global.duraton: warning: unknown key \"duraton\" ignored, as rt-app \
             ignores it; did you mean \"duration\"?"
        );
        let e = w.into_error();
        assert_eq!(e.place, "global.duraton");
        assert!(e.found.contains("\"duraton\"") && e.found.contains("duration"));
        assert!(e.expected.contains("--strict"));
    }
}

//! Warnings: input rt-app accepts and ignores (an unknown key, a `resume` nobody waits for),
//! which schedlab reads as rt-app does but reports, because it is often a typo. `--strict`
//! turns them into errors (`Warning::into_error`).

use std::fmt;

use crate::error::InputError;

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

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: warning: {} {}",
            self.file, self.place, self.found, self.effect
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
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over characters (insertions, deletions, substitutions), with one
/// row of memory.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb))
                .min(above + 1)
                .min(row[j] + 1);
            diag = above;
        }
    }
    row[b.len()]
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

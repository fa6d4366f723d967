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

#[cfg(test)]
mod tests {
    use super::*;

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

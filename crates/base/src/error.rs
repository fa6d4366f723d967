//! Errors that user input can cause. Every one names the file, the place in it, what was
//! expected and what was found, and maps to exit code 2 in the command line.

use std::fmt;

/// A problem with something the user gave us: a workload, a platform, an experiment or a
/// `--set` switch. Displayed as one line:
/// `FILE: PLACE: expected EXPECTED, found FOUND`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (or `--set`, `-` for standard input, `<preset NAME>`).
    pub file: String,
    /// Where in it: a JSON path such as `tasks.thread0.phases.p1.run`, `line 3 column 7`, a key.
    pub place: String,
    /// What was expected there.
    pub expected: String,
    /// What was found instead.
    pub found: String,
}

impl InputError {
    pub fn new(
        file: impl Into<String>,
        place: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        InputError {
            file: file.into(),
            place: place.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// `s` with its control characters escaped (`\n`, `\u{1b}`), so that a message is one line
/// whatever a file's keys and values hold.
pub struct OneLine<'a>(pub &'a str);

impl fmt::Display for OneLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_debug())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: expected {}, found {}",
            OneLine(&self.file),
            OneLine(&self.place),
            OneLine(&self.expected),
            OneLine(&self.found)
        )
    }
}

impl std::error::Error for InputError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_one_line_whatever_it_quotes() {
        let e = InputError::new("w.json", "tasks.a\nb", "a task", "`x\ty\r\u{1b}[31m`");
        let line = e.to_string();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains("tasks.a\\nb"), "{line}");
    }
}

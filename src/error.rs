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

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: expected {}, found {}",
            self.file, self.place, self.expected, self.found
        )
    }
}

impl std::error::Error for InputError {}

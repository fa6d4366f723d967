//! Command-line words, for the command line (`main.rs`) and the generator invocations of
//! experiment files (`gen::generate`): values that start with `-` are read as values, and
//! clap's errors become one line saying what was expected and what was found.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Command;
use std::any::TypeId;

/// `cmd` and its subcommands with every option value allowed to be a negative number
/// (`--seed -1`, `gen fio --service-time -5`), and the text options to start with `-` at all
/// (`--duration -1s`): the value's own check then says what is wrong with it, instead of
/// clap taking it for an unknown flag.
pub fn lenient(cmd: Command) -> Command {
    cmd.mut_args(|a| {
        if !a.get_action().takes_values() {
            return a;
        }
        let text =
            a.get_long().is_some() && a.get_value_parser().type_id() == TypeId::of::<String>();
        a.allow_negative_numbers(true).allow_hyphen_values(text)
    })
    .mut_subcommands(lenient)
}

/// Clap's error `e` for the `words` given to `cmd` (the program's name first unless `cmd`
/// has none) as `(what, expected, found)`: what is the option or the command it is about;
/// `None` for `--help` and `--version`, which print their text.
pub fn error_parts(
    cmd: &Command,
    words: &[String],
    e: &clap::Error,
) -> Option<(String, String, String)> {
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        _ => None,
    };
    let list = |k: ContextKind| match e.get(k) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    let (sub, path) = subcommand(cmd, words);
    // The option, without its value name (`--seed <SEED>` → `--seed`).
    let arg = || {
        text(ContextKind::InvalidArg)
            .map(|a| a.split_whitespace().next().unwrap_or_default().to_string())
            .unwrap_or_else(|| path.clone())
    };
    let suggestion =
        |k: ContextKind| text(k).map_or(String::new(), |s| format!(" (did you mean {s:?}?)"));
    let quoted = |s: Option<String>| s.map_or("nothing".to_string(), |v| format!("{v:?}"));
    Some(match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => return None,
        ErrorKind::InvalidValue => {
            let valid = list(ContextKind::ValidValue);
            let expected = if valid.is_empty() {
                "a value".to_string()
            } else {
                format!("one of {}", valid.join(", "))
            };
            let found =
                quoted(text(ContextKind::InvalidValue)) + &suggestion(ContextKind::SuggestedValue);
            (arg(), expected, found)
        }
        ErrorKind::ValueValidation => {
            let name = arg();
            let source = std::error::Error::source(e)
                .map(ToString::to_string)
                .unwrap_or_default();
            let expected = expected_value(sub, &name, &source);
            (name, expected, quoted(text(ContextKind::InvalidValue)))
        }
        ErrorKind::InvalidSubcommand
        | ErrorKind::MissingSubcommand
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            if sub.has_subcommands() =>
        {
            let names: Vec<&str> = sub.get_subcommands().map(Command::get_name).collect();
            let given = text(ContextKind::InvalidSubcommand);
            let near = given
                .as_deref()
                .and_then(|g| schedlab_base::place::did_you_mean(g, &names));
            let found = match near {
                Some(n) => format!("{} (did you mean {n:?}?)", quoted(given)),
                None => quoted(given),
            };
            (path, format!("a command: {}", names.join(", ")), found)
        }
        ErrorKind::UnknownArgument => {
            let found =
                quoted(text(ContextKind::InvalidArg)) + &suggestion(ContextKind::SuggestedArg);
            let help = if path == "command line" {
                cmd.get_name()
            } else {
                &path
            };
            (
                path.clone(),
                format!("one of its options and arguments (`{help} --help`)"),
                found,
            )
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = list(ContextKind::InvalidArg).join(", ");
            (path, missing, "nothing".to_string())
        }
        ErrorKind::ArgumentConflict => {
            let other = text(ContextKind::PriorArg).unwrap_or_default();
            let other = other.split_whitespace().next().unwrap_or_default();
            (arg(), format!("not with {other}"), "both".to_string())
        }
        _ => {
            // The first line of clap's message, without its `error: `.
            let message = e.kind().as_str().map_or_else(
                || {
                    let rendered = e.render().to_string();
                    let first = rendered.lines().next().unwrap_or_default();
                    first.trim_start_matches("error: ").to_string()
                },
                str::to_string,
            );
            let help = if path == "command line" {
                cmd.get_name()
            } else {
                &path
            };
            (
                arg(),
                format!("a valid command line (`{help} --help`)"),
                message,
            )
        }
    })
}

/// The subcommand the words name (its deepest) and how it is typed (`schedlab gen fio`;
/// `command line` for the program itself).
fn subcommand<'c>(cmd: &'c Command, words: &[String]) -> (&'c Command, String) {
    let mut sub = cmd;
    let mut path = cmd.get_name().to_string();
    let mut named = cmd.is_no_binary_name_set();
    for w in words.iter().skip(usize::from(!cmd.is_no_binary_name_set())) {
        match sub.find_subcommand(w) {
            Some(s) => {
                sub = s;
                path = format!("{path} {w}");
                named = true;
            }
            None if w.starts_with('-') => {}
            None => break,
        }
    }
    if !named {
        path = "command line".to_string();
    }
    (sub, path)
}

/// What a value that failed its check should have been: the range the check names
/// (`5 is not in 1..=4`), else what its type holds.
fn expected_value(sub: &Command, name: &str, source: &str) -> String {
    if let Some((_, range)) = source.split_once(" is not in ") {
        return format!("an integer {range}");
    }
    let long = name.trim_start_matches('-');
    let arg = sub
        .get_arguments()
        .find(|a| a.get_long() == Some(long) || a.get_id() == long);
    let ty = arg.map(|a| a.get_value_parser().type_id());
    let is = |t: TypeId| ty.is_some_and(|ty| ty == t);
    let range = if is(TypeId::of::<u64>()) || is(TypeId::of::<usize>()) {
        format!("0..={}", u64::MAX)
    } else if is(TypeId::of::<u32>()) {
        format!("0..={}", u32::MAX)
    } else if is(TypeId::of::<i32>()) {
        format!("{}..={}", i32::MIN, i32::MAX)
    } else if is(TypeId::of::<i64>()) {
        format!("{}..={}", i64::MIN, i64::MAX)
    } else if is(TypeId::of::<f64>()) {
        return "a number".to_string();
    } else if is(TypeId::of::<bool>()) {
        return "true or false".to_string();
    } else {
        return format!("a valid value ({source})");
    };
    // A bounded parser says its range only of a number outside it; ask it with one.
    match arg.and_then(|a| range_of(a, &range)) {
        Some(r) => format!("an integer {r}"),
        None => format!("an integer {range}"),
    }
}

/// The range a bounded integer option's parser accepts, found by giving it the ends of its
/// type's range (`type_range`, `LO..=HI`): one outside it is refused with the range.
fn range_of(arg: &clap::Arg, type_range: &str) -> Option<String> {
    let (lo, hi) = type_range.split_once("..=")?;
    let probe = clap::Arg::new("probe")
        .long("probe")
        .allow_negative_numbers(true)
        .value_parser(arg.get_value_parser().clone());
    let cmd = Command::new("probe").no_binary_name(true).arg(probe);
    for end in [lo, hi] {
        let word = format!("--probe={end}");
        if let Err(e) = cmd.clone().try_get_matches_from([word]) {
            let source = std::error::Error::source(&e)
                .map(ToString::to_string)
                .unwrap_or_default();
            if let Some((_, range)) = source.split_once(" is not in ") {
                return Some(range.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug)]
    #[command(name = "prog")]
    struct Cli {
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
        runs: Option<u64>,
        #[arg(long)]
        duration: Option<String>,
        #[arg(long, value_parser = ["text", "dat"])]
        format: Option<String>,
    }

    fn parse(words: &[&str]) -> Result<Cli, (String, String, String)> {
        use clap::{CommandFactory, FromArgMatches};
        let cmd = lenient(Cli::command());
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        cmd.clone()
            .try_get_matches_from(&words)
            .and_then(|m| Cli::from_arg_matches(&m))
            .map_err(|e| error_parts(&cmd, &words, &e).expect("not help"))
    }

    #[test]
    fn negative_values_are_values() {
        let cli = parse(&["prog", "--duration", "-1s"]).unwrap();
        assert_eq!(cli.duration.as_deref(), Some("-1s"));
        let (what, expected, found) = parse(&["prog", "--seed", "-1"]).unwrap_err();
        assert_eq!(what, "--seed");
        assert_eq!(expected, "an integer 0..=18446744073709551615");
        assert_eq!(found, "\"-1\"");
    }

    #[test]
    fn errors_say_the_range_and_the_value() {
        let (_, expected, found) = parse(&["prog", "--runs", "x"]).unwrap_err();
        assert_eq!(
            (expected.as_str(), found.as_str()),
            ("an integer 1..=1000", "\"x\"")
        );
        let (_, expected, _) = parse(&["prog", "--runs", "5000"]).unwrap_err();
        assert_eq!(expected, "an integer 1..=1000");
        let (what, expected, found) = parse(&["prog", "--format", "txt"]).unwrap_err();
        assert_eq!(what, "--format");
        assert_eq!(expected, "one of text, dat");
        assert!(found.starts_with("\"txt\""), "{found}");
        let (what, _, found) = parse(&["prog", "--frob"]).unwrap_err();
        assert_eq!(what, "command line");
        assert_eq!(found, "\"--frob\"");
    }
}

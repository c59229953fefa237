//! `SubscribedTopicRegex` (KIP-848): Kafka evaluates it with RE2/J, as a full match of the
//! topic name (`Matcher.matches()`). Cohort uses the engine of the `regex` crate
//! (`regex-automata`), whose syntax is RE2's and whose matching is linear-time too. The
//! differences that matter, and what is done about each:
//!
//! | construct                                | RE2/J                      | here                          |
//! |------------------------------------------|----------------------------|-------------------------------|
//! | full match                               | `matches()`                | the pattern wrapped in `^(?:…)$` |
//! | `\d \w \s \b`                            | ASCII                      | Unicode, which matches the same topic names: they are ASCII only (`[a-zA-Z0-9._-]`) |
//! | `\Q…\E` literal quoting                  | supported                  | rejected: INVALID_REGULAR_EXPRESSION |
//! | `\C` (any byte)                          | supported                  | rejected                      |
//! | flags beyond `i m s U` (`x`, `u`, `R`)     | syntax error               | rejected, as RE2/J does       |
//! | class set operations `&&` `--` `~~` in `[…]` | literal characters         | rejected rather than given another meaning |
//! | `\pN`, `\p{Greek}`, `[[:alpha:]]`, `(?P<n>…)` | supported                  | supported                     |
//!
//! Patterns are also bounded: `MAX_PATTERN_BYTES` and the compiled size limit below, so a
//! hostile pattern cannot make `decide` slow or large.

use regex_automata::meta::Regex;

/// Longest pattern accepted.
pub const MAX_PATTERN_BYTES: usize = 1024;
/// Bound on the compiled program (the engine's own size limit), far below its default.
const MAX_COMPILED_BYTES: usize = 1 << 20;

/// A compiled topic pattern.
#[derive(Clone, Debug)]
pub struct TopicRegex(Regex);

impl TopicRegex {
    /// Compiles `pattern`; the error is the message for INVALID_REGULAR_EXPRESSION.
    pub fn new(pattern: &str) -> Result<TopicRegex, String> {
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(format!(
                "The regular expression is longer than {MAX_PATTERN_BYTES} bytes."
            ));
        }
        if let Some(construct) = unsupported_construct(pattern) {
            return Err(format!(
                "SubscribedTopicRegex `{pattern}` is not a valid regular expression: {construct} is not RE2/J syntax."
            ));
        }
        let anchored = format!("^(?:{pattern})$");
        Regex::builder()
            .configure(Regex::config().nfa_size_limit(Some(MAX_COMPILED_BYTES)))
            .build(&anchored)
            .map(TopicRegex)
            .map_err(|e| {
                format!("SubscribedTopicRegex `{pattern}` is not a valid regular expression: {e}.")
            })
    }

    pub fn matches(&self, topic: &str) -> bool {
        self.0.is_match(topic)
    }
}

/// The constructs whose meaning differs from RE2/J's (see the module table).
fn unsupported_construct(pattern: &str) -> Option<&'static str> {
    let bytes = pattern.as_bytes();
    let mut in_class = false;
    // Whether the previous token was a repetition operator: RE2/J refuses `a**`, `a+*`,
    // `a{2}*` ("bad repetition operator") where the `regex` crate accepts them.
    let mut after_repetition = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if !in_class {
            let repetition_end = match b {
                b'*' | b'+' | b'?' => Some(i + 1),
                b'{' => counted_repetition_end(bytes, i),
                _ => None,
            };
            if let Some(mut end) = repetition_end {
                if after_repetition {
                    return Some("a nested repetition operator");
                }
                if bytes.get(end) == Some(&b'?') {
                    end += 1; // the non-greedy form of the same operator
                }
                after_repetition = true;
                i = end;
                continue;
            }
        }
        after_repetition = false;
        match b {
            b'\\' => {
                match bytes.get(i + 1) {
                    Some(b'Q') | Some(b'E') => return Some("\\Q...\\E quoting"),
                    Some(b'C') => return Some("\\C"),
                    _ => {}
                }
                i += 2;
                continue;
            }
            b'[' if !in_class => in_class = true,
            b']' if in_class => in_class = false,
            b'&' | b'-' | b'~' if in_class && bytes.get(i + 1) == Some(&b) => {
                return Some("a character class set operation");
            }
            b'(' if !in_class && bytes.get(i + 1) == Some(&b'?') => {
                // Flags groups: (?flags) or (?flags:...); named groups (?P<..>) are fine.
                let mut j = i + 2;
                while let Some(&f) = bytes.get(j) {
                    match f {
                        b'i' | b'm' | b's' | b'U' | b'-' => j += 1,
                        b':' | b')' => break,
                        b'P' | b'<' if j == i + 2 => break,
                        _ => return Some("this group flag"),
                    }
                }
                // The `?` of `(?` is not a repetition operator.
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index just past a counted repetition `{n}`, `{n,}` or `{n,m}` starting at `open`;
/// `None` when the brace is a literal (as RE2 reads `a{`, `a{x}`).
fn counted_repetition_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut j = open + 1;
    let digits = |j: &mut usize| {
        let start = *j;
        while bytes.get(*j).is_some_and(u8::is_ascii_digit) {
            *j += 1;
        }
        *j > start
    };
    if !digits(&mut j) {
        return None;
    }
    if bytes.get(j) == Some(&b',') {
        j += 1;
        digits(&mut j);
    }
    (bytes.get(j) == Some(&b'}')).then_some(j + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_whole_topic_names_as_re2j_matches() {
        let r = TopicRegex::new("orders-.*").unwrap();
        assert!(r.matches("orders-eu"));
        assert!(!r.matches("old-orders-eu"), "a full match, not a search");
        let r = TopicRegex::new("a|b").unwrap();
        assert!(r.matches("a") && r.matches("b") && !r.matches("ab"));
        assert!(TopicRegex::new("(?i)ORDERS").unwrap().matches("orders"));
        assert!(TopicRegex::new("t\\d+").unwrap().matches("t42"));
        assert!(TopicRegex::new("(?P<x>a)b").unwrap().matches("ab"));
    }

    #[test]
    fn rejects_bad_patterns_and_constructs_re2j_reads_otherwise() {
        for bad in [
            "(",
            "[a",
            "a**",
            "a+*",
            "a{2}*",
            "a*??",
            "\\Qa.b\\E",
            "\\C",
            "(?x)a b",
            "[a&&b]",
            "[a--b]",
            "x{1001}{1001}",
        ] {
            assert!(TopicRegex::new(bad).is_err(), "{bad}");
        }
        assert!(TopicRegex::new(&"a".repeat(MAX_PATTERN_BYTES + 1)).is_err());
        // Non-greedy operators, flags and counted repetitions are not nested repetitions.
        for good in ["a*?b", "a+?", "(?i)a?", "(?:ab)*c+", "a{2,3}?b", "x{2}y*"] {
            assert!(TopicRegex::new(good).is_ok(), "{good}");
        }
        // A literal '-' or '&' in a class is fine.
        assert!(TopicRegex::new("[a-z&]+").unwrap().matches("ab&c"));
    }
}
